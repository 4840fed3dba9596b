"""Provenance analysis: which slots' outputs may reach each call input.

A reaching-definitions analysis over the AST. Every place that binds a
variable (a `let`, an assignment, a `record`/`append`, a loop or catch
variable, a destructuring, a branch result published at a join) is a
*definition* with the definitions it copies from (`sources`) and the slots
whose call output it holds directly (`slots`). A call is a boundary: the
definition of a call's result has the called slot as its only provenance; for
the "even indirectly" form its *transitive* provenance also includes
everything the call was given. Loops are iterated to a fixpoint, so a value
recorded in iteration k reaches the calls of iteration k+1. Member and index
reads carry the whole container's provenance (coarser than the runtime,
never finer, as LANGUAGE.md 5 allows).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from prose.check.declarations import Declarations
from prose.check.semantic import SemanticModel
from prose.diagnostics.model import Label
from prose.source import Span
from prose.syntax import nodes as n

State = dict[str, frozenset[int]]
MAX_BLOCK_DEPTH = 8


@dataclass
class Definition:
    id: int
    name: str
    span: Span
    kind: str  # let, assign, record, loop, catch, call, param, join
    slots: set[str] = field(default_factory=set)
    sources: set[int] = field(default_factory=set)
    call_inputs: set[int] = field(default_factory=set)  # for call results: what the call was given
    text: str | None = None  # for string literals: the pattern's own literal text


@dataclass
class Value:
    """What an expression evaluates to, abstractly."""

    defs: frozenset[int] = frozenset()
    calls: frozenset[int] = frozenset()  # call-result definitions created by the expression


@dataclass
class InputFlow:
    """One input of one call site: where its value may come from."""

    name: str
    prop: n.Property
    value: Value = field(default_factory=Value)


@dataclass
class CallFlow:
    call: n.Call
    slot: str | None
    target: str
    inputs: dict[str, InputFlow] = field(default_factory=dict)
    result: int | None = None  # the definition holding the call's output


@dataclass
class JudgeFlow:
    condition: n.Condition
    mentions: dict[str, Value] = field(default_factory=dict)


class FlowAnalysis:
    """The result: definitions, call sites with their inputs, judges, final returns."""

    def __init__(self, decl: Declarations) -> None:
        self.decl = decl
        self.defs: list[Definition] = []
        self.calls: dict[int, CallFlow] = {}
        self.judges: dict[int, JudgeFlow] = {}
        self.returns: list[tuple[n.Return, Value]] = []
        self._provenance: dict[int, frozenset[str]] = {}
        self._transitive: dict[int, frozenset[str]] = {}

    # --- queries -------------------------------------------------------------

    def provenance(self, value: Value) -> frozenset[str]:
        """Slots whose outputs the value may carry (a call is a boundary)."""
        out: set[str] = set()
        for def_id in value.defs | value.calls:
            out |= self._closure(def_id, transitive=False)
        return frozenset(out)

    def transitive(self, value: Value) -> frozenset[str]:
        """Slots whose outputs may have influenced the value, through calls too."""
        out: set[str] = set()
        for def_id in value.defs | value.calls:
            out |= self._closure(def_id, transitive=True)
        return frozenset(out)

    def reaches_unchanged(self, value: Value, slot: str) -> bool:
        """Whether `slot`'s output reaches the value as it came back (not only inside new text)."""
        seen: set[int] = set()
        stack = list(value.defs | value.calls)
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
        """The pattern's literal strings that make up the value (not through calls)."""
        out: list[tuple[str, Span]] = []
        seen: set[int] = set()
        stack = list(value.defs | value.calls)
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
        start = list(value.defs | value.calls)
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

    def path_labels(self, call: n.Call, prop: n.Property, slot: str | None = None,
                    transitive: bool = False) -> list[Label]:
        """Secondary labels showing where an input's value came from."""
        site = self.calls.get(id(call))
        if site is None or prop.name not in site.inputs:
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
                elif not step.name.startswith("<"):
                    labels.append(Label(step.span, f"copied into `{step.name}` here"))
        return labels

    def _closure(self, def_id: int, transitive: bool) -> frozenset[str]:
        cache = self._transitive if transitive else self._provenance
        if def_id in cache:
            return cache[def_id]
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
        cache[def_id] = result
        return result


def analyse(decl: Declarations, program: n.Program, model: SemanticModel) -> FlowAnalysis:
    """Run the provenance analysis over `program`."""
    analysis = FlowAnalysis(decl)
    slots_by_call = {id(site.call): (site.slot, site.target) for site in model.calls}
    _Analyser(analysis, slots_by_call, program).run()
    return analysis


class _Analyser:
    def __init__(self, result: FlowAnalysis, slots_by_call: Mapping[int, tuple[str | None, str]],
                 program: n.Program) -> None:
        self.result = result
        self.slots_by_call = slots_by_call
        self.program = program
        self.sites: dict[tuple[Span, str, str], int] = {}
        self.blocks = {s.name: s for s in program.body if isinstance(s, n.BlockDef)}
        self.block_depth = 0
        self.collecting: list[set[int]] = []
        self.thrown: list[set[int]] = []

    def run(self) -> None:
        state: State = {}
        self._body(self.program.body, state, top=True)

    # --- definitions ------------------------------------------------------------

    def _define(self, name: str, span: Span, kind: str, sources: Iterable[int] = (),
                slots: Iterable[str] = (), call_inputs: Iterable[int] = ()) -> int:
        key = (span, name, kind)
        def_id = self.sites.get(key)
        if def_id is None:
            def_id = len(self.result.defs)
            self.result.defs.append(Definition(def_id, name, span, kind))
            self.sites[key] = def_id
        definition = self.result.defs[def_id]
        definition.sources.update(sources)
        definition.slots.update(slots)
        definition.call_inputs.update(call_inputs)
        return def_id

    # --- statements ---------------------------------------------------------------

    def _body(self, body: tuple[n.Stmt, ...], state: State, top: bool = False,
              collecting: bool = False) -> Value:
        """Run a block; the value is the last statement's (a collecting body's iteration value)."""
        last = Value()
        for position, statement in enumerate(body):
            if collecting and position == len(body) - 1 and isinstance(statement, n.Repeat | n.For | n.Loop):
                # LANGUAGE.md 4.3: a loop ending a collecting body is itself collecting.
                last = self._loop(statement, state, collecting=True)
            else:
                last = self._statement(statement, state, top)
        return last

    def _statement(self, statement: n.Stmt, state: State, top: bool = False) -> Value:
        if isinstance(statement, n.Let):
            value = self._expr(statement.value, state)
            where = statement.head if statement.head.line else statement.span
            for name in statement.names:
                def_id = self._define(name, where, "let", value.defs | value.calls)
                state[name] = frozenset({def_id})
            return value
        if isinstance(statement, n.Assign):
            value = self._expr(statement.value, state)
            target_name = _root_name(statement.target)
            if target_name is not None:
                name = target_name
                # `x.key = v` keeps the rest of `x`; `x = v` replaces it.
                partial = not isinstance(statement.target, n.Name)
                keep = state.get(name, frozenset()) if partial else frozenset()
                def_id = self._define(name, statement.span, "assign", value.defs | value.calls | keep)
                state[name] = frozenset({def_id})
            return value
        if isinstance(statement, n.Append):
            value = self._expr(statement.value, state)
            target_name = _root_name(statement.target)
            if target_name is not None:
                name = target_name
                sources = value.defs | value.calls | state.get(name, frozenset())
                def_id = self._define(name, statement.span, "record", sources)
                state[name] = frozenset({def_id})
            return Value()
        if isinstance(statement, n.ExprStmt):
            return self._expr(statement.expr, state)
        if isinstance(statement, n.Return):
            value = self._expr(statement.value, state) if statement.value is not None else Value()
            if self.collecting:
                self.collecting[-1].update(value.defs | value.calls)
            else:
                self.result.returns.append((statement, value))
            return value
        if isinstance(statement, n.Throw):
            if statement.value is not None:
                value = self._expr(statement.value, state)
                if self.thrown:
                    self.thrown[-1].update(value.defs | value.calls)
            return Value()
        if isinstance(statement, n.Repeat | n.For | n.Loop):
            return self._loop(statement, state, collecting=False)
        if isinstance(statement, n.Parallel):
            published: dict[str, frozenset[int]] = {}
            for branch in statement.branches:
                child = dict(state)
                self._statement(branch, child)
                if isinstance(branch, n.Let):
                    for name in branch.names:
                        published[name] = child[name]
            state.update(published)
            return Value()
        if isinstance(statement, n.If):
            outcomes = []
            for arm in statement.branches:
                self._condition(arm.condition, state)
                child = dict(state)
                self._body(arm.body, child)
                outcomes.append(child)
            other = dict(state)
            if statement.orelse is not None:
                self._body(statement.orelse, other)
            outcomes.append(other)
            _join_into(state, outcomes)
            return Value()
        if isinstance(statement, n.Choice):
            self._condition(statement.criteria, state)
            outcomes = []
            for option in statement.options:
                child = dict(state)
                self._body(option.body, child)
                outcomes.append(child)
            _join_into(state, outcomes or [dict(state)])
            return Value()
        if isinstance(statement, n.Try):
            before = dict(state)
            calls_before = len(self.result.calls)
            self.thrown.append(set())
            try:
                self._body(statement.body, state)
            finally:
                thrown = self.thrown.pop()
            after_body = dict(state)
            if statement.handler is not None:
                handler_state = dict(before)
                _join_into(handler_state, [before, after_body])
                new_calls = list(self.result.calls.values())[calls_before:]
                # An error carries the slot of the call that failed (through that
                # call's definition) and whatever a `throw` in the body threw.
                results = {site.result for site in new_calls if site.result is not None}
                if statement.catch_var:
                    def_id = self._define(statement.catch_var, statement.span, "catch", results | thrown)
                    handler_state[statement.catch_var] = frozenset({def_id})
                self._body(statement.handler, handler_state)
                _join_into(state, [after_body, handler_state])
            if statement.final is not None:
                self._body(statement.final, state)
            return Value()
        if isinstance(statement, n.Orphan):
            self._body(statement.body, dict(state))
            return Value()
        if isinstance(statement, n.Do):
            self._do(statement, state)
            return Value()
        return Value()

    def _loop(self, loop: n.Repeat | n.For | n.Loop, state: State, collecting: bool) -> Value:
        if isinstance(loop, n.Repeat):
            self._expr(loop.count, state)
        elif isinstance(loop, n.Loop) and loop.max is not None:
            self._expr(loop.max, state)
        iterable = self._expr(loop.iterable, state) if isinstance(loop, n.For) else Value()
        collected: set[int] = set()
        for _ in range(50):  # the lattice is finite; this is a safety net
            before = dict(state)
            body_state = dict(state) if getattr(loop, "parallel", False) else state
            if isinstance(loop, n.For):
                def_id = self._define(loop.var, loop.span, "loop", iterable.defs | iterable.calls)
                body_state[loop.var] = frozenset({def_id})
                if loop.index_var:
                    body_state[loop.index_var] = frozenset({self._define(loop.index_var, loop.span, "loop")})
            elif loop.var:
                body_state[loop.var] = frozenset({self._define(loop.var, loop.span, "loop")})
            if isinstance(loop, n.Loop) and loop.condition is not None:
                self._condition(loop.condition, body_state)
            # A `return` belongs to the innermost collecting loop (LANGUAGE.md 4.3);
            # inside a plain loop it ends the pattern (or an outer collecting loop).
            if collecting:
                self.collecting.append(set())
            try:
                last = self._body(loop.body, body_state, collecting=collecting)
            finally:
                returned = self.collecting.pop() if collecting else set()
            collected |= returned | last.defs | last.calls
            if body_state is not state:
                _join_into(state, [before, body_state])
                for name in list(state):
                    if name not in before:
                        del state[name]
            else:
                _join_into(state, [before, dict(state)])
            if state == before:
                break
        value_id = self._define("<loop>", loop.span, "join", collected) if collecting else None
        return Value(frozenset({value_id})) if value_id is not None else Value()

    def _do(self, statement: n.Do, state: State) -> None:
        if statement.name is None:
            self._body(statement.body, dict(state))
            return
        block = self.blocks.get(statement.name)
        if block is None or self.block_depth >= MAX_BLOCK_DEPTH:
            return
        inner: State = dict(state)
        for param, arg in zip(block.params, statement.args, strict=False):
            value = self._expr(arg, state)
            inner[param] = frozenset({self._define(param, statement.span, "param", value.defs | value.calls)})
        self.block_depth += 1
        try:
            self.collecting.append(set())
            self._body(block.body, inner)
            self.collecting.pop()
        finally:
            self.block_depth -= 1

    # --- expressions ------------------------------------------------------------------

    def _expr(self, expr: n.Expr | None, state: State) -> Value:
        if expr is None:
            return Value()
        if isinstance(expr, n.Name):
            return Value(state.get(expr.name, frozenset()))
        if isinstance(expr, n.String):
            defs: set[int] = set()
            for part in expr.parts:
                if isinstance(part, n.Interpolation):
                    defs |= state.get(part.path[0], frozenset())
            text = "".join(part for part in expr.parts if isinstance(part, str))
            def_id = self._define("<string>", expr.span, "string", defs)
            self.result.defs[def_id].text = text
            return Value(frozenset({def_id}))
        if isinstance(expr, n.Member):
            return self._expr(expr.obj, state)
        if isinstance(expr, n.Index):
            inner = self._expr(expr.obj, state)
            self._expr(expr.index, state)
            return inner
        if isinstance(expr, n.Array):
            return _union(self._expr(item, state) for item in expr.items)
        if isinstance(expr, n.Object):
            return _union(self._expr(entry.value, state) for entry in expr.entries)
        if isinstance(expr, n.Call):
            return self._call(expr, state)
        if isinstance(expr, n.Repeat | n.For | n.Loop):
            return self._loop(expr, state, collecting=True)
        if isinstance(expr, n.Compare):
            return _union([self._expr(expr.left, state), self._expr(expr.right, state)])
        if isinstance(expr, n.BoolOp):
            return _union(self._expr(operand, state) for operand in expr.operands)
        if isinstance(expr, n.Not | n.IsTest):
            return self._expr(expr.operand, state)
        return Value()

    def _call(self, call: n.Call, state: State) -> Value:
        slot, target = self.slots_by_call.get(id(call), (None, "unknown"))
        if isinstance(call.target, n.Name) and target == "service-variable":
            self._expr(call.target, state)
        site = self.result.calls.get(id(call))
        if site is None:
            site = CallFlow(call, slot, target)
            self.result.calls[id(call)] = site
        given: set[int] = set()
        for prop in call.properties:
            value = self._expr(prop.value, state)
            entry = site.inputs.setdefault(prop.name, InputFlow(prop.name, prop))
            entry.value = _union([entry.value, value])
            given |= value.defs | value.calls
        produced = {slot} if slot else set()
        head = call.head if call.head.line else call.span
        result = self._define(f"<{slot or 'call'}>", head, "call", (), produced, given)
        site.result = result
        return Value(calls=frozenset({result}))

    def _condition(self, condition: n.Condition, state: State) -> None:
        if condition.predicate is not None:
            self._expr(condition.predicate, state)
            return
        judge = self.result.judges.setdefault(id(condition), JudgeFlow(condition))
        for mention in condition.mentions:
            head = mention.split(".")[0]
            if head in state:
                previous = judge.mentions.get(mention, Value())
                judge.mentions[mention] = _union([previous, Value(state[head])])
            elif head in self.result.decl.config or (
                head in self.result.decl.parameters and head not in self.result.decl.slots
            ):
                judge.mentions.setdefault(mention, Value())


def _union(values: Iterable[Value]) -> Value:
    defs: set[int] = set()
    calls: set[int] = set()
    for value in values:
        defs |= value.defs
        calls |= value.calls
    return Value(frozenset(defs), frozenset(calls))


def _join_into(state: State, outcomes: list[State]) -> None:
    names = set().union(*(outcome.keys() for outcome in outcomes)) if outcomes else set()
    for name in names:
        merged: frozenset[int] = frozenset()
        for outcome in outcomes:
            merged |= outcome.get(name, frozenset())
        state[name] = merged


def _root_name(expr: n.Expr) -> str | None:
    while isinstance(expr, n.Member | n.Index):
        expr = expr.obj
    return expr.name if isinstance(expr, n.Name) else None
