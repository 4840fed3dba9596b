"""Pipelines (`xs | map: ... | filter: ... | pmap: ... | reduce(acc, x): ...`).

Each stage takes the previous stage's list (the first takes the source's) and
runs its body once per item in a scope of its own, with `item` bound (a
`reduce` binds its two names); the body's value is its `return` or its last
statement's, as in a collecting loop (docs/language.md, "Pipelines"):

- `map`: the list of the bodies' values, in input order;
- `pmap`: the same, the bodies run as concurrent branches (`"all"`, fail-fast);
- `filter`: the items whose body value is truthy, in input order;
- `reduce(acc, x)`: the first item is the first `acc`; the body runs for each
  later item and its value is the next `acc`; the last `acc` is the result
  (null for an empty list).

`break` and `continue` cannot leave a stage body. Provenance follows
`prose.lang.flows.pipeline_stage`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from prose.lang import flows
from prose.lang.flows import CONCRETE, NO_LABEL
from prose.runtime import pc
from prose.runtime import values as v
from prose.runtime.errors import LoopControlError, ProseRuntimeError, ValueTypeError
from prose.runtime.parallel import parse_modifiers, run_branches
from prose.runtime.scope import Kind, Scope
from prose.runtime.signals import BreakSignal, ContinueSignal, ReturnSignal
from prose.runtime.values import NULL, Value, describe, truthy
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.runtime.interpreter import Interpreter


class Pipelines:
    """Runs pipelines for one `Interpreter`."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter

    async def run(self, node: n.Pipeline, scope: Scope, path: str) -> Value:
        current = await self.interpreter.eval(node.source, scope, path)
        for stage in node.stages:
            current = await self._stage(stage, current, scope, path)
        return current

    async def _stage(self, stage: n.Stage, current: Value, scope: Scope, path: str) -> Value:
        interpreter = self.interpreter
        if not isinstance(current.data, tuple):
            raise ValueTypeError(f"`| {stage.op}` takes a list, not {describe(current)}",
                                 stage.span, source=interpreter.source,
                                 label=flows.value_error(CONCRETE, [current.label]))
        items = current.data
        where = f"{path}/{stage.op}@{stage.line}:{stage.column}"
        strict = interpreter.strict
        # Strict mode: each body runs once per item, so it depends on the list.
        with pc.raised(flows.under(CONCRETE, NO_LABEL, current.label, strict)):
            if stage.op == "pmap":
                return interpreter.bound(await self._pmap(stage, items, scope, where))
            if stage.op == "reduce":
                return interpreter.bound(await self._reduce(stage, items, scope, where))
            values = [await self._body(stage, (item,), scope, f"{where}#{i}")
                      for i, item in enumerate(items)]
            if stage.op == "map":
                return interpreter.bound(v.collected(values))
            kept = tuple(item for item, value in zip(items, values, strict=True) if truthy(value))
            decided = CONCRETE.join(value.label for value in values)
            label = flows.filtered(CONCRETE, NO_LABEL, decided, strict)
            # Strict mode: every kept item, members included, carries the decisions.
            kept = tuple(v.relabel(item, label, deep=True) for item in kept) if label else kept
            return interpreter.bound(v.collected(kept, label))

    async def _reduce(self, stage: n.Stage, items: tuple[Value, ...], scope: Scope,
                      where: str) -> Value:
        if not items:
            return NULL
        acc = items[0]
        for position, item in enumerate(items[1:], start=1):
            acc = await self._body(stage, (acc, item), scope, f"{where}#{position}")
        return acc

    async def _pmap(self, stage: n.Stage, items: tuple[Value, ...], scope: Scope,
                    where: str) -> Value:
        self.interpreter.ctx.shared.budget.step(len(items), stage.span)
        serial, name = pc.execution(), f"{stage.line}:{stage.column}"

        def branch(position: int, item: Value) -> Callable[[], Awaitable[Value]]:
            async def run() -> Value:
                pc.enter_branch(name, serial, position)  # this task's own chain
                return await self._body(stage, (item,), scope, f"{where}#{position}")

            return run

        outcome = await run_branches([branch(i, item) for i, item in enumerate(items)],
                                     parse_modifiers([], {}), on_dropped=_never)
        return outcome.value

    async def _body(self, stage: n.Stage, bound: tuple[Value, ...], scope: Scope,
                    path: str) -> Value:
        interpreter = self.interpreter
        local = scope.child()
        for param, value in zip(stage.params, bound, strict=True):
            local.define(param, interpreter.bound(value), Kind.LOOP)
        try:
            return await interpreter.exec_body(stage.body, local, path, collecting=True)
        except ReturnSignal as signal:
            return signal.value
        except (BreakSignal, ContinueSignal) as signal:
            raise LoopControlError(f"`break` and `continue` cannot leave a `| {stage.op}` body",
                                   signal.span, source=interpreter.source) from None


def _never(position: int, error: ProseRuntimeError) -> None:
    """`pmap` fails fast: no branch is ever dropped."""
