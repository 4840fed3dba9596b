"""What holds on every path to a call: the facts the control-flow invariants are proven from.

A *fact* is a condition the program tested and found true on every path to a point:
`(path, None)` for the truthiness of a path (`gate.ok`), `(path, literal)` for
`path == literal` (`decision.proceed == true`, the literal as JSON). Facts come from
the deterministic predicate of an `if` arm the point is inside (its `and` operands
too), and from an `if` with no `else` whose only arm always leaves the body
(`return`, `throw`, `break`, `continue`): after it, the negation of its condition
holds (`if not gate.ok: return`, `if decision.proceed != true: return`), as it does
in the `else` of a single `if`. A statement that is one call records what it was
given as plain paths (`proposal: proposal`), for `gets the same`. A fact
dies where anything binds its root name again (and, inside a loop, where the loop body
binds it anywhere: the next iteration runs after that binding); a block definition's
body starts with none, since it runs wherever it is called from.

Every call (and session) also gets its *arms*: the compound statements around it, with
which arm it is in, so `at most one of` can ask whether two calls are on exclusive
paths (different arms of one `if` or `choice`, outside any loop; or after an arm that
left the pattern).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from prose.syntax import nodes as n
from prose.syntax.walk import child_bodies, find_all, pipeline_of, value_loop

Fact = tuple[str, str | None]
Kind = Literal["if", "choice", "loop", "block", "parallel", "body"]
_LEAVES = (n.Return, n.Throw, n.Break, n.Continue)


@dataclass(frozen=True, slots=True)
class Step:
    """One compound statement around a call: which of its arms the call is in."""

    node: int  # id of the compound statement
    arm: int
    kind: Kind
    line: int  # where the compound starts (source order between siblings)
    exits: bool  # that arm always leaves the pattern (`return`, `throw`)


@dataclass(frozen=True, slots=True)
class CallPlace:
    """What holds at one call, and where it is."""

    facts: frozenset[Fact]
    arms: tuple[Step, ...]


def path_of(expr: n.Expr) -> str | None:
    """`a.b.c` for a name or member path, else None."""
    if isinstance(expr, n.Name):
        return expr.name
    if isinstance(expr, n.Member):
        inner = path_of(expr.obj)
        return f"{inner}.{expr.name}" if inner is not None else None
    return None


def literal_json(expr: n.Expr) -> str | None:
    if isinstance(expr, n.Literal):
        return json.dumps(expr.value)
    if isinstance(expr, n.String) and all(isinstance(part, str) for part in expr.parts):
        return json.dumps("".join(str(part) for part in expr.parts))
    return None


def _comparison(expr: n.Compare) -> Fact | None:
    for left, right in ((expr.left, expr.right), (expr.right, expr.left)):
        path, literal = path_of(left), literal_json(right)
        if path is not None and literal is not None:
            return (path, literal)
    return None


def facts_of(expr: n.Expr | None) -> set[Fact]:
    """What holds where `expr` was tested true."""
    if expr is None:
        return set()
    if isinstance(expr, n.BoolOp) and expr.op == "and":
        return set().union(*(facts_of(operand) for operand in expr.operands))
    path = path_of(expr)
    if path is not None:
        return {(path, None)}
    if isinstance(expr, n.IsTest) and expr.test == "not empty" and (path := path_of(expr.operand)):
        return {(path, None)}  # a non-empty value (text, a list) is true
    if isinstance(expr, n.Compare) and expr.op == "==" and (fact := _comparison(expr)):
        return {fact, (fact[0], None)} if fact[1] == "true" else {fact}
    return set()


def negated_facts(expr: n.Expr | None) -> set[Fact]:
    """What holds where `expr` was tested false."""
    if expr is None:
        return set()
    if isinstance(expr, n.Not):
        return facts_of(expr.operand)
    if isinstance(expr, n.IsTest) and expr.test == "empty" and (path := path_of(expr.operand)):
        return {(path, None)}
    if isinstance(expr, n.BoolOp) and expr.op == "or":
        return set().union(*(negated_facts(operand) for operand in expr.operands))
    if isinstance(expr, n.Compare) and expr.op == "!=" and (fact := _comparison(expr)):
        return {fact, (fact[0], None)} if fact[1] == "true" else {fact}
    return set()


def root(path: str) -> str:
    return path.split(".", 1)[0]


def bound_roots(node: n.Node) -> set[str]:
    """Every name a statement (and what is inside it) binds or changes."""
    names: set[str] = set()
    for item in find_all(node, (n.Let, n.Assign, n.Append, n.For, n.Repeat, n.Loop, n.Try)):
        if isinstance(item, n.Let):
            names.update(item.names)
        elif isinstance(item, n.Assign | n.Append):
            target = item.target
            path = path_of(target) if not isinstance(target, n.Index) else path_of(target.obj)
            if path is not None:
                names.add(root(path))
        elif isinstance(item, n.For):
            names.update(x for x in (item.var, item.index_var) if x)
        elif isinstance(item, n.Repeat | n.Loop) and item.var:
            names.add(item.var)
        elif isinstance(item, n.Try) and item.catch_var:
            names.add(item.catch_var)
    return names


def given(call: n.Call, name: str) -> str:
    """The fact "this call was given `name`: <path>" records under the path's value."""
    return f"#given {name} to call at {call.span.line}:{call.span.column}"


def given_facts(statement: n.Stmt) -> set[Fact]:
    """What a statement that is one call (`let r = call a ...`, `call a ...`) was given as
    plain paths: `(path, given(call, input))`, true until the path's root is bound again."""
    value = (statement.value if isinstance(statement, n.Let | n.Assign | n.Return)
             else statement.expr if isinstance(statement, n.ExprStmt) else None)
    if not isinstance(value, n.Call):
        return set()
    return {(path, given(value, prop.name)) for prop in value.properties
            if (path := path_of(prop.value)) is not None}


def _leaves(body: tuple[n.Stmt, ...]) -> bool:
    return bool(body) and isinstance(body[-1], _LEAVES)


def _exits(body: tuple[n.Stmt, ...]) -> bool:
    return bool(body) and isinstance(body[-1], n.Return | n.Throw)


class _Walker:
    def __init__(self) -> None:
        self.places: dict[object, CallPlace] = {}
        # A statement's bound names are asked for at every level of nesting above it.
        self._bound: dict[int, set[str]] = {}

    def bound_roots(self, node: n.Node) -> set[str]:
        found = self._bound.get(id(node))
        if found is None:
            found = self._bound[id(node)] = bound_roots(node)
        return found

    def body(self, body: tuple[n.Stmt, ...], facts: frozenset[Fact],
             arms: tuple[Step, ...]) -> frozenset[Fact]:
        """Walk a body; what holds at its end."""
        for statement in body:
            facts = self.statement(statement, facts, arms)
        return facts

    def _record(self, node: n.Node, facts: frozenset[Fact], arms: tuple[Step, ...]) -> None:
        # Calls, and a gated growth's statements (appends, assignments), in one walk.
        place = CallPlace(facts, arms)
        for found in find_all(node, (n.Call, n.Session, n.Append, n.Assign)):
            self.places[id(found)] = place
            if isinstance(found, n.Session):  # analysed as a call made at its position
                self.places[(found.span.line, found.span.column)] = place

    def statement(self, statement: n.Stmt, facts: frozenset[Fact],
                  arms: tuple[Step, ...]) -> frozenset[Fact]:
        self._record(statement, facts, arms)  # nested bodies overwrite with what they know
        line = statement.span.line
        if isinstance(statement, n.If):
            for number, branch in enumerate(statement.branches):
                inner = facts | facts_of(branch.condition.predicate)
                step = Step(id(statement), number, "if", line, _exits(branch.body))
                self.body(branch.body, frozenset(inner), (*arms, step))
            if statement.orelse is not None:
                step = Step(id(statement), len(statement.branches), "if", line,
                            _exits(statement.orelse))
                # `else` of a single `if C`: C did not hold
                negated = (negated_facts(statement.branches[0].condition.predicate)
                           if len(statement.branches) == 1 else set())
                self.body(statement.orelse, frozenset(facts | negated), (*arms, step))
        elif isinstance(statement, n.Choice):
            for number, option in enumerate(statement.options):
                step = Step(id(statement), number, "choice", line, _exits(option.body))
                self.body(option.body, facts, (*arms, step))
        elif isinstance(statement, n.Try):
            # A `try` whose `catch` always leaves: after it, its body ran to the end.
            end = self.body(statement.body, facts, (*arms, Step(id(statement), 0, "body", line,
                                                                 False)))
            for number, handler in enumerate((statement.handler, statement.final), 1):
                if handler is not None:
                    self.body(handler, facts, (*arms, Step(id(statement), number, "body", line,
                                                           False)))
            if statement.handler is not None and _leaves(statement.handler):
                killed = set().union(*(self.bound_roots(item) for item in statement.final or ()))
                return frozenset(fact for fact in end if root(fact[0]) not in killed)
        elif isinstance(statement, n.BlockDef):
            self.body(statement.body, frozenset(), (*arms, Step(id(statement), 0, "block", line,
                                                                False)))
        else:
            looping = (isinstance(statement, n.LoopNode) or value_loop(statement) is not None
                       or pipeline_of(statement) is not None)
            kind: Kind = ("loop" if looping else "parallel" if isinstance(statement, n.Parallel)
                          else "body")
            for number, nested in enumerate(child_bodies(statement)):
                kept = facts
                if looping:
                    killed = set().union(*(self.bound_roots(item) for item in nested))
                    kept = frozenset(fact for fact in facts if root(fact[0]) not in killed)
                self.body(nested, kept, (*arms, Step(id(statement), number, kind, line, False)))
        killed = self.bound_roots(statement)
        after = frozenset(fact for fact in facts | given_facts(statement)
                          if root(fact[0]) not in killed)
        if (isinstance(statement, n.If) and statement.orelse is None
                and len(statement.branches) == 1 and _leaves(statement.branches[0].body)):
            after |= negated_facts(statement.branches[0].condition.predicate)
        return after


# The last program analysed and its places: several rules ask for the same program's.
_LAST: tuple[n.Program, dict[object, CallPlace]] | None = None


def call_places(program: n.Program) -> dict[object, CallPlace]:
    """What holds at each call and session of the program (keyed by the node's id; a
    session also by its line and column, where the analysis made its call). Read only:
    the last program's places are kept and handed to the next caller asking for them."""
    global _LAST
    last = _LAST  # read once: another thread may replace it
    if last is not None and last[0] is program:
        return last[1]
    walker = _Walker()
    walker.body(program.body, frozenset(), ())
    _LAST = (program, walker.places)
    return walker.places


def exclusive(first: tuple[Step, ...], second: tuple[Step, ...], first_line: int,
              second_line: int, per_iteration: bool) -> bool:
    """Whether two calls (their arms and lines) can never both run: in the same run, or in
    the same loop iteration when `per_iteration`."""
    depth = 0
    while depth < min(len(first), len(second)) and first[depth] == second[depth]:
        if first[depth].kind == "block" or (first[depth].kind == "loop" and not per_iteration):
            return False
        depth += 1
    one = first[depth] if depth < len(first) else None
    other = second[depth] if depth < len(second) else None
    if one is not None and other is not None and one.node == other.node:
        return one.kind in ("if", "choice")
    # In one body, one call inside an arm that leaves the pattern, the other after that
    # compound: the later one runs only when that arm did not (a router: `if a: return
    # call x`, then `call y`).
    one_line = one.line if one is not None else first_line
    other_line = other.line if other is not None else second_line
    earlier = one if one_line < other_line else other
    return earlier is not None and earlier.exits and earlier.kind in ("if", "choice")
