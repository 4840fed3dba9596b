"""Provenance analysis: an abstract interpretation of the program over `prose.lang.flows`.

Every construct passes labels by the rule `prose.lang.flows` writes for it;
the interpreter applies the same rules to concrete values. Here a label is a
set of *definitions*: a place that binds a value (a `let`, an assignment, a
`record`, a loop or catch variable, a block parameter, a loop's collected
value), a call's output, or a piece of the pattern's literal text. A
definition remembers what it copies (`sources`), the slots whose output it
is (`slots`) and, for a call, what the call was given (`call_inputs`), so a
diagnostic can show the path a value took.

An abstract value is a label plus what is known of its shape: the labels of
an object's members (so reading the clean member of a mixed object is
clean, as at run time) and the slots it may denote as a service (so a call
through a variable or a block parameter is a call of each of them). Loops
run to a fixpoint; branches join; every block definition that may run is
followed; errors (failed calls, thrown values) flow to `catch` variables
and to parallel branches kept by `on-fail: "continue"`. A node the analysis
does not know is refused (`prose.syntax.visitor.UnknownNode`), never skipped.
"""

from __future__ import annotations

import itertools
import math
from collections import ChainMap
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from typing import Any

from prose.check.declarations import Declarations
from prose.diagnostics.model import Label
from prose.lang import builtins, flows
from prose.lang.channels import MEMORY_INPUT
from prose.lang.flows import default_texts
from prose.lang.invariants import BlindTo, Predecessor
from prose.lang.loops import loop_shape
from prose.lang.properties import CONTROL_PROPERTIES
from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax import walk
from prose.syntax.visitor import Visitor

Defs = frozenset[int]
NONE: Defs = frozenset()
MAX_BLOCK_DEPTH = 8
MAX_SHAPE_DEPTH = 4
MAX_ITERATIONS = 100
# How many iterations of a `for s in S` loop are followed one by one to tell which
# stage's output reaches which (each of `S` sees only its predecessor's output): at least
# this many, and one more than the names the program writes (`probe_iterations`).
PROBE_ITERATIONS = 3
MAX_PROBE_ITERATIONS = 64


@dataclass(frozen=True)
class Value:
    """What an expression evaluates to, abstractly (see the module docstring)."""

    label: Defs = NONE
    fields: Mapping[str, Value] | None = None
    services: frozenset[str] = frozenset()
    # The list-valued slot itself, whole and in binding order (the slot's name or a copy
    # of it: `let chain = stages`); any operation on it makes a value that is not.
    whole: str | None = None


CONSTANT = Value(fields={})  # a literal: carries nothing, and no member carries anything


class Returned(set[int]):
    """What the `return`s of a collecting body (a loop in value position, a block, a
    parallel branch, a pipeline stage) give: their labels, and the services they may be
    (a block may return a slot, a race may be won by a branch that returns one)."""

    def __init__(self) -> None:
        super().__init__()
        self.services: set[str] = set()

    def add_value(self, value: Value, label: Defs) -> None:
        self.update(label)
        self.services |= _flatten(value).services


@dataclass
class Definition:
    id: int
    name: str
    span: Span
    kind: str  # let, assign, record, loop, catch, call, param, join, string, config, error
    slots: set[str] = field(default_factory=set)
    sources: set[int] = field(default_factory=set)
    call_inputs: set[int] = field(default_factory=set)
    text: str | None = None  # the pattern's own literal text
    branch: tuple[str, ...] = ()  # for a call: the parallel constructs it runs inside
    index: int = flows.UNKNOWN_INDEX  # for a call in a followed loop: its iteration
    crosses: str | None = None  # for a join: the parallel construct whose branches it collects
    unorders: bool = False  # `shuffle`: the outputs under it no longer tell their service


@dataclass
class InputFlow:
    """One property of one call site: where its value may come from."""

    name: str
    prop: n.Property
    value: Value = field(default_factory=Value)


@dataclass
class CallFlow:
    """A call site: every slot it may call and what each property may carry."""

    call: n.Call
    slots: set[str] = field(default_factory=set)
    target: str = "slot"
    inputs: dict[str, InputFlow] = field(default_factory=dict)
    branches: set[tuple[str, ...]] = field(default_factory=set)  # where it may run
    target_defs: set[int] = field(default_factory=set)  # where a service variable was bound
    # A call of a list slot the linter does not follow iteration by iteration (which service
    # of the list it reaches is unknown there).
    unfollowed: bool = False
    holds_service: bool = False  # the target held a service in some analysed visit

    @property
    def slot(self) -> str | None:
        """The slot called, when there is exactly one."""
        return next(iter(self.slots)) if len(self.slots) == 1 else None


@dataclass
class JudgeFlow:
    condition: n.Condition
    mentions: dict[str, Value] = field(default_factory=dict)


@dataclass(frozen=True)
class Resolved:
    """A label resolved to what `prose.lang.channels.Carried` asks for."""

    provenance: frozenset[str]
    transitive: frozenset[str]
    literal: frozenset[str]
    chains: frozenset[tuple[str, tuple[str, ...], int, int]] = frozenset()


class FlowAnalysis:
    """The result: definitions, call sites with their inputs, judges, final returns."""

    def __init__(self, decl: Declarations, strict: bool = False) -> None:
        self.decl = decl
        self.strict = strict
        self.defs: list[Definition] = []
        self.calls: dict[int, CallFlow] = {}
        self.judges: dict[int, JudgeFlow] = {}
        self.returns: list[tuple[n.Return, Value]] = []
        # Calls in a followed `for s in S` loop: per call, (iteration, property values).
        self.iterations: dict[int, list[tuple[int, dict[str, Value]]]] = {}
        self._closures: dict[tuple[int, bool], frozenset[str]] = {}
        # What decides how many times each loop (and pipeline stage) runs, by `id()`.
        self.iteration_counts: dict[int, Value] = {}

    def count_iterations(self, loop: n.Node, depends: Defs) -> None:
        """Remember that `loop`'s number of iterations depends on `depends` (joined over
        every time the analysis passes it)."""
        known = self.iteration_counts.get(id(loop))
        self.iteration_counts[id(loop)] = Value(depends if known is None else known.label | depends)

    # --- queries -------------------------------------------------------------

    def provenance(self, value: Value) -> frozenset[str]:
        """Slots whose outputs the value may carry (a call is a boundary)."""
        return frozenset().union(*(self._closure(d, False) for d in _flatten(value).label))

    def transitive(self, value: Value) -> frozenset[str]:
        """Slots whose outputs may have influenced the value, through calls too."""
        return frozenset().union(*(self._closure(d, True) for d in _flatten(value).label))

    def resolve(self, value: Value) -> Resolved:
        return Resolved(self.provenance(value), self.transitive(value),
                        frozenset(text for text, _ in self.literal_texts(value)))

    def chains(self, value: Value) -> frozenset[tuple[str, tuple[str, ...], int, int]]:
        """The call outputs the value may carry, each with the branch it was made in; a
        branch element is marked `*` when the value left that construct through its join
        (so it is some other execution's or sibling's branch, never the consumer's own)."""
        out: set[tuple[str, tuple[str, ...], int, int]] = set()
        seen: set[tuple[int, frozenset[str], bool]] = set()
        stack: list[tuple[int, frozenset[str], bool]] = [
            (d, frozenset(), False) for d in _flatten(value).label]
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            def_id, crossed, unordered = state
            definition = self.defs[def_id]
            if definition.crosses is not None:
                crossed = crossed | {definition.crosses}
            unordered = unordered or definition.unorders
            if definition.kind == "call":
                path = tuple(f"{el}*" if el in crossed else el for el in definition.branch)
                index = (flows.SHUFFLED if unordered and definition.index != flows.NO_INDEX
                         else definition.index)
                out.update((slot, path, index, definition.span.line)
                           for slot in definition.slots)
            stack.extend((source, crossed, unordered) for source in definition.sources)
        return frozenset(out)

    def reaches_unchanged(self, value: Value, slot: str) -> bool:
        """Whether `slot`'s output reaches the value as it came back (not only inside new text)."""
        seen: set[int] = set()
        stack = list(_flatten(value).label)
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            definition = self.defs[current]
            if slot in definition.slots:
                return True
            if definition.kind == "string":
                continue  # interpolated into new text
            stack.extend(definition.sources)
        return False

    def literal_texts(self, value: Value) -> list[tuple[str, Span]]:
        """The pattern's literal texts that make up the value (not through calls)."""
        out: list[tuple[str, Span]] = []
        seen: set[int] = set()
        stack = list(_flatten(value).label)
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            definition = self.defs[current]
            if definition.text is not None:
                out.append((definition.text, definition.span))
            stack.extend(definition.sources)
        return out

    def path(self, value: Value, slot: str, transitive: bool = False) -> list[Definition]:
        """Definitions from the value back to one producing `slot`, source first."""
        start = sorted(value.label) or sorted(_flatten(value).label)
        parent: dict[int, int | None] = {def_id: None for def_id in start}
        queue = list(start)
        while queue:
            current = queue.pop(0)
            definition = self.defs[current]
            if slot in definition.slots:
                chain = [definition]
                back = parent[current]
                while back is not None:
                    chain.append(self.defs[back])
                    back = parent[back]
                return chain
            following = definition.sources | definition.call_inputs if transitive else definition.sources
            for source in sorted(following):
                if source not in parent:
                    parent[source] = current
                    queue.append(source)
        return []

    def path_labels(self, call: n.Call, prop: n.Property | None, slot: str | None = None,
                    transitive: bool = False) -> list[Label]:
        """Secondary labels showing where a property's value came from."""
        site = self.calls.get(id(call))
        if site is None or prop is None or prop.name not in site.inputs:
            return []
        value = site.inputs[prop.name].value
        found = self.transitive(value) if transitive else self.provenance(value)
        slots = [slot] if slot else sorted(found)
        labels: list[Label] = []
        for wanted in slots[:2]:
            steps = self.path(value, wanted, transitive)
            for position, step in enumerate(steps):
                if step.kind == "call" and wanted in step.slots:
                    after = steps[position + 1] if position + 1 < len(steps) else None
                    what = "an error of" if after is not None and after.kind == "catch" else "output of"
                    labels.append(Label(step.span, f"{what} `{wanted}` produced here"))
                elif step.kind == "call":
                    labels.append(Label(step.span, f"passed to `{step.name.strip('<>')}`, whose output carries it"))
                elif step.kind == "string":
                    labels.append(Label(step.span, "interpolated into a string here"))
                elif step.kind == "error":
                    labels.append(Label(step.span, "raised as an error here"))
                elif not step.name.startswith("<"):
                    labels.append(Label(step.span, f"copied into `{step.name}` here"))
        return labels

    def target_labels(self, call: n.Call) -> list[Label]:
        """Where the variable or parameter a call goes through was bound to its service."""
        site = self.calls.get(id(call))
        if site is None:
            return []
        found = [self.defs[d] for d in sorted(site.target_defs)]
        return [Label(d.span, f"`{d.name}` is bound to the called service here")
                for d in found if d.kind in ("let", "assign", "param", "loop")][:3]

    def _closure(self, def_id: int, transitive: bool) -> frozenset[str]:
        key = (def_id, transitive)
        cached = self._closures.get(key)
        if cached is not None:
            return cached
        seen: set[int] = set()
        stack = [def_id]
        out: set[str] = set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            definition = self.defs[current]
            out |= definition.slots
            stack.extend(definition.sources)
            if transitive:
                stack.extend(definition.call_inputs)
        result = frozenset(out)
        self._closures[key] = result
        return result


def analyse(decl: Declarations, program: n.Program, *, strict: bool = False) -> FlowAnalysis:
    """Run the provenance analysis over `program` (strict mode: implicit flows too)."""
    analysis = FlowAnalysis(decl, strict)
    _Analyser(analysis, program).run()
    return analysis


class Isolated(dict[str, Value]):
    """A state layer that starts a scope of its own."""


class State(ChainMap[str, Value]):
    """Variables and their abstract values, layered: a fork is a new empty layer over its
    parent (no copy), and `written` is that layer, the names set since the fork. A join
    looks at the names a branch changed, not at every variable."""

    @property
    def written(self) -> MutableMapping[str, Value]:
        return self.maps[0]

    def fork(self) -> State:
        return State({}, *self.maps)

    def isolate(self) -> State:
        """A fork that starts a scope of its own (a parallel branch, a block invocation)."""
        return State(Isolated(), *self.maps)

    def home(self, depth: int) -> State:
        """This state without the innermost scopes opened after isolation `depth`: where a
        block defined at that depth runs (a branch's or caller's own names do not shadow
        what the block reads)."""
        isolated = [i for i, layer in enumerate(self.maps) if isinstance(layer, Isolated)]
        extra = len(isolated) - depth
        if extra <= 0:
            return self
        return State(*self.maps[isolated[extra - 1] + 1 :])

    @property
    def depth(self) -> int:
        return sum(1 for layer in self.maps if isinstance(layer, Isolated))

    def merge(self, values: Mapping[str, Value]) -> None:
        for name, value in values.items():
            if self.get(name) is not value:
                self[name] = value


def _join(values: Iterable[Value], depth: int = 0) -> Value:
    """The least value covering all of `values` (a shape survives only if all have one)."""
    items = list(values)
    if not items:
        return Value()
    if len(items) == 1 or all(item is items[0] for item in items):
        return items[0]
    services = frozenset().union(*(item.services for item in items))
    whole = items[0].whole if all(item.whole == items[0].whole for item in items) else None
    if whole is not None:
        return Value(frozenset().union(*(item.label for item in items)), None, services, whole)
    if depth >= MAX_SHAPE_DEPTH or any(item.fields is None for item in items):
        return Value(frozenset().union(*(_flatten(item).label for item in items)), None, services)
    keys: dict[str, None] = {}
    for item in items:
        keys.update(dict.fromkeys(item.fields or {}))
    fields = {key: _join([(item.fields or {}).get(key, CONSTANT) for item in items], depth + 1)
              for key in keys}
    return Value(frozenset().union(*(item.label for item in items)), fields, services)


def _join_states(outcomes: list[State]) -> dict[str, Value]:
    """The joined values of the names any of `outcomes` (forks of one state) wrote."""
    names: dict[str, None] = {}
    for outcome in outcomes:
        names.update(dict.fromkeys(outcome.written))
    joined: dict[str, Value] = {}
    for name in names:
        values = [o[name] for o in outcomes if name in o]
        first = values[0]
        joined[name] = first if all(v is first for v in values) else _join(values)
    return joined


def probe_iterations(program: n.Program) -> int:
    """How many iterations of a followed loop reach every flow an unbounded run has.

    Between two iterations a value moves from the names it is held in to the names those
    are copied into: a relation over the names the program writes. Whatever reaches a
    call at some iteration reaches it along a path of that relation no longer than the
    number of names, so following one more iteration than that many (and two for the
    predecessor's own output to arrive) covers every iteration after it.
    """
    written: set[str] = set(walk.bound_names(program))
    for statement in walk.walk_statements(program.body):
        if isinstance(statement, n.Assign | n.Append):
            root = _root_name(statement.target)
            if root is not None:
                written.add(root)
    return min(MAX_PROBE_ITERATIONS, max(PROBE_ITERATIONS, len(written) + 2))


def _merged(captured: State, current: State) -> State:
    """Where a block defined at run time reads: every name of the scope it captured (as it
    is now, or as the caller's view of the same name, joined), over the current home."""
    view: dict[str, Value] = {}
    for name in captured:
        value = captured[name]
        other = current.get(name)
        view[name] = value if other is None or other is value else _join([value, other])
    return State(view, *current.maps)


def _flatten(value: Value) -> Value:
    """The value with its shape forgotten: the label then covers every member."""
    if value.fields is None:
        return value
    inner = [_flatten(item) for item in value.fields.values()]
    label = value.label.union(*(item.label for item in inner))
    return Value(label, None, value.services.union(*(item.services for item in inner)))


class _Analyser(Visitor[Value]):
    """The abstract interpreter; also the static `Algebra` of `prose.lang.flows`.

    One `exec_<Node>(statement, state)` per statement class and one
    `eval_<Node>(expr, state)` per expression class; each returns a `Value`."""

    prefix = "exec_"
    role = "the flow analysis"

    def __init__(self, result: FlowAnalysis, program: n.Program) -> None:
        self.result = result
        self.decl = result.decl
        self.strict = result.strict
        self.program = program
        self.sites: dict[tuple[Any, ...], int] = {}
        self._session_calls: dict[int, n.Call] = {}  # a session analysed as a call of its agent
        self.blocks: dict[str, set[n.BlockDef]] = {}
        self.block_homes: dict[int, int] = {}  # a block's isolation depth where it is defined
        # A block defined while the program runs (not hoisted): the scope it was defined in,
        # which it reads even when run after that scope ended (a closure, LANGUAGE.md 4.6).
        self.block_scopes: dict[int, State] = {}
        self.block_depth = 0
        self.block_pcs: dict[int, Defs] = {}  # the pc each block definition was made under
        self.pc: Defs = NONE
        self.escaping: Defs = NONE  # what conditional `throw`s raised (`_raise_rest`)
        # Per sequential loop being analysed: what conditional early exits in its body
        # raised; its later iterations run under it (`prose.runtime.pc.iterations`).
        self.left: list[set[int]] = []
        self.collecting: list[Returned] = []  # returns of the innermost collecting body
        # One memory per `persist` agent for the whole run (`prose.lang.flows.remembered`):
        # a definition whose sources grow with every session, wherever it runs.
        self.memory: dict[str, int] = {}
        self.raised: list[set[int]] = [set()]  # errors the innermost `try` or branch may see
        self.handling: list[Defs] = []  # errors a `catch` body handles (for a bare `throw`)
        self.let_frames: list[set[str]] = [set()]  # names bound by `let` per branch/block scope
        self.try_states: list[dict[str, Value]] = []  # what each `try` body ever bound
        self.branch: list[str] = []  # the parallel constructs being analysed, outermost first
        self.globals: dict[str, Value] = {}  # slots, config keys and parameters, read-only
        # The `for s in S` loop being followed iteration by iteration: S and the iteration.
        self.followed: str | None = None
        self.in_followed: list[str] = []  # the followed loops the main analysis is inside
        self.iteration: int | None = None
        self.probe = probe_iterations(program)
        self.predecessor_slots = frozenset(
            invariant.form.slot for invariant in self.decl.invariants
            if isinstance(invariant.form, Predecessor))
        # The list-valued slots a judge is blind to the source of: a loop counter over a list
        # in their binding order carries its position (`prose.lang.flows.loop_counter`).
        self.blind_sources = frozenset(
            invariant.form.sources for invariant in self.decl.invariants
            if isinstance(invariant.form, BlindTo))
        # Per loop body (or parallel branch): the states `continue`, `break` and `return`
        # leave it in, which the end of the body does not see (None: a block, whose exits
        # end the block only).
        self.exits: list[tuple[State, dict[str, list[Value]]] | None] = []

    # --- the algebra of prose.lang.flows ---------------------------------------

    def nothing(self) -> Defs:
        return NONE

    def join(self, labels: Iterable[Defs]) -> Defs:
        return frozenset().union(*labels)

    def text(self, text: str, where: Span) -> Defs:
        if not text.strip():
            return NONE
        def_id = self._define("<text>", where, "text", key=text)
        self.result.defs[def_id].text = text
        return frozenset({def_id})

    def output(self, slot: str, given: Defs, where: Span, branch: tuple[str, ...],
               index: int) -> Defs:
        def_id = self._define(f"<{slot}>", where, "call", slots=(slot,), call_inputs=given,
                              key=(branch, index))
        self.result.defs[def_id].branch = branch
        self.result.defs[def_id].index = index
        return frozenset({def_id})

    def unordered(self, items: Defs, where: Span) -> Defs:
        if not items:
            return items
        def_id = self._define("<shuffled>", where, "shuffle", items, key="items")
        self.result.defs[def_id].unorders = True
        return frozenset({def_id})

    def sealed(self, where: Span) -> Defs:
        return frozenset({self._define("<shuffle key>", where, "shuffle", slots=(flows.SEALED,),
                                       key="key")})

    def order(self, slot: str, where: Span) -> Defs:
        return frozenset({self._define("<position>", where, "position",
                                       slots=(flows.order_marker(slot),), key=slot)})

    def _crossing(self, label: Defs, node: n.Node, name: str = "<join>") -> Defs:
        """A value leaving a parallel construct through its join (one definition marks it)."""
        if not label:
            return label
        def_id = self._define(name, node.span, "join", label, key="join")
        self.result.defs[def_id].crosses = _branch_key(node)
        return frozenset({def_id})

    # --- definitions -----------------------------------------------------------

    def _define(self, name: str, span: Span, kind: str, sources: Iterable[int] = (),
                slots: Iterable[str] = (), call_inputs: Iterable[int] = (), key: Any = None) -> int:
        site = (span, name, kind, key, self.iteration)  # a followed loop's own definitions
        def_id = self.sites.get(site)
        if def_id is None:
            def_id = len(self.result.defs)
            self.result.defs.append(Definition(def_id, name, span, kind))
            self.sites[site] = def_id
        definition = self.result.defs[def_id]
        definition.sources.update(sources)
        definition.slots.update(slots)
        definition.call_inputs.update(call_inputs)
        return def_id

    def _bind(self, name: str, value: Value, span: Span, kind: str) -> Value:
        """A value bound to a name: a definition (for the path), under the program counter."""
        # The definition covers the whole value (its path label shows the copy); the shape
        # is kept beside it, so that a member read stays precise.
        label = flows.bind(self, _flatten(value).label, self.pc, self.strict)
        def_id = self._define(name, span, kind, label)
        shaped = value if not (self.strict and self.pc) else _flatten(value)
        return Value(frozenset({def_id}), shaped.fields, value.services, value.whole)

    # --- statements ------------------------------------------------------------

    def run(self) -> None:
        state = State()
        for statement in self.program.body:  # top-level blocks and `use` aliases are hoisted
            if isinstance(statement, n.BlockDef):
                self.blocks.setdefault(statement.name, set()).add(statement)
            elif isinstance(statement, n.Use):
                state[statement.alias] = Value(services=frozenset({statement.alias}))
        self._body(self.program.body, state)

    def _raise_rest(self, label: Defs, escaping: bool) -> None:
        """Strict mode: the rest of the body runs under `label` (an arm could have left it
        early); `escaping`, the arm could `throw`, so the raise outlives the body (and a
        block's) up to the `try` that catches it (`prose.runtime.pc.raise_rest`)."""
        self.pc = flows.under(self, self.pc, label, True)
        if self.left:  # a later iteration of the loop runs only because this did not leave
            self.left[-1].update(label)
        if escaping:
            self.escaping = self.escaping | label

    def _restore_pc(self, saved: Defs) -> None:
        """The end of a body: the pc it started with, and what conditional throws raised."""
        self.pc = saved | self.escaping if self.escaping else saved

    def _body(self, body: tuple[n.Stmt, ...], state: State, collecting: bool = False) -> Value:
        """Run a block; its value is the last statement's (a collecting body's iteration value)."""
        last = CONSTANT
        saved_pc = self.pc  # an early exit raises the pc for the rest of this body only
        try:
            for position, statement in enumerate(body):
                self._snapshot(state)
                if (collecting and position == len(body) - 1
                        and isinstance(statement, n.LoopNode)):
                    last = self._loop(statement, state, collecting=True)  # LANGUAGE.md 4.3
                else:
                    last = self.visit(statement, state)
            self._snapshot(state)
        finally:
            self._restore_pc(saved_pc)
        return last

    def _snapshot(self, state: State) -> None:
        """A `catch` may start from any state its `try` body passes through."""
        if self.try_states:
            history = self.try_states[-1]
            for name in state.written:
                value = state[name]
                seen = history.get(name)
                if seen is not value:
                    history[name] = value if seen is None else _join([seen, value])

    def _exit(self, statement: n.Stmt, state: State) -> Value:
        """`continue`, `break` (and `return`): the body ends here, with the state as it is."""
        frame = self.exits[-1] if self.exits else None
        if frame is not None:
            body, exits = frame
            for layer in state.maps:
                for name in layer:
                    exits.setdefault(name, []).append(state[name])
                if layer is body.maps[0]:
                    break
        return CONSTANT

    exec_Continue = exec_Break = _exit

    def exec_Let(self, statement: n.Let, state: State) -> Value:
        value = self._expr(statement.value, state)
        if statement.destructure:
            self._may_fail_on(value)
        where = statement.head if statement.head.line else statement.span
        for name in statement.names:
            part = self._member(value, name) if statement.destructure else value
            state[name] = self._bind(name, part, where, "let")
            self.let_frames[-1].add(name)
        return value

    def exec_Assign(self, statement: n.Assign, state: State) -> Value:
        value = self._expr(statement.value, state)
        root = _root_name(statement.target)
        if root is None:
            return value
        if isinstance(statement.target, n.Name):
            state[root] = self._bind(root, value, statement.span, "assign")
            return value
        # `x.k = v` keeps the rest of `x` (its shape where it is known); `x[i] = v` too.
        old = state.get(root, self._name(root, state))
        keys: list[Defs] = []
        updated = self._store(old, statement.target, value, state, keys)
        if updated.fields is None:
            label = _flatten(old).label | _flatten(value).label
        else:
            label = old.label
        merged = Value(label | frozenset().union(*keys), updated.fields,
                       old.services | value.services)
        state[root] = self._bind(root, merged, statement.span, "assign")
        return value

    def _store(self, old: Value, target: n.Expr, value: Value, state: State,
               keys: list[Defs]) -> Value:
        """`old` with the member or index that `target` names set to `value` (shape kept)."""
        if isinstance(target, n.Name):
            return value
        if isinstance(target, n.Index):
            key = self._expr(target.index, state)
            keys.append(flows.stored_key(self, NONE, _flatten(key).label))
            container = self._store(old, target.obj, Value(), state, keys)
            return Value(container.label, None, container.services)
        assert isinstance(target, n.Member)
        path: list[str] = []
        node: n.Expr = target
        while isinstance(node, n.Member):
            path.append(node.name)  # a key written in the pattern is its literal text
            keys.append(flows.stored_key(self, NONE, self.text(node.name, node.span)))
            node = node.obj
        if not isinstance(node, n.Name):
            return Value(old.label, None)
        return _set_path(old, list(reversed(path)), value)

    def exec_Append(self, statement: n.Append, state: State) -> Value:
        value = self._expr(statement.value, state)
        root = _root_name(statement.target)
        if root is not None:
            old = state.get(root, self._name(root, state))
            merged = Value(old.label | _flatten(value).label | _flatten(old).label, None,
                           _flatten(old).services | _flatten(value).services)
            state[root] = self._bind(root, merged, statement.span, "record")
        return CONSTANT

    def exec_ExprStmt(self, statement: n.ExprStmt, state: State) -> Value:
        return self._expr(statement.expr, state)

    def exec_Return(self, statement: n.Return, state: State) -> Value:
        value = self._expr(statement.value, state) if statement.value is not None else CONSTANT
        self._exit(statement, state)  # it ends a collecting loop's iteration or a branch
        label = flows.bind(self, _flatten(value).label, self.pc, self.strict)
        if self.collecting:
            self.collecting[-1].add_value(value, label)
        elif self.iteration is None:
            self.result.returns.append((statement, replace(value, label=label)))
        return value

    def exec_Throw(self, statement: n.Throw, state: State) -> Value:
        if statement.value is None:
            if self.handling:
                self.raised[-1].update(self.handling[-1])
            return CONSTANT
        value = _flatten(self._expr(statement.value, state))
        label = flows.thrown(self, flows.bind(self, value.label, self.pc, self.strict))
        self.raised[-1].add(self._define("<error>", statement.span, "error", label))
        return CONSTANT

    def exec_Repeat(self, loop: n.LoopNode, state: State) -> Value:
        return self._loop(loop, state, collecting=False)

    exec_For = exec_Loop = exec_Repeat

    def eval_Repeat(self, loop: n.LoopNode, state: State) -> Value:
        return self._loop(loop, state, collecting=True)

    eval_For = eval_Loop = eval_Repeat

    def _loop(self, loop: n.LoopNode, state: State, collecting: bool) -> Value:
        shape = loop_shape(loop)
        parallel = shape.parallel
        depends: Defs = NONE
        element = Value()
        counter = CONSTANT
        whole: str | None = None
        if shape.items is not None:
            iterable = self._expr(shape.items, state)
            self._may_fail_on(iterable)  # `for` over a value that is no list is an error
            whole = iterable.whole
            element = Value(_flatten(iterable).label, None, iterable.services)
            # Strict mode: the body depends on the list, and a list of services is their
            # names (`<service NAME>`, as the run time labels it): iterating the services
            # of `S` tells the body which service it is at.
            depends = _flatten(self._rendered(iterable)).label
            if self.blind_sources and isinstance(loop, n.For) and loop.index_var:
                revealed = flows.revealed_orders(self.result.chains(iterable),
                                                 iterable.services, self.blind_sources)
                if revealed:
                    counter = Value(flows.loop_counter(self, revealed, loop.span))
        bound = self._expr(shape.bound, state)
        self._may_fail_on(bound)  # a count or `max:` that is no integer is an error
        depends = depends | bound.label
        self.result.count_iterations(loop, depends)
        saved_pc = self.pc
        collected: set[int] = set()
        services: set[str] = set()  # the services the iterations' values may be
        errors: set[int] = set()
        following = False
        self.left.append(set())
        try:
            self.pc = flows.under(self, self.pc, depends, self.strict)
            # `for s in S` over the list slot S itself (or a copy of it) is followed
            # iteration by iteration: iteration i calls S's i-th service.
            following = (isinstance(loop, n.For) and not parallel
                         and whole in self.predecessor_slots
                         and self.iteration is None)
            if following:
                assert isinstance(loop, n.For) and whole is not None
                self._follow(loop, state, element, whole, counter)
                self.in_followed.append(whole)
            for _ in range(MAX_ITERATIONS):
                blocks_before = self._block_count()
                if self.left[-1] and not parallel:  # no earlier iteration left early
                    self.pc = flows.under(self, self.pc, frozenset(self.left[-1]), True)
                body_state = state.isolate() if parallel else state.fork()
                if isinstance(loop, n.For):
                    body_state[loop.var] = self._bind(loop.var, element, loop.span, "loop")
                    if loop.index_var:
                        body_state[loop.index_var] = self._bind(loop.index_var, counter, loop.span,
                                                                "loop")
                elif loop.var:
                    body_state[loop.var] = self._bind(loop.var, CONSTANT, loop.span, "loop")
                if isinstance(loop, n.Loop) and loop.condition is not None:
                    depends = depends | self._condition(loop.condition, body_state)
                    self.pc = flows.under(self, self.pc, depends, self.strict)
                # A `return` belongs to the innermost collecting loop, or ends a parallel
                # branch (LANGUAGE.md 4.3); in a plain loop it passes through.
                collects = collecting or parallel
                if collects:
                    self.collecting.append(Returned())
                if parallel:
                    self.raised.append(set())
                    self.let_frames.append(set())
                    self.branch.append(_branch_key(loop))
                exits: dict[str, list[Value]] = {}
                self.exits.append(None if parallel else (body_state, exits))
                try:
                    last = self._body(loop.body, body_state, collecting=collecting)
                finally:
                    self.exits.pop()
                    returned = self.collecting.pop() if collects else Returned()
                    if parallel:
                        errors |= self.raised.pop()
                        self.let_frames.pop()
                        self.branch.pop()
                collected |= returned | _flatten(last).label
                services |= returned.services | _flatten(last).services
                if parallel:
                    self.raised[-1].update(self._crossing(frozenset(errors), loop, "<errors>"))
                    if self._block_count() == blocks_before:
                        break
                    continue
                # The loop may run zero or more times: join what the body wrote with before.
                # An iteration ends at the end of the body or at a `continue`, `break` or
                # `return` (`exits`).
                changed = {}
                for name in {**body_state.written, **exits}:
                    candidates = [*([body_state[name]] if name in body_state else []),
                                  *exits.get(name, [])]
                    old = state.get(name)
                    joined = _join(candidates if old is None else [old, *candidates])
                    if joined != old:
                        changed[name] = joined
                state.merge(changed)
                if not changed and self._block_count() == blocks_before:
                    break
            if parallel and _may_continue(getattr(loop, "modifiers", ())):
                collected |= errors
            elif parallel:
                failed: Defs = flows.raced(self, frozenset(errors), self.strict)
                collected |= failed
            if not collecting:
                return CONSTANT
            label = flows.bind(self, frozenset(collected), self.pc, self.strict)
            if parallel:
                return Value(self._crossing(label, loop, "<loop>"), None, frozenset(services))
            return Value(frozenset({self._define("<loop>", loop.span, "join", label)}), None,
                         frozenset(services))
        finally:
            self.left.pop()
            self._restore_pc(saved_pc)
            if following:
                self.in_followed.pop()

    def _follow(self, loop: n.For, state: State, element: Value, slot: str,
                counter: Value = CONSTANT) -> None:
        """Follow the first iterations of `for s in S` one by one, each starting where the
        previous one ended, with definitions of their own: a call then knows which
        iteration made each output of S it receives (its own definitions say so)."""
        self.followed = slot
        run = state.fork()
        saved_raised = self.raised
        self.raised = [set()]  # what these iterations raise is known to the main analysis
        try:
            for iteration in range(self.probe):
                self.iteration = iteration
                body = run.fork()
                body[loop.var] = self._bind(loop.var, element, loop.span, "loop")
                if loop.index_var:
                    body[loop.index_var] = self._bind(loop.index_var, counter, loop.span, "loop")
                exits: dict[str, list[Value]] = {}
                self.collecting.append(Returned())
                self.exits.append((body, exits))
                try:
                    self._body(loop.body, body)
                finally:
                    self.exits.pop()
                    self.collecting.pop()
                run.merge({name: _join([*([body[name]] if name in body else []),
                                        *exits.get(name, [])])
                           for name in {**body.written, **exits}})
        finally:
            self.iteration = None
            self.followed = None
            self.raised = saved_raised

    def _block_count(self) -> int:
        return sum(len(found) for found in self.blocks.values())

    def exec_Parallel(self, statement: n.Parallel, state: State) -> Value:
        published: dict[str, list[Value]] = {}
        values = Returned()
        errors: set[int] = set()
        for modifier in statement.modifiers:
            self._expr(modifier.value, state)
        for branch in statement.branches:
            child = state.isolate()
            self.collecting.append(Returned())
            self.raised.append(set())
            self.let_frames.append(set())
            self.branch.append(_branch_key(statement))
            exits: dict[str, list[Value]] = {}
            self.exits.append((child, exits))
            try:
                last = self.visit(branch, child)
            finally:
                self.exits.pop()
                popped = self.collecting.pop()
                values |= popped
                values.services |= popped.services
                errors |= self.raised.pop()
                names = self.let_frames.pop()
                self.branch.pop()
            values.add_value(last, _flatten(last).label)
            for name in names:  # every `let` of the branch, nested ones too (LANGUAGE.md 4.1)
                published.setdefault(name, []).extend([child[name], *exits.get(name, [])])
        self.raised[-1].update(self._crossing(frozenset(errors), statement, "<errors>"))
        for name, candidates in published.items():
            joined = _join(candidates)
            crossed = self._crossing(_flatten(joined).label, statement, name)
            state[name] = Value(crossed, None, joined.services)
            self.let_frames[-1].add(name)
        if _may_continue(statement.modifiers):
            values |= errors
        else:
            failed: Defs = flows.raced(self, frozenset(errors), self.strict)
            values |= failed
        return Value(self._crossing(frozenset(values), statement), None,
                     frozenset(values.services))

    eval_Parallel = exec_Parallel

    def exec_If(self, statement: n.If, state: State) -> Value:
        outcomes: list[State] = []
        saved_pc = self.pc
        depends: Defs = NONE
        try:
            for arm in statement.branches:
                depends = depends | self._condition(arm.condition, state)
                self.pc = flows.under(self, saved_pc, depends, self.strict)
                child = state.fork()
                self._body(arm.body, child)
                outcomes.append(child)
            other = state.fork()
            if statement.orelse is not None:
                self._body(statement.orelse, other)
            outcomes.append(other)
        finally:
            self._restore_pc(saved_pc)
        state.merge(_join_states(outcomes))
        if self.strict and flows.exits_early(statement):  # the rest runs only if no arm left
            self._raise_rest(depends, flows.may_throw(statement))
        return CONSTANT

    def exec_Choice(self, statement: n.Choice, state: State) -> Value:
        depends = self._condition(statement.criteria, state)
        saved_pc = self.pc
        outcomes: list[State] = []
        try:
            self.pc = flows.under(self, saved_pc, depends, self.strict)
            for option in statement.options:
                child = state.fork()
                self._body(option.body, child)
                outcomes.append(child)
        finally:
            self._restore_pc(saved_pc)
        state.merge(_join_states(outcomes))
        if self.strict and flows.exits_early(statement):  # the rest runs only if no option left
            self._raise_rest(depends, flows.may_throw(statement))
        return CONSTANT

    def exec_Try(self, statement: n.Try, state: State) -> Value:
        body = state.fork()
        self.raised.append(set())
        self.try_states.append({})
        before, outer = self.pc, self.escaping
        if statement.handler is not None:  # a `throw` inside stops at this `try`
            self.escaping = NONE
        try:
            self._body(statement.body, body)
        finally:
            errors = frozenset(self.raised.pop())
            history = self.try_states.pop()
            if statement.handler is not None:
                self.pc, self.escaping = before, outer
        if statement.handler is None:
            self.raised[-1].update(errors)
            state.merge({name: body[name] for name in body.written})
        else:
            # The handler may start from any state the body passed through.
            handler = state.fork()
            for name, value in history.items():
                handler[name] = _join([state[name], value]) if name in state else value
            label = flows.error_object(self, errors)
            if statement.catch_var:
                handler[statement.catch_var] = self._bind(
                    statement.catch_var, Value(label), statement.span, "catch")
            saved_pc = self.pc
            self.pc = flows.under(self, self.pc, label, self.strict)
            self.handling.append(errors)
            self.try_states.append({})
            try:
                self._body(statement.handler, handler)
            finally:
                self._restore_pc(saved_pc)
                self.handling.pop()
                for name, value in self.try_states.pop().items():
                    seen = history.get(name)
                    history[name] = value if seen is None else _join([seen, value])
            state.merge(_join_states([body, handler]))
            if self.strict and flows.exits_early(statement.handler):
                # The rest runs only because the body raised nothing the `catch` left on.
                self._raise_rest(label, flows.may_throw(statement.handler))
        if statement.final is not None:
            # `finally` also runs after an error, a `return`, `break` or `continue` in the
            # body or the handler: from any state they passed through.
            state.merge({name: _join([state[name], value]) if name in state else value
                         for name, value in history.items()})
            self._body(statement.final, state)
        return CONSTANT

    def exec_Orphan(self, statement: n.Orphan, state: State) -> Value:
        self._body(statement.body, state.fork())
        return CONSTANT

    def exec_BlockDef(self, statement: n.BlockDef, state: State) -> Value:
        self.blocks.setdefault(statement.name, set()).add(statement)  # a definition that may run
        self.block_pcs[id(statement)] = self.block_pcs.get(id(statement), NONE) | self.pc
        self.block_homes[id(statement)] = state.depth
        earlier = self.block_scopes.get(id(statement))
        self.block_scopes[id(statement)] = state if earlier is None else _merged(earlier, state)
        return CONSTANT

    def exec_Use(self, statement: n.Use, state: State) -> Value:
        state[statement.alias] = Value(services=frozenset({statement.alias}))
        return CONSTANT

    def exec_Do(self, statement: n.Do, state: State) -> Value:
        args = [self._expr(arg, state) for arg in statement.args]
        if statement.name is None:
            return self._invoke(statement.body, (), [], state.isolate(), statement.span)
        values = []
        for block in sorted(self.blocks.get(statement.name, ()), key=lambda b: (b.line, b.column)):
            if self.block_depth >= MAX_BLOCK_DEPTH or len(block.params) != len(args):
                continue
            self.block_depth += 1
            try:
                # A block runs in a child of the scope it was defined in (LANGUAGE.md 4.1).
                home = state.home(self.block_homes.get(id(block), 0))
                captured = self.block_scopes.get(id(block))
                if captured is not None and captured is not home:
                    home = _merged(captured, home)
                # Strict mode: which definition runs depends on where it was defined.
                chosen: Defs = flows.defined(self, self.block_pcs.get(id(block), NONE),
                                             self.strict)
                saved_pc = self.pc
                self.pc = self.pc | chosen
                try:
                    value = self._invoke(block.body, block.params, args, home.isolate(),
                                         statement.span)
                finally:
                    self._restore_pc(saved_pc)
                if chosen:
                    value = _flatten(value)
                    value = Value(value.label | chosen, None, value.services)
                values.append(value)
            finally:
                self.block_depth -= 1
        return _join(values) if values else CONSTANT

    eval_Do = exec_Do

    def exec_AgentDef(self, statement: n.AgentDef, state: State) -> Value:
        return CONSTANT  # its `prompt` is the role prompt of its sessions' service

    def eval_Session(self, session: n.Session, state: State) -> Value:
        """A session is a call of the slot named by its agent (`prose.lang.flows`); `resume`
        is also given the agent's memory, which each session of a `persist` agent grows."""
        slot = session.slot
        call = self._session_calls.get(id(session))
        if call is None:
            call = n.Call(n.Name(slot, span=session.head), session.properties,
                          head=session.head, span=session.span)
            self._session_calls[id(session)] = call
        site = self.result.calls.setdefault(id(call), CallFlow(call))
        site.slots.add(slot)
        site.target = "session"
        given: list[Defs] = []
        for prop in session.properties:
            value = self._rendered(self._expr(prop.value, state))
            entry = site.inputs.get(prop.name)
            site.inputs[prop.name] = (InputFlow(prop.name, prop, value) if entry is None
                                      else InputFlow(prop.name, prop, _join([entry.value, value])))
            if prop.name not in CONTROL_PROPERTIES:
                given.append(_flatten(value).label)
        if session.prompt is not None:  # an inline prompt is the call's `prompt` channel
            value = self._rendered(self._expr(session.prompt, state))
            prop = n.Property("prompt", session.prompt, span=session.prompt.span)
            entry = site.inputs.get("prompt")
            site.inputs["prompt"] = (InputFlow("prompt", prop, value) if entry is None
                                     else InputFlow("prompt", prop, _join([entry.value, value])))
            given.append(_flatten(value).label)
        memory = self._memory(slot, session)
        if session.resume:  # the memory is sent as an input named `memory`
            given.append(frozenset({memory}))
            held = Value(frozenset({memory}))
            entry = site.inputs.get(MEMORY_INPUT)
            prop = (entry.prop if entry is not None else
                    n.Property(MEMORY_INPUT, n.Name(f"<memory {slot}>", span=session.head),
                               span=session.head))
            site.inputs[MEMORY_INPUT] = InputFlow(MEMORY_INPUT, prop, held)
        joined = self.join(given)
        branch = tuple(self.branch)
        site.branches.add(branch)
        label = flows.call_output(self, slot, joined, session.head, branch, flows.UNKNOWN_INDEX)
        self.raised[-1].update(label)
        # The agent's one memory grows by what this session was given and answered (and, in
        # strict mode, the program counter it ran under), wherever the session runs.
        grown: Defs = flows.bind(self, flows.remembered(self, NONE, joined, label), self.pc,
                                 self.strict)
        # The memory is the agent's one, whatever branch a session runs in: what a session in
        # a parallel branch adds is read by its siblings' sessions, as a value collected at
        # the branches' join is (each `A` sees only its own chain).
        for key in reversed(branch):
            if grown:
                def_id = self._define("<memory>", session.head, "join", grown, key=("memory", key))
                self.result.defs[def_id].crosses = key
                grown = frozenset({def_id})
        self.result.defs[memory].sources.update(grown)
        return Value(label)

    def _memory(self, slot: str, session: n.Session) -> int:
        """The definition holding `slot`'s memory for the run (made at its first session)."""
        found = self.memory.get(slot)
        if found is None:
            found = self.memory[slot] = len(self.result.defs)
            self.result.defs.append(Definition(found, f"<memory {slot}>", session.head, "memory"))
        return found

    def eval_Pipeline(self, pipeline: n.Pipeline, state: State) -> Value:
        current = self._expr(pipeline.source, state)
        self._may_fail_on(current)
        self.result.count_iterations(pipeline, _flatten(current).label)  # every stage's count
        for stage in pipeline.stages:
            current = self._stage(stage, current, state)
        return current

    def _stage(self, stage: n.Stage, current: Value, state: State) -> Value:
        """One stage to a fixpoint: each body in a scope of its own (writes to outer names
        reach the state); its value is its `return` or last statement."""
        items = _flatten(current).label
        element = Value(items, None, current.services)
        acc = element
        values: Defs = NONE
        services: set[str] = set()
        saved_pc = self.pc
        parallel = stage.op == "pmap"
        self.pc = flows.under(self, self.pc, items, self.strict)
        try:
            for _ in range(MAX_ITERATIONS):
                body = state.fork()
                bound = (acc, element) if stage.op == "reduce" else (element,)
                for param, value in zip(stage.params, bound, strict=True):
                    body[param] = self._bind(param, value, stage.span, "loop")
                self.collecting.append(Returned())
                self.let_frames.append(set())
                self.exits.append(None)
                if parallel:
                    self.branch.append(_branch_key(stage))
                try:
                    last = self._body(stage.body, body, collecting=True)
                finally:
                    self.exits.pop()
                    returned = self.collecting.pop()
                    self.let_frames.pop()
                    if parallel:
                        self.branch.pop()
                result = frozenset(returned) | _flatten(last).label
                services |= returned.services | _flatten(last).services
                grown = not result <= values
                values |= result
                changed = {name: _join([state[name], body[name]]) for name in body.written
                           if name in state and name not in stage.params
                           and _join([state[name], body[name]]) != state[name]}
                state.merge(changed)
                if stage.op == "reduce":
                    acc = Value(_flatten(acc).label | values)
                if not changed and not grown:
                    break
            if stage.op == "filter":
                decided: Defs = flows.filtered(self, self.pc, values, self.strict)
                label = items | decided
            elif stage.op == "reduce":
                label = flows.bind(self, _flatten(acc).label, self.pc, self.strict)
            else:
                label = flows.bind(self, values, self.pc, self.strict)
        finally:
            self._restore_pc(saved_pc)
        kept = frozenset(current.services if stage.op == "filter" else services)
        if parallel:
            return Value(self._crossing(label, stage, "<pmap>"), None, kept)
        return Value(frozenset({self._define(f"<{stage.op}>", stage.span, "join", label)}), None,
                     kept)

    def _invoke(self, body: tuple[n.Stmt, ...], params: tuple[str, ...], args: list[Value],
                inner: State, span: Span) -> Value:
        """A block invocation: its own scope; its value is its `return` or last statement."""
        for param, arg in zip(params, args, strict=True):
            inner[param] = self._bind(param, arg, span, "param")
        self.collecting.append(Returned())
        self.let_frames.append(set())
        self.exits.append(None)
        try:
            last = self._body(body, inner, collecting=True)
        finally:
            self.exits.pop()
            returned = self.collecting.pop()
            self.let_frames.pop()
        if not returned and not returned.services:
            return last
        return _join([last, Value(frozenset(returned), None, frozenset(returned.services))])

    # --- expressions -------------------------------------------------------------

    def _expr(self, expr: n.Expr | None, state: State) -> Value:
        if expr is None:
            return CONSTANT
        return self.handler(expr, "eval_")(expr, state)

    def eval_Literal(self, expr: n.Literal, state: State) -> Value:
        return CONSTANT

    def eval_Name(self, expr: n.Name, state: State) -> Value:
        return self._name(expr.name, state)

    def eval_Member(self, expr: n.Member, state: State) -> Value:
        holder = self._expr(expr.obj, state)
        if holder.fields is None:  # `.k` of a value that is no object is an error (of an
            self._may_fail_on(holder)  # object whose shape is known, it never is)
        return self._member(holder, expr.name)

    def eval_Shuffle(self, expr: n.Shuffle, state: State) -> Value:
        items = self._expr(expr.items, state)
        self._may_fail_on(items)
        label, key = flows.shuffled(self, _flatten(items).label, expr.span)
        return Value(NONE, {"items": Value(label, None, items.services), "key": Value(key)})

    def eval_Array(self, expr: n.Array, state: State) -> Value:
        items = [self._expr(item, state) for item in expr.items]
        label = flows.container(self, [_flatten(item).label for item in items], ())
        return Value(label, None, frozenset().union(*(item.services for item in items)))

    def eval_Object(self, expr: n.Object, state: State) -> Value:
        entries = {entry.key: self._expr(entry.value, state) for entry in expr.entries}
        keys = flows.container(self, (), [(e.key, e.span) for e in expr.entries])
        return Value(keys, entries, frozenset().union(*(v.services for v in entries.values())))

    def eval_Compare(self, expr: n.Compare, state: State) -> Value:
        operands = [self._expr(expr.left, state), self._expr(expr.right, state)]
        if expr.op not in ("==", "!="):  # the others refuse operands of the wrong types
            self._may_fail_on(*operands)
        return Value(flows.predicate(self, [_flatten(o).label for o in operands]), {})

    def eval_BoolOp(self, expr: n.BoolOp, state: State) -> Value:
        operands = [self._expr(operand, state) for operand in expr.operands]
        return Value(flows.predicate(self, [_flatten(o).label for o in operands]), {})

    def eval_Not(self, expr: n.Not | n.IsTest, state: State) -> Value:
        operand = _flatten(self._expr(expr.operand, state))
        return Value(flows.predicate(self, [operand.label]), {})

    eval_IsTest = eval_Not

    def _may_fail_on(self, *values: Value) -> None:
        """An error this expression may raise is about `values` (its message describes their
        type, size or text; that it is raised depends on them): the enclosing `try`'s `catch`
        carries them (`prose.lang.flows.value_error`)."""
        labels: list[Defs] = [_flatten(value).label for value in values]
        described: Defs = flows.value_error(self, labels)
        self.raised[-1].update(described)

    def _operated(self, operands: Iterable[n.Expr | None], state: State) -> Value:
        """An operator, slice or built-in (`prose.lang.builtins.result`): the result and every
        part of it carry everything the operands carried; no member is known, and a service
        among the operands may be what it gives (`max(handlers, ...)`)."""
        values = [_flatten(self._expr(operand, state)) for operand in operands
                  if operand is not None]
        return self._combined(values)

    def _combined(self, values: list[Value]) -> Value:
        self._may_fail_on(*values)
        label = builtins.result(self, [value.label for value in values])
        return Value(label, None, frozenset().union(*(value.services for value in values)))

    def eval_BinOp(self, expr: n.BinOp, state: State) -> Value:
        left, right = (_flatten(self._expr(side, state)) for side in (expr.left, expr.right))
        value = self._combined([left, right])
        if expr.op != "+":
            return value
        # Two strings of the pattern's own text joined are its literal text too (5.2, a role
        # name split across literal pieces), as the run time records (`builtins.labelled`).
        firsts, seconds = self._literal_only(left), self._literal_only(right)
        if not firsts or not seconds or len(firsts) * len(seconds) > flows.MAX_JOINED_TEXTS:
            return value
        joined: Defs = self.join([self.text(a + b, expr.span) for a in firsts for b in seconds])
        return Value(value.label | joined, None, value.services)

    def eval_Slice(self, expr: n.Slice, state: State) -> Value:
        return self._operated((expr.obj, expr.start, expr.stop), state)

    def eval_Builtin(self, expr: n.Builtin, state: State) -> Value:
        return self._operated((*expr.args, *(prop.value for prop in expr.keywords)), state)

    def _name(self, name: str, state: State) -> Value:
        found = state.get(name)
        if found is not None:
            return found
        known = self.globals.get(name)
        if known is not None:
            return known
        if name in self.decl.slots:
            known = Value(services=frozenset({name}), whole=name)
        elif name in self.decl.config:  # a default's strings are the pattern's own literal text
            config = self.decl.config[name]
            label: set[int] = set()
            for text in default_texts(config.default):
                def_id = self._define(name, config.span, "config", key=text)
                self.result.defs[def_id].text = text
                label.add(def_id)
            known = Value(frozenset(label))
        else:
            known = Value()
        self.globals[name] = known
        return known

    def eval_String(self, expr: n.String, state: State) -> Value:
        pieces: list[str] = []
        values: list[Defs] = []
        options: list[list[str]] | None = []  # each part's possible literal texts, if known
        for part in expr.parts:
            if isinstance(part, str):
                pieces.append(part)
                if options is not None:
                    options.append([part])
                continue
            value = self._name(part.path[0], state)
            for name in part.path[1:]:
                value = self._member(value, name)
            values.append(_flatten(self._rendered(value)).label)
            texts = self._literal_only(value)
            options = None if options is None or texts is None else [*options, texts]
        joined: list[str] = []
        if values and options is not None and math.prod(map(len, options)) <= flows.MAX_JOINED_TEXTS:
            joined = ["".join(combination) for combination in itertools.product(*options)]
        label = flows.string(self, pieces, values, expr.span, joined)
        if not values:
            return Value(label, {})
        # One definition for the new text, so a path shows "interpolated into a string here".
        return Value(frozenset({self._define("<string>", expr.span, "string", label)}), {})

    def _member(self, value: Value, name: str) -> Value:
        element: Value | None
        if value.fields is not None and name in value.fields:
            element = value.fields[name]
        elif value.fields is not None and name != "length":
            element = CONSTANT  # a missing key reads null
        else:
            element = None
        label = flows.member(self, _flatten(value).label if element is None else value.label,
                             None if element is None else _flatten(element).label)
        if element is None:
            return Value(label, None, value.services)
        return Value(label, element.fields, element.services)

    def eval_Index(self, expr: n.Index, state: State) -> Value:
        container = self._expr(expr.obj, state)
        key = self._expr(expr.index, state)
        element: Value | None = None
        if (container.fields is not None and isinstance(expr.index, n.String)
                and len(expr.index.parts) == 1 and isinstance(expr.index.parts[0], str)):
            element = container.fields.get(expr.index.parts[0], CONSTANT)
        label = flows.index(self, _flatten(container).label,
                            None if element is None else _flatten(element).label,
                            _flatten(key).label, self.strict)
        # Out of range or of the wrong type, the error describes the index and the list.
        described: Defs = flows.value_error(
            self, [_flatten(key).label, flows.length(self, _flatten(container).label)])
        self.raised[-1].update(described)
        return Value(label, element.fields if element is not None else None, container.services)

    def eval_Call(self, call: n.Call, state: State) -> Value:
        target = self._expr(call.target, state)
        site = self.result.calls.get(id(call))
        if site is None:
            site = self.result.calls[id(call)] = CallFlow(call)
        site.slots |= {slot for slot in target.services if slot in self.decl.slots}
        site.target_defs |= target.label
        site.holds_service = site.holds_service or bool(target.services)
        if self.iteration is None and any(slot in self.predecessor_slots and slot not in
                                          self.in_followed for slot in target.services):
            site.unfollowed = True
        if target.services and not site.slots:
            site.target = "alias"
        elif not target.services:
            site.target = "unknown"
        given: list[Defs] = []
        visit: dict[str, Value] = {}
        for prop in call.properties:
            value = visit[prop.name] = self._rendered(self._expr(prop.value, state))
            entry = site.inputs.get(prop.name)
            if entry is None:
                site.inputs[prop.name] = InputFlow(prop.name, prop, value)
            else:
                entry.value = _join([entry.value, value])
            if prop.name not in CONTROL_PROPERTIES:
                given.append(_flatten(value).label)
        head = call.head if call.head.line else call.span
        joined = self.join(given)
        branch = tuple(self.branch)
        site.branches.add(branch)
        label = self.join(
            flows.call_output(self, slot, joined, head, branch,
                              self.iteration if slot == self.followed and self.iteration is not None
                              else flows.UNKNOWN_INDEX)
            for slot in sorted(target.services))
        if self.iteration is not None and self.followed in target.services:
            self.result.iterations.setdefault(id(call), []).append((self.iteration, visit))
        self.raised[-1].update(label)  # a failed call's error carries the same label
        return Value(label)

    def _literal_only(self, value: Value) -> list[str] | None:
        """The literal texts a value may be, when it may only be the pattern's literal
        strings (no call output, no parameter); None when that is not known."""
        texts: list[str] = []
        seen: set[int] = set()
        stack = list(_flatten(value).label)
        if not stack or value.services:
            return None
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            definition = self.result.defs[current]
            if definition.slots or definition.kind in ("call", "config", "memory", "join"):
                return None
            if definition.text is not None:
                texts.append(definition.text)
            stack.extend(definition.sources)
        return sorted(set(texts)) or None

    def _rendered(self, value: Value) -> Value:
        """A value as a message carries it: a service in it is rendered as `<service NAME>`,
        the pattern's literal text naming the slot (`prose.lang.flows.service`)."""
        services = _flatten(value).services
        if not services:
            return value
        texts = self.join(flows.service(self, slot, self.decl.slots[slot].span
                                        if slot in self.decl.slots else n.NO_SPAN)
                          for slot in sorted(services))
        return Value(value.label | texts, value.fields, value.services)

    def _condition(self, condition: n.Condition, state: State) -> Defs:
        """Analyse a condition; its label (what a decision depends on)."""
        if condition.predicate is not None:
            return _flatten(self._expr(condition.predicate, state)).label
        judge = self.result.judges.setdefault(id(condition), JudgeFlow(condition))
        labels: list[Defs] = []
        for mention in condition.mentions:
            head = mention.split(".")[0]
            if head in state:
                value = _flatten(state[head])
                judge.mentions[mention] = _join([judge.mentions.get(mention, Value()), value])
                labels.append(value.label)
            elif head in self.decl.config or (
                head in self.decl.parameters and head not in self.decl.slots
            ):
                judge.mentions.setdefault(mention, Value())
        return self.join(labels)


def _set_path(old: Value, path: list[str], value: Value, depth: int = 0) -> Value:
    if not path:
        return value
    if old.fields is None or depth >= MAX_SHAPE_DEPTH:
        return Value(old.label | _flatten(value).label, None, old.services)
    fields = dict(old.fields)
    fields[path[0]] = _set_path(fields.get(path[0], CONSTANT), path[1:], value, depth + 1)
    return Value(old.label, fields, old.services)


def _branch_key(node: n.Node) -> str:
    """How a parallel construct is named in branch paths (its position)."""
    return f"{node.line}:{node.column}"


def _may_continue(modifiers: tuple[n.Modifier, ...]) -> bool:
    """Whether failed branches may stay in the value (`on-fail: "continue"`, or not literal)."""
    for modifier in modifiers:
        value = modifier.value
        literal = (value.parts[0] if isinstance(value, n.String) and len(value.parts) == 1
                   and isinstance(value.parts[0], str) else None)
        if literal is None:
            return True
        if literal == "continue":
            return True
    return False


def _root_name(expr: n.Expr) -> str | None:
    while isinstance(expr, n.Member | n.Index):
        expr = expr.obj
    return expr.name if isinstance(expr, n.Name) else None
