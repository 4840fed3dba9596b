"""Generic traversals of the AST, for the linter's rules and the interpreter alike.

Everything here reads one layout per node class, taken from the dataclass
fields of `prose.syntax.nodes` (a field holds nodes when its annotation names
a node class), so a new node class needs no change here. `children(node)`
yields the nodes in a node's fields, in field order. A *body* is a field
annotated `tuple[Stmt, ...]`: the statements of a block; `child_bodies` and
the statement walks go from body to body.
"""

from __future__ import annotations

import types
import typing
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from prose.source import Span
from prose.syntax import nodes as n


@dataclass(frozen=True, slots=True)
class _Field:
    """A field of a node class that may hold nodes."""

    name: str
    many: bool  # a tuple of them
    mixed: bool  # a tuple that holds text too (`String.parts`)
    body: bool  # a tuple of statements


N = TypeVar("N", bound=n.Node)

_LAYOUTS: dict[type[n.Node], tuple[_Field, ...]] = {}


def _layout(cls: type[n.Node]) -> tuple[_Field, ...]:
    """The fields of `cls` that may hold nodes, in field order (computed once per class)."""
    found = _LAYOUTS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        found = _LAYOUTS[cls] = tuple(
            layout for layout in (_field(field.name, hints[field.name]) for field in fields(cls))
            if layout is not None
        )
    return found


def _field(name: str, hint: object) -> _Field | None:
    options = [arg for arg in _union(hint) if arg is not type(None)]
    sequences = [arg for arg in options if typing.get_origin(arg) is tuple]
    if sequences:
        items = [item for sequence in sequences for item in typing.get_args(sequence)
                 if item is not Ellipsis]
        if not any(_is_node(option) for item in items for option in _union(item)):
            return None
        mixed = not all(_is_node(option) for item in items for option in _union(item))
        body = all(item == n.Stmt for item in items)
        return _Field(name, True, mixed, body)
    if any(_is_node(option) for option in options):
        return _Field(name, False, False, False)
    return None


def _union(hint: object) -> tuple[object, ...]:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return typing.get_args(hint)
    return (hint,)


def _is_node(hint: object) -> bool:
    return isinstance(hint, type) and issubclass(hint, n.Node)


def children(node: n.Node) -> Iterator[n.Node]:
    """The nodes directly inside `node`, in field order (a tuple field's items in order)."""
    for layout in _layout(type(node)):
        value = getattr(node, layout.name)
        if value is None:
            continue
        if not layout.many:
            yield value
        elif layout.mixed:
            yield from (item for item in value if isinstance(item, n.Node))
        else:
            yield from value


# Node class -> its node-holding fields, last first, each with how it holds them (_ONE,
# _MANY, _MIXED): `find_all` pushes them on its stack in that order, so that it pops them
# in field order. The rules search every program many times: this is their inner loop.
_ONE, _MANY, _MIXED = 0, 1, 2
_PUSH_ORDER: dict[type, tuple[tuple[str, int], ...]] = {}


def _push_order(cls: type[n.Node]) -> tuple[tuple[str, int], ...]:
    found = _PUSH_ORDER[cls] = tuple(
        (layout.name, _MIXED if layout.mixed else _MANY if layout.many else _ONE)
        for layout in reversed(_layout(cls)))
    return found


def find_all(node: n.Node, cls: type[N] | tuple[type[N], ...]) -> Iterator[N]:
    """Every node of class `cls` in the tree under `node` (itself included), depth first,
    in field order (Jinja's `Node.find_all`)."""
    stack: list[n.Node] = [node]
    push, push_all, pop = stack.append, stack.extend, stack.pop
    while stack:
        current = pop()
        if isinstance(current, cls):
            yield current
        order = _PUSH_ORDER.get(type(current))
        if order is None:
            order = _push_order(type(current))
        for name, holds in order:
            value = getattr(current, name)
            if value is None:
                continue
            if holds == _ONE:
                push(value)
            elif holds == _MANY:
                push_all(reversed(value))
            else:
                push_all([item for item in reversed(value) if isinstance(item, n.Node)])


def contains(tree: n.Node | tuple[n.Node, ...], cls: type[n.Node] | tuple[type[n.Node], ...]
             ) -> bool:
    """Whether a node of class `cls` is anywhere in `tree` (a node or a body), itself
    included."""
    items = tree if isinstance(tree, tuple) else (tree,)
    return any(next(find_all(item, cls), None) is not None for item in items)


SpanMove = Callable[[Span], Span]


def map_spans(tree: Any, move: SpanMove) -> Any:
    """A copy of `tree` (a node, a tuple of them, a span, or anything else, returned as it
    is) with `move` applied to every position in it: each node's `span` and any other
    field that holds a span (bound names' spans, a session's `head`).

    Nodes are frozen: the copy is built without `__init__` (fields copied, positions
    moved), so moving every statement below a new line of a long program stays cheap. A
    predicate parsed on its own is moved to where its text sits (`prose.syntax.build`),
    and the LSP's pieces that only moved are reused (`prose.lsp.incremental`)."""
    if isinstance(tree, Span):
        return move(tree)
    if isinstance(tree, tuple):
        return tuple([map_spans(item, move) for item in tree]) if tree else tree
    if isinstance(tree, n.Node):
        cls = type(tree)
        copy = object.__new__(cls)
        for slot in field_layout(cls):
            value = getattr(tree, slot.name)
            object.__setattr__(copy, slot.name, map_spans(value, move) if slot.positioned else value)
        return copy
    return tree  # text, a number, None: no position in it


@dataclass(frozen=True, slots=True)
class FieldLayout:
    """One field of a node class: whether it may hold a position (a span, or nodes with
    theirs) and whether it is shown (in the node's `repr` and in `prose parse`'s dump:
    not a position of its own, nor the program's whole text)."""

    name: str
    positioned: bool
    shown: bool


_FIELD_LAYOUTS: dict[type, tuple[FieldLayout, ...]] = {}


def field_layout(cls: type[n.Node]) -> tuple[FieldLayout, ...]:
    """Every field of a node class, in field order (computed once per class)."""
    found = _FIELD_LAYOUTS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        found = _FIELD_LAYOUTS[cls] = tuple(
            FieldLayout(field.name, _holds_position(hints[field.name]), field.repr)
            for field in fields(cls))
    return found


def _holds_position(hint: object) -> bool:
    for option in _union(hint):
        if option is Span or _is_node(option):
            return True
        if typing.get_origin(option) is tuple and any(
                _holds_position(item) for item in typing.get_args(option) if item is not Ellipsis):
            return True
    return False


def place_root(expr: n.Expr) -> n.Expr:
    """The expression a member or index path starts from: `x` of `x.a[0].b` (the
    expression itself when it is no such path)."""
    while isinstance(expr, n.Member | n.Index):
        expr = expr.obj
    return expr


def root_name(expr: n.Expr) -> str | None:
    """The name a member or index path starts from (`x` of `x.a[0]`), None when it starts
    from no name."""
    root = place_root(expr)
    return root.name if isinstance(root, n.Name) else None


def child_nodes(node: n.Node) -> Iterator[tuple[n.Node, bool]]:
    """`children(node)`, each with whether it is a statement of one of `node`'s bodies."""
    for layout in _layout(type(node)):
        value = getattr(node, layout.name)
        if value is None:
            continue
        if not layout.many:
            yield value, False
        elif layout.mixed:
            yield from ((item, False) for item in value if isinstance(item, n.Node))
        else:
            yield from ((item, layout.body) for item in value)


def child_bodies(node: n.Node) -> Iterator[tuple[n.Stmt, ...]]:
    """The statement blocks directly inside a statement (or loop expression): its own
    bodies, those of its clauses (`if` arms, `choice` options) and that of a loop in
    value position (`let xs = for ...:`), in source order.

    Expressions are not searched: the grammar puts no block inside one, except a loop
    (or `parallel:`) in value position, which is a statement node.
    """
    for layout in _layout(type(node)):
        value = getattr(node, layout.name)
        if value is None:
            continue
        if layout.body:
            yield value
        elif not layout.many:
            if _descend(type(value)):
                yield from child_bodies(value)
        else:
            for item in value:
                if _descend(type(item)):
                    yield from child_bodies(item)


# A pipeline is an expression with bodies (its stages'): it is looked inside.
_PURE_EXPRESSIONS = (frozenset(typing.get_args(n.Expr)) - frozenset(typing.get_args(n.Stmt))
                     - {n.Pipeline})
_DESCEND: dict[type, bool] = {}


def _descend(cls: type) -> bool:
    """Whether `child_bodies` looks inside a child of class `cls` (not text, not an expression)."""
    found = _DESCEND.get(cls)
    if found is None:
        found = _DESCEND[cls] = (issubclass(cls, n.Node) and cls not in _PURE_EXPRESSIONS
                                 and bool(_layout(cls)))
    return found


def value_loop(statement: n.Stmt) -> n.LoopNode | None:
    """The loop in value position of `let x = <loop>`, `x = <loop>` or `return <loop>`."""
    if isinstance(statement, n.Let | n.Assign | n.Return):
        value = statement.value
        if isinstance(value, n.LoopNode):
            return value
    return None


def own_return_bodies(statement: n.Stmt) -> list[tuple[n.Stmt, ...]]:
    """The bodies inside `statement` whose `return` ends that body, not the pattern: a
    `do:` block's and a pipeline stage's (each iteration's value)."""
    out: list[tuple[n.Stmt, ...]] = []
    value = statement.value if isinstance(statement, n.Let | n.Assign | n.Return) else None
    if isinstance(statement, n.ExprStmt):
        value = statement.expr
    for node in (statement, value):
        if isinstance(node, n.Do) and node.name is None:
            out.append(node.body)
        elif isinstance(node, n.Pipeline):
            out.extend(stage.body for stage in node.stages)
    return out


def pipeline_of(statement: n.Stmt) -> n.Pipeline | None:
    """The pipeline a statement evaluates (`let x = xs | map: ...`), if any."""
    value = statement.value if isinstance(statement, n.Let | n.Assign | n.Return) else None
    if isinstance(statement, n.ExprStmt):
        value = statement.expr
    return value if isinstance(value, n.Pipeline) else None


# The last programs walked: body -> its statements in walk order. Bodies are immutable and
# the cache holds each one it keys, so an id cannot be reused while its entry lives.
_WALKED: OrderedDict[int, tuple[tuple[n.Stmt, ...], tuple[n.Stmt, ...]]] = OrderedDict()
_WALKED_SIZE = 8


def walk_statements(body: tuple[n.Stmt, ...]) -> Iterator[n.Stmt]:
    """Every statement (and loop in value position), depth first, in source order.

    The linter's rules each walk the same program: the walk of a body is made once and
    remembered for the last few bodies."""
    found = _WALKED.get(id(body))
    if found is None or found[0] is not body:
        found = (body, tuple(_walk(body)))
        _WALKED[id(body)] = found
        if len(_WALKED) > _WALKED_SIZE:
            _WALKED.popitem(last=False)
    else:
        _WALKED.move_to_end(id(body))
    return iter(found[1])


def _walk(body: tuple[n.Stmt, ...]) -> Iterator[n.Stmt]:
    stack: list[Iterator[n.Stmt]] = [iter(body)]
    while stack:
        statement = next(stack[-1], None)
        if statement is None:
            stack.pop()
            continue
        yield statement
        loop = value_loop(statement)
        if loop is not None:
            yield loop
        bodies = list(child_bodies(statement))
        for inner in reversed(bodies):
            stack.append(iter(inner))


def loops(body: tuple[n.Stmt, ...]) -> Iterator[n.LoopNode | n.Pipeline]:
    """Every loop (statement or value) and every pipeline, depth first, in source order:
    the nodes `prose.lang.loops.loop_shape` describes."""
    for statement in walk_statements(body):
        if isinstance(statement, n.LoopNode):
            yield statement
        pipeline = pipeline_of(statement)
        if pipeline is not None:
            yield pipeline


def terminal_returns(body: tuple[n.Stmt, ...]) -> Iterator[n.Return]:
    """The `return`s that end the pattern (not those of collecting loops, LANGUAGE.md 4.3)."""
    stack: list[tuple[tuple[n.Stmt, ...], bool]] = [(body, False)]
    while stack:
        block, collecting = stack.pop()
        for position, statement in enumerate(block):
            if isinstance(statement, n.Return) and not collecting:
                yield statement
            loop = value_loop(statement)
            if loop is not None:
                stack.append((loop.body, True))
            last = position == len(block) - 1
            if isinstance(statement, n.LoopNode):
                stack.append((statement.body, collecting and last))
                continue
            if isinstance(statement, n.BlockDef):
                continue  # a block's return ends the block, not the pattern
            own = own_return_bodies(statement)
            for inner in child_bodies(statement):
                if loop is not None and inner is loop.body:
                    continue
                stack.append((inner, collecting or any(inner is body for body in own)))


def statements_in_loops(body: tuple[n.Stmt, ...]) -> set[int]:
    """`id()`s of the statements that may run more than once (inside a loop body)."""
    inside: set[int] = set()
    stack: list[tuple[tuple[n.Stmt, ...], bool]] = [(body, False)]
    while stack:
        block, looped = stack.pop()
        for statement in block:
            if looped:
                inside.add(id(statement))
            loop = value_loop(statement)
            pipeline = pipeline_of(statement)
            stages = [stage.body for stage in pipeline.stages] if pipeline else []
            for inner in child_bodies(statement):
                is_loop_body = isinstance(statement, n.LoopNode) or (
                    loop is not None and inner is loop.body
                ) or any(inner is body for body in stages)
                stack.append((inner, looped or is_loop_body))
    return inside


# The last program asked for and its bound names: the linter's analyses ask five times.
_BOUND_LAST: tuple[n.Program, frozenset[str]] | None = None


def bound_names(program: n.Program) -> frozenset[str]:
    """Every name the program binds anywhere: `let`, loop, catch and block variables."""
    global _BOUND_LAST
    last = _BOUND_LAST  # read once: another thread may replace it
    if last is not None and last[0] is program:
        return last[1]
    found = _bound_names(program)
    _BOUND_LAST = (program, found)
    return found


def _bound_names(program: n.Program) -> frozenset[str]:
    names: set[str] = set()
    for statement in walk_statements(program.body):
        names.update(binds(statement))
    return frozenset(names)


def binds(statement: n.Stmt) -> tuple[str, ...]:
    """The names `statement` itself binds: a `let`'s, a loop's variables, a catch
    variable, a block's parameters, and the parameters of the stages of a pipeline it
    holds (not the names its body binds)."""
    names: list[str] = []
    if isinstance(statement, n.Let):
        names.extend(statement.names)
    elif isinstance(statement, n.For):
        names.append(statement.var)
        if statement.index_var:
            names.append(statement.index_var)
    elif isinstance(statement, n.Repeat | n.Loop) and statement.var:
        names.append(statement.var)
    elif isinstance(statement, n.Try) and statement.catch_var:
        names.append(statement.catch_var)
    elif isinstance(statement, n.BlockDef):
        names.extend(statement.params)
    pipeline = pipeline_of(statement)
    if pipeline is not None:
        for stage in pipeline.stages:
            names.extend(stage.params)
    return tuple(names)


def session_names(program: n.Program) -> tuple[str, ...]:
    """The names the program's sessions are answered under (a script's keys besides the
    slots): each agent a session names, and `session` for an inline `session "..."`."""
    found: dict[str, None] = {}
    stack: list[n.Node] = list(program.body)
    while stack:
        node = stack.pop()
        if isinstance(node, n.Session):
            found.setdefault(node.slot, None)
        stack.extend(children(node))
    return tuple(sorted(found))
