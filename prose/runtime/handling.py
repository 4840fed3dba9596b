"""Errors as the language handles them (LANGUAGE.md 4.5): `try`, `catch`, `finally`, `throw`.

A catchable run-time error is handled by `catch` (`catch as err` binds
`{message, kind, slot, line}`, carrying the failed slot's provenance);
`break`, `continue` and `return` are not errors and pass through `catch`,
running `finally`; a cancelled branch does not run `finally`. A bare `throw`
inside a `catch` re-raises the error being handled.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import TYPE_CHECKING, NoReturn

from prose.lang import error_kinds as kinds
from prose.lang import flows
from prose.lang.flows import CONCRETE, NO_LABEL
from prose.runtime import pc
from prose.runtime import values as v
from prose.runtime.errors import ProseRuntimeError, ThrownError
from prose.runtime.scope import Kind, Scope
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.runtime.interpreter import Interpreter

# The error a `catch` block is handling, for a bare `throw` (per task, so branches do not mix).
_handling: contextvars.ContextVar[ProseRuntimeError | None] = contextvars.ContextVar(
    "prose_handling", default=None
)


class ErrorHandling:
    """`try` and `throw` for one `Interpreter`."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter

    async def run_try(self, node: n.Try, scope: Scope, path: str) -> None:
        cancelled = False
        # Strict mode: a `throw` the `catch` stops no longer raises the pc after the `try`,
        # unless the `catch` may leave early (then the rest runs only because none came).
        outer = pc.enter_try() if node.handler is not None else None
        try:
            try:
                await self.interpreter.exec_body(node.body, scope, path)
            finally:
                inner = pc.leave_try(outer) if outer is not None else NO_LABEL
            if (self.interpreter.strict and node.handler is not None
                    and flows.exits_early(node.handler)):
                pc.raise_rest(inner, flows.may_throw(node.handler))
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
                scope.define(node.catch_var, self.interpreter.bound(caught), Kind.CATCH)
            token = _handling.set(error)
            try:
                # Strict mode: that the handler runs says the body failed.
                with pc.raised(flows.under(CONCRETE, NO_LABEL, label, self.interpreter.strict)):
                    await self.interpreter.exec_body(node.handler, scope, path)
            finally:
                _handling.reset(token)
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            if node.final is not None and not cancelled:
                await self.interpreter.exec_body(node.final, scope, path)

    async def throw(self, node: n.Throw, scope: Scope, path: str) -> NoReturn:
        if node.value is None:
            current = _handling.get()
            if current is not None:
                raise current
            raise ThrownError("an error was thrown", node.span, source=self.interpreter.source)
        value = self.interpreter.bound(await self.interpreter.eval(node.value, scope, path))
        message, kind = v.to_text(value), kinds.THROWN
        if isinstance(value.data, dict):
            message = v.to_text(v.member(value, "message")) if "message" in value.data else message
            kind_value = v.member(value, "kind").data
            kind = kind_value if isinstance(kind_value, str) and kind_value else kind
        slot = v.member(value, "slot").data if isinstance(value.data, dict) else None
        raise ThrownError(
            message,
            node.span,
            source=self.interpreter.source,
            kind=kind,
            value=value,
            slot=slot if isinstance(slot, str) else None,
            label=flows.thrown(CONCRETE, value.label),
        )
