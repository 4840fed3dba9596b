"""Loops and parallel statements (LANGUAGE.md 3, 4.1 and 4.3): one interpreter's `Loops`.

A loop in value position (or the last statement of a collecting body)
collects one value per iteration, in input order: the value given to a
`return` inside it, else the value of the iteration's last statement, null
after `continue`. A `return` in a loop that does not collect passes through
to the enclosing collecting loop or ends the pattern.

Every parallel branch collects (a branch cannot end the whole pattern while
its siblings run): `return` ends that branch with its value, `continue` ends
it with null, and `break` is an error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from prose.lang import flows
from prose.lang.flows import CONCRETE, NO_LABEL, Label
from prose.lang.loops import loop_shape
from prose.runtime import pc
from prose.runtime import values as v
from prose.runtime.errors import LoopControlError, ParallelRace, ProseRuntimeError, ValueTypeError
from prose.runtime.parallel import Modifiers, parse_modifiers, run_branches
from prose.runtime.scope import Kind, Scope
from prose.runtime.signals import BreakSignal, ContinueSignal, ReturnSignal
from prose.runtime.trace import NoteEvent
from prose.runtime.values import NULL, Value, describe
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.runtime.interpreter import Interpreter

_BREAK = object()


class Loops:
    """`repeat`, `for`, `loop` and `parallel` for one `Interpreter`."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter

    async def loop(
        self, node: n.LoopNode, scope: Scope, path: str, collecting: bool
    ) -> Value:
        if isinstance(node, n.Loop):
            return await self._loop(node, scope, path, collecting)
        count, items, depends = await self._items(node, scope, path)
        where = f"{path}/{'for' if isinstance(node, n.For) else 'repeat'}@{node.line}:{node.column}"
        # Strict mode: the body runs once per item, so it depends on the list (or count).
        with pc.raised(flows.under(CONCRETE, NO_LABEL, depends, self.interpreter.strict)):
            if node.parallel:
                # every branch is made before the first runs: the step budget must allow them
                self.interpreter.ctx.shared.budget.step(count, node.span)
                outcome = await self._parallel_iterations(node, list(items), scope, where)
                return self.interpreter.bound(outcome) if collecting else NULL
            collected: list[Value] = []
            with pc.iterations() as left:
                for position, (item, counter) in enumerate(items):
                    with pc.raised(left()):  # no earlier iteration left early
                        self._bind_loop_vars(node, scope, item, counter)
                        value = await self._iteration(node.body, scope, f"{where}#{position}",
                                                      collecting)
                    if value is _BREAK:
                        break
                    assert isinstance(value, Value)
                    collected.append(value)
                with pc.raised(left()):
                    return self.interpreter.bound(v.collected(collected)) if collecting else NULL

    async def _items(
        self, node: n.Repeat | n.For, scope: Scope, path: str
    ) -> tuple[int, Iterator[tuple[Value, Value]], Label]:
        """How many iterations, (loop variable value, counter) per iteration made one at a
        time (`repeat 1000000000` holds no list), and the label the count depends on."""
        shape = loop_shape(node)
        if shape.count is not None:  # `repeat N`
            count, label = await self._count(shape.count, scope, path, "repeat")
            return count, ((v.constant(i), v.constant(i)) for i in range(1, count + 1)), label
        assert shape.items is not None
        iterable = await self.interpreter.eval(shape.items, scope, path)
        if not isinstance(iterable.data, tuple):
            raise ValueTypeError(
                f"`for` iterates a list, not {describe(iterable)}",
                shape.items.span,
                source=self.interpreter.source,
                label=flows.value_error(CONCRETE, [iterable.label]),
            )
        items = iterable.data
        label = iterable.label
        if shape.max is not None:  # `for x in xs (max: N)`: the first N items
            limit, bound_label = await self._count(shape.max, scope, path, "max")
            label = label | bound_label
            if len(items) > limit:
                self._note_max(node, limit, f"{path}/for@{node.line}:{node.column}")
                items = items[:limit]
        position = NO_LABEL
        blind = self.interpreter.ctx.policy.blind_sources
        if blind and isinstance(node, n.For) and node.index_var is not None:
            services = [item.data.slot for item in items if isinstance(item.data, v.Service)]
            position = flows.loop_counter(CONCRETE, flows.revealed_orders(
                iterable.chains, services, blind), node.span)
        return len(items), ((item, Value(i, position)) for i, item in enumerate(items)), label

    async def _count(self, expr: n.Expr, scope: Scope, path: str, what: str) -> tuple[int, Label]:
        value = await self.interpreter.eval(expr, scope, path)
        if not isinstance(value.data, int) or isinstance(value.data, bool) or value.data < 0:
            raise ValueTypeError(
                f"`{what}` needs an integer >= 0, not {describe(value)}",
                expr.span,
                source=self.interpreter.source,
                label=flows.value_error(CONCRETE, [value.label]),
            )
        return value.data, value.label

    def _bind_loop_vars(
        self, node: n.Repeat | n.For, scope: Scope, item: Value, counter: Value
    ) -> None:
        if isinstance(node, n.For):
            scope.define(node.var, self.interpreter.bound(item), Kind.LOOP)
            if node.index_var is not None:
                scope.define(node.index_var, self.interpreter.bound(counter), Kind.LOOP)
        elif node.var is not None:
            scope.define(node.var, self.interpreter.bound(item), Kind.LOOP)

    async def _iteration(
        self, body: tuple[n.Stmt, ...], scope: Scope, path: str, collecting: bool
    ) -> Any:
        """One iteration's value, `_BREAK` after `break`; a `return` ends it only when collecting."""
        try:
            return await self.interpreter.exec_body(body, scope, path, collecting)
        except ContinueSignal:
            return NULL
        except BreakSignal:
            return _BREAK
        except ReturnSignal as signal:
            if collecting:
                return signal.value
            raise

    async def _loop(self, node: n.Loop, scope: Scope, path: str, collecting: bool) -> Value:
        bound = loop_shape(node).bound
        if bound is None:
            raise ValueTypeError(
                "a `loop` needs a bound: `(max: N)`", node.span, source=self.interpreter.source
            )
        limit, depends = await self._count(bound, scope, path, "max")
        depends = flows.under(CONCRETE, NO_LABEL, depends, self.interpreter.strict)
        where = f"{path}/loop@{node.line}:{node.column}"
        collected: list[Value] = []
        count = 0
        with pc.iterations() as left:
            while True:
                if count >= limit:
                    self._note_max(node, limit, where)
                    break
                depends = depends | left()  # no earlier iteration left early
                if node.condition is not None:
                    with pc.raised(depends):
                        holds, label = await self.interpreter.test(node.condition, scope,
                                                                   f"{where}#{count}")
                    depends = depends | label
                    if holds == (node.kind == "until"):
                        break
                count += 1
                with pc.raised(depends):
                    if node.var is not None:
                        scope.define(node.var, self.interpreter.bound(v.constant(count)),
                                     Kind.LOOP)
                    value = await self._iteration(node.body, scope, f"{where}#{count - 1}",
                                                  collecting)
                if value is _BREAK:
                    break
                collected.append(value)
            depends = depends | left()
        with pc.raised(depends):
            return self.interpreter.bound(v.collected(collected)) if collecting else NULL

    def _note_max(self, node: n.LoopNode, limit: int, where: str) -> None:
        self.interpreter.ctx.shared.trace.emit(
            NoteEvent(
                what="loop_max",
                message=f"the loop reached its max of {limit} iterations",
                file=node.span.file,
                line=node.line,
                detail={"max": limit, "path": where},
            )
        )

    # --- parallel ------------------------------------------------------------------

    async def _modifiers(
        self, node: n.Repeat | n.For | n.Parallel, scope: Scope, path: str
    ) -> Modifiers:
        positional: list[str] = []
        keywords: dict[str, Value] = {}
        for modifier in node.modifiers:
            value = await self.interpreter.eval(modifier.value, scope, path)
            if modifier.key is None:
                if not isinstance(value.data, str):
                    raise ValueTypeError("a parallel modifier is a string or `key: value`")
                positional.append(value.data)
            else:
                keywords[modifier.key] = value
        return parse_modifiers(positional, keywords)

    def _dropped(self, node: n.Node, where: str) -> Callable[[int, ProseRuntimeError], None]:
        def note(position: int, error: ProseRuntimeError) -> None:
            self.interpreter.ctx.shared.trace.emit(
                NoteEvent(
                    what="branch_failed",
                    message=f"branch {position} failed: {error.message}",
                    file=node.span.file,
                    line=node.line,
                    detail={"branch": position, "path": where, "error": error.to_dict()},
                )
            )

        return note

    async def _parallel_iterations(
        self, node: n.Repeat | n.For, items: list[tuple[Value, Value]], scope: Scope, where: str
    ) -> Value:
        modifiers = await self._modifiers(node, scope, where)
        serial, name = pc.execution(), f"{node.line}:{node.column}"

        def branch(position: int, item: Value, counter: Value) -> Callable[[], Awaitable[Value]]:
            async def run() -> Value:
                pc.enter_branch(name, serial, position)  # this task's own chain
                local = scope.child()
                self._bind_loop_vars(node, local, item, counter)
                return await self._branch_body(node.body, local, f"{where}#{position}")

            return run

        outcome = await run_branches(
            [branch(i, item, counter) for i, (item, counter) in enumerate(items)],
            modifiers,
            on_dropped=self._dropped(node, where),
            strict=self.interpreter.strict,
        )
        return outcome.value

    async def _branch_body(self, body: tuple[n.Stmt, ...], scope: Scope, path: str) -> Value:
        try:
            return await self.interpreter.exec_body(body, scope, path, collecting=True)
        except ReturnSignal as signal:
            return signal.value
        except ContinueSignal:
            return NULL
        except BreakSignal as signal:
            raise LoopControlError(
                "`break` cannot end a parallel branch", signal.span, source=self.interpreter.source
            ) from None

    async def parallel(self, node: n.Parallel, scope: Scope, path: str) -> Value:
        """`parallel:` branches; their `let`s are published into `scope` after the join."""
        where = f"{path}/parallel@{node.line}:{node.column}"
        modifiers = await self._modifiers(node, scope, where)
        locals_ = [scope.child() for _ in node.branches]
        serial, name = pc.execution(), f"{node.line}:{node.column}"

        def branch(position: int, statement: n.Stmt) -> Callable[[], Awaitable[Value]]:
            async def run() -> Value:
                pc.enter_branch(name, serial, position)  # this task's own chain
                return await self._branch_body(
                    (statement,), locals_[position], f"{where}#{position}"
                )

            return run

        outcome = await run_branches(
            [branch(i, statement) for i, statement in enumerate(node.branches)],
            modifiers,
            on_dropped=self._dropped(node, where),
            strict=self.interpreter.strict,
        )
        publishing: dict[str, Value] = {}
        for position, statement in enumerate(node.branches):
            finished = outcome.finished[position]
            names = list(locals_[position].published) if finished else []
            if isinstance(statement, n.Let):  # a branch that failed or lost still binds its names
                names += [name for name in statement.names if name not in names]
            for name in names:
                if name in publishing:
                    raise ParallelRace(
                        f"two parallel branches bind `{name}`", statement.span, source=self.interpreter.source
                    )
                binding = locals_[position].bindings.get(name)
                publishing[name] = binding.value if binding is not None and finished else NULL
        for name, value in publishing.items():
            scope.let(name, value)
        return outcome.value
