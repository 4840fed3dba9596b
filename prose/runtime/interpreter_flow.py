"""Errors, choices and blocks (LANGUAGE.md 3, 4.5 and 4.6), mixed into `Interpreter`.

`try`/`catch`/`finally`: a catchable run-time error is handled by `catch`
(`catch as err` binds `{message, kind, slot, line}`, carrying the failed
slot's provenance); `break`, `continue` and `return` are not errors and pass
through `catch`, running `finally`; a cancelled branch does not run `finally`.
A bare `throw` inside a `catch` re-raises the error being handled.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import TYPE_CHECKING

from prose.lang import error_kinds as kinds
from prose.lang import flows
from prose.lang.flows import CONCRETE, NO_LABEL
from prose.runtime import pc
from prose.runtime import values as v
from prose.runtime.conditions import mentioned_label, mentioned_values
from prose.runtime.errors import (
    LoopControlError,
    NameNotDefined,
    ProseRuntimeError,
    ThrownError,
    UnknownNodeError,
    ValueTypeError,
)
from prose.runtime.judge import judge
from prose.runtime.scope import Kind, Scope
from prose.runtime.signals import BreakSignal, ContinueSignal, ReturnSignal
from prose.runtime.values import NULL, Value
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.runtime.context import RunContext

# The error a `catch` block is handling, for a bare `throw` (per task, so branches do not mix).
_handling: contextvars.ContextVar[ProseRuntimeError | None] = contextvars.ContextVar(
    "prose_handling", default=None
)


class FlowMixin:
    """Statements that are not loops: expects `ctx`, `source`, `blocks`, `eval`, `exec_body`."""

    ctx: RunContext
    source: str
    strict: bool
    blocks: dict[str, tuple[n.BlockDef, Scope]]

    if TYPE_CHECKING:

        def bound(self, value: Value) -> Value: ...

        async def eval(
            self, expr: n.Expr, scope: Scope, path: str, lenient: bool = False
        ) -> Value: ...

        async def exec_body(
            self, body: tuple[n.Stmt, ...], scope: Scope, path: str, collecting: bool = False
        ) -> Value: ...

    async def exec_orphan(self, node: n.Orphan, scope: Scope, path: str, collecting: bool) -> Value:
        raise UnknownNodeError(
            f"`{node.keyword}` has no statement to belong to (it must follow "
            + ("`if`" if node.keyword in ("elif", "else") else "`try`")
            + ")",
            node.span,
            source=self.source,
        )

    async def exec_choice(self, node: n.Choice, scope: Scope, path: str, collecting: bool) -> Value:
        labels = [option.label for option in node.options]
        criteria = node.criteria
        values = mentioned_values(self.ctx, criteria.mentions, scope)
        if not values:
            raise NameNotDefined(
                f"the choice `{criteria.text}` mentions no variable, parameter or config key, "
                "so a judge would have nothing to decide from",
                criteria.span,
                source=self.source,
            )
        decision, _ = await judge(
            self.ctx,
            kind="choice",
            text=criteria.text,
            node=criteria,
            values=values,
            path=path,
            options=labels,
        )
        option = node.options[labels.index(decision)]
        depends = mentioned_label(self.ctx, criteria.mentions, scope) if self.strict else NO_LABEL
        with pc.raised(depends):
            await self.exec_body(option.body, scope, path)
        if self.strict and flows.exits_early(node):  # the rest runs only if no option left
            pc.raise_rest(depends)
        return NULL

    async def exec_try(self, node: n.Try, scope: Scope, path: str, collecting: bool) -> Value:
        cancelled = False
        try:
            await self.exec_body(node.body, scope, path)
        except ProseRuntimeError as error:
            if not error.catchable or node.handler is None:
                raise
            label = flows.error_object(CONCRETE, error.label)
            if node.catch_var is not None:
                caught = v.error_object(
                    error.message,
                    error.kind,
                    error.slot,
                    line=error.span.line if error.span else None,
                    label=label,
                )
                scope.define(node.catch_var, self.bound(caught), Kind.CATCH)
            token = _handling.set(error)
            try:
                # Strict mode: that the handler runs says the body failed.
                with pc.raised(flows.under(CONCRETE, NO_LABEL, label, self.strict)):
                    await self.exec_body(node.handler, scope, path)
            finally:
                _handling.reset(token)
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            if node.final is not None and not cancelled:
                await self.exec_body(node.final, scope, path)
        return NULL

    async def exec_throw(self, node: n.Throw, scope: Scope, path: str, collecting: bool) -> Value:
        if node.value is None:
            current = _handling.get()
            if current is not None:
                raise current
            raise ThrownError("an error was thrown", node.span, source=self.source)
        value = self.bound(await self.eval(node.value, scope, path))
        message, kind = v.to_text(value), kinds.THROWN
        if isinstance(value.data, dict):
            message = v.to_text(v.member(value, "message")) if "message" in value.data else message
            kind_value = v.member(value, "kind").data
            kind = kind_value if isinstance(kind_value, str) and kind_value else kind
        slot = v.member(value, "slot").data if isinstance(value.data, dict) else None
        raise ThrownError(
            message,
            node.span,
            source=self.source,
            kind=kind,
            value=value,
            slot=slot if isinstance(slot, str) else None,
            label=flows.thrown(CONCRETE, value.label),
        )

    async def exec_block_def(
        self, node: n.BlockDef, scope: Scope, path: str, collecting: bool
    ) -> Value:
        self.blocks[node.name] = (node, scope)
        return NULL

    async def exec_do(self, node: n.Do, scope: Scope, path: str, collecting: bool) -> Value:
        if node.name is None:
            body, local = node.body, scope.child()
        else:
            found = self.blocks.get(node.name)
            if found is None:
                raise NameNotDefined(f"there is no block `{node.name}`")
            block, home = found
            if len(node.args) != len(block.params):
                raise ValueTypeError(
                    f"block `{block.name}` takes {len(block.params)} argument(s), {len(node.args)} given"
                )
            local = home.child()
            for name, arg in zip(block.params, node.args, strict=True):
                local.define(name, self.bound(await self.eval(arg, scope, path)), Kind.VAR)
            body = block.body
        where = f"{path}/do@{node.line}:{node.column}"
        try:
            return await self.exec_body(body, local, where, collecting=True)
        except ReturnSignal as signal:
            return signal.value
        except (BreakSignal, ContinueSignal) as signal:
            raise LoopControlError(
                "`break` and `continue` cannot leave a block", signal.span, source=self.source
            ) from None

    async def exec_use(self, node: n.Use, scope: Scope, path: str, collecting: bool) -> Value:
        return NULL  # bound before the run starts (see runner.globals_scope)
