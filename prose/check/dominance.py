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

`(r, latest(S))` says that `r` holds the *latest* result of slot `S`: `let r = call S`
(or `r = call S`, the call reaching `S` alone) makes it true, and it dies where `r` is
bound again and wherever a call that may reach `S` runs (directly, through a service
value, a block run with `do`, a pipeline stage; in a loop body that may run again; in
another branch of a `parallel:`), by `prose.lang.gates.replaces_latest`: `runs only
after` and `grows only after` ask for it next to the test of `r.ok`, since the run time
judges the approver's latest call, not the one whose result was tested. What a call of
`S` was given dies there too (`gets the same ... got` compares with the latest call).

Every call (and session) also gets its *arms*: the compound statements around it, with
which arm it is in, so `at most one of` can ask whether two calls are on exclusive
paths (different arms of one `if` or `choice`, outside any loop; or after an arm that
left the pattern).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

from prose.lang.gates import replaces_latest
from prose.syntax import nodes as n
from prose.syntax.walk import child_bodies, children, find_all, pipeline_of, value_loop

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


_LATEST = "#latest result of "
# The slots a call may reach (the linter's flow analysis: `CallFlow.slots`).
Reach = Callable[[n.Call], AbstractSet[str]]


def latest(slot: str) -> str:
    """The fact `(name, latest(slot))`: `name` holds the latest result of `slot`."""
    return _LATEST + slot


def bound_result(statement: n.Stmt) -> tuple[str, n.Call | n.Session] | None:
    """`let r = call ...` or `r = call ...` (or a session): the name and the call."""
    if isinstance(statement, n.Let) and not statement.destructure and len(statement.names) == 1:
        name = statement.names[0]
    elif isinstance(statement, n.Assign) and isinstance(statement.target, n.Name):
        name = statement.target.name
    else:
        return None
    value = statement.value
    return (name, value) if isinstance(value, n.Call | n.Session) else None


def _leaves(body: tuple[n.Stmt, ...]) -> bool:
    return bool(body) and isinstance(body[-1], _LEAVES)


def _exits(body: tuple[n.Stmt, ...]) -> bool:
    return bool(body) and isinstance(body[-1], n.Return | n.Throw)


class _Walker:
    def __init__(self, program: n.Program, reach: Reach) -> None:
        self.places: dict[object, CallPlace] = {}
        # A statement's bound names are asked for at every level of nesting above it.
        self._bound: dict[int, set[str]] = {}
        self._reach = reach
        self._reached: dict[int, frozenset[str]] = {}
        self._blocks: dict[str, frozenset[str]] = {}  # block name -> the slots it may call
        self._given_by: dict[str, frozenset[str]] = {}  # a `given` fact's tag -> its call's slots
        definitions = list(find_all(program, n.BlockDef))
        changed = True
        while changed:  # blocks run blocks (themselves too): to the fixed point
            changed = False
            for block in definitions:
                slots = self._blocks.get(block.name, frozenset()) | self._scan(block.body)
                if slots != self._blocks.get(block.name, frozenset()):
                    self._blocks[block.name] = slots
                    changed = True

    def _decided(self, facts: frozenset[Fact], reached: AbstractSet[str]) -> frozenset[Fact]:
        """`facts` without what a call that may reach `reached` makes stale: which name
        holds a slot's latest result, and what a call of such a slot was given."""
        if not reached:
            return facts
        return frozenset(fact for fact in facts if not (
            fact[1] is not None and (
                (fact[1].startswith(_LATEST)
                 and replaces_latest(fact[1][len(_LATEST):], reached))
                or any(replaces_latest(slot, reached)
                       for slot in self._given_by.get(fact[1], ())))))

    def _given(self, statement: n.Stmt) -> set[Fact]:
        """`given_facts`, remembering the slots of the call that was given them."""
        found = given_facts(statement)
        value = (statement.value if isinstance(statement, n.Let | n.Assign | n.Return)
                 else statement.expr if isinstance(statement, n.ExprStmt) else None)
        if found and isinstance(value, n.Call):
            slots = self._direct(value)
            for _, tag in found:
                if tag is not None:
                    self._given_by[tag] = slots
        return found

    def _direct(self, node: n.Node) -> frozenset[str]:
        """The slots `node` itself calls (not what is inside it): a call's, a session's,
        those of the blocks a `do` may run."""
        if isinstance(node, n.Call):
            return frozenset(self._reach(node))
        if isinstance(node, n.Session):
            return frozenset({node.slot})
        if isinstance(node, n.Do) and node.name is not None:
            return self._blocks.get(node.name, frozenset())
        return frozenset()

    def _scan(self, nodes: Iterable[n.Node]) -> frozenset[str]:
        """The slots running `nodes` may call, with the blocks' known so far (a block
        definition's body runs elsewhere)."""
        found: set[str] = set()
        pending = list(nodes)
        while pending:
            node = pending.pop()
            if isinstance(node, n.BlockDef):
                continue
            found |= self._direct(node)
            pending.extend(children(node))
        return frozenset(found)

    def reached(self, node: n.Node | tuple[n.Stmt, ...]) -> frozenset[str]:
        """The slots running `node` (a statement, or the statements of a body) may call."""
        if isinstance(node, tuple):
            return frozenset().union(*(self.reached(item) for item in node))
        found = self._reached.get(id(node))
        if found is None:  # from its children's, each asked once
            found = frozenset() if isinstance(node, n.BlockDef) else self._direct(node).union(
                *(self.reached(child) for child in children(node)))
            self._reached[id(node)] = found
        return found

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
        calls = list(find_all(node, (n.Call, n.Session, n.Do)))
        # A call in a statement that makes other calls (in its inputs, say) may run after
        # them: what they make stale is not known there.
        makers = [(call, self._direct(call)) for call in calls]
        makers = [(call, slots) for call, slots in makers if slots]
        for call in calls:
            if isinstance(call, n.Do):
                continue
            others = frozenset().union(*(slots for other, slots in makers if other is not call))
            place = CallPlace(self._decided(facts, others), arms)
            self.places[id(call)] = place
            if isinstance(call, n.Session):  # analysed as a call made at its position
                self.places[(call.span.line, call.span.column)] = place
        for change in find_all(node, (n.Append, n.Assign)):  # a gated growth's statements
            self.places[id(change)] = CallPlace(self._decided(facts, self.reached(change)), arms)

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
            # The `catch` runs after part of the body, `finally` after part of either.
            ran: tuple[n.Stmt, ...] = ()
            for number, handler in enumerate((statement.handler, statement.final), 1):
                ran += statement.body if number == 1 else statement.handler or ()
                if handler is not None:
                    self.body(handler, self._after(facts, ran),
                              (*arms, Step(id(statement), number, "body", line, False)))
            if statement.handler is not None and _leaves(statement.handler):
                return self._after(end, statement.final or ())
        elif isinstance(statement, n.BlockDef):
            self.body(statement.body, frozenset(), (*arms, Step(id(statement), 0, "block", line,
                                                                False)))
        else:
            looping = (isinstance(statement, n.LoopNode) or value_loop(statement) is not None
                       or pipeline_of(statement) is not None)
            kind: Kind = ("loop" if looping else "parallel" if isinstance(statement, n.Parallel)
                          else "body")
            bodies = list(child_bodies(statement))
            for number, nested in enumerate(bodies):
                kept = facts
                if looping:  # the body runs again after all of itself (and the header)
                    killed = set().union(*(self.bound_roots(item) for item in nested))
                    kept = self._decided(frozenset(fact for fact in facts
                                                   if root(fact[0]) not in killed),
                                         self.reached(statement))
                elif kind == "parallel":  # the other branches run meanwhile
                    kept = self._decided(facts, frozenset().union(
                        *(self.reached(other) for other in bodies if other is not nested)))
                self.body(nested, kept, (*arms, Step(id(statement), number, kind, line, False)))
        killed = self.bound_roots(statement)
        after = self._decided(facts, self._flowing(statement, self.reached(statement)))
        after = frozenset(fact for fact in after | self._given(statement)
                          if root(fact[0]) not in killed)
        bound = bound_result(statement)
        slots = self._direct(bound[1]) if bound is not None else frozenset()
        if bound is not None and len(slots) == 1:  # the call of one slot, made last
            after |= {(bound[0], latest(next(iter(slots))))}
        if (isinstance(statement, n.If) and statement.orelse is None
                and len(statement.branches) == 1 and _leaves(statement.branches[0].body)):
            after |= negated_facts(statement.branches[0].condition.predicate)
        return after

    def _after(self, facts: frozenset[Fact], ran: tuple[n.Stmt, ...]) -> frozenset[Fact]:
        """What still holds after `ran` (some of it, or all) ran."""
        killed = set().union(*(self.bound_roots(item) for item in ran))
        kept = frozenset(fact for fact in facts if root(fact[0]) not in killed)
        return self._decided(kept, self.reached(ran))

    def _flowing(self, statement: n.Stmt, reached: frozenset[str]) -> frozenset[str]:
        """The slots calls of `statement` may reach on a path that goes on after it: an
        `if` arm that always leaves (`return`, `throw`, `break`, `continue`) does not."""
        if not isinstance(statement, n.If) or not reached:
            return reached
        arms = [branch.body for branch in statement.branches]
        if statement.orelse is not None:
            arms.append(statement.orelse)
        return frozenset().union(*(self.reached(body) for body in arms if not _leaves(body)))


# The last program analysed (with the reach it was given) and its places: several rules
# ask for the same program's.
_LAST: tuple[n.Program, object, dict[object, CallPlace]] | None = None


def call_places(program: n.Program, reach: Reach, key: object = None
                ) -> dict[object, CallPlace]:
    """What holds at each call, session and growth statement of the program (keyed by
    the node's id; a session also by its line and column, where the analysis made its
    call). `reach` gives the slots a call may reach; `key` names it (the flow analysis
    it reads) so that the last program's places, read only, are handed to the next
    caller asking for them with the same key."""
    global _LAST
    last = _LAST  # read once: another thread may replace it
    if last is not None and last[0] is program and key is not None and last[1] is key:
        return last[2]
    walker = _Walker(program, reach)
    walker.body(program.body, frozenset(), ())
    _LAST = (program, key, walker.places)
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
