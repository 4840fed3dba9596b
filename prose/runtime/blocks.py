"""Blocks (LANGUAGE.md 4.6): `block NAME(params):` definitions and `do`.

A block reads the scope it was defined in (its home), not the caller's; its
parameters are bound from the `do` arguments. Definitions at the top level
are hoisted, so `do` may come before `block`. A block's `return` ends the
block with its value; `break` and `continue` cannot leave it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prose.lang import flows
from prose.lang.flows import CONCRETE, NO_LABEL, Label
from prose.runtime import pc
from prose.runtime.errors import LoopControlError, NameNotDefined, ValueTypeError
from prose.runtime.scope import Kind, Scope
from prose.runtime.signals import BreakSignal, ContinueSignal, ReturnSignal
from prose.runtime.values import Value, relabel
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.runtime.interpreter import Interpreter


class Blocks:
    """The blocks one `Interpreter` has defined, and `do`."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter
        # Each block's definition, its home scope and the pc it was defined under.
        self.defined: dict[str, tuple[n.BlockDef, Scope, Label]] = {}

    def define(self, node: n.BlockDef, home: Scope) -> None:
        self.defined[node.name] = (node, home, pc.current())

    async def do(self, node: n.Do, scope: Scope, path: str) -> Value:
        chosen = NO_LABEL
        if node.name is None:
            body, local = node.body, scope.child()
        else:
            found = self.defined.get(node.name)
            if found is None:
                raise NameNotDefined(f"there is no block `{node.name}`")
            block, home, where_defined = found
            chosen = flows.defined(CONCRETE, where_defined, self.interpreter.strict)
            if len(node.args) != len(block.params):
                raise ValueTypeError(
                    f"block `{block.name}` takes {len(block.params)} argument(s), {len(node.args)} given"
                )
            local = home.child()
            for name, arg in zip(block.params, node.args, strict=True):
                value = await self.interpreter.eval(arg, scope, path)
                local.define(name, self.interpreter.bound(value), Kind.VAR)
            body = block.body
        where = f"{path}/do@{node.line}:{node.column}"
        with pc.raised(chosen):
            try:
                value = await self.interpreter.exec_body(body, local, where, collecting=True)
            except ReturnSignal as signal:
                value = signal.value
            except (BreakSignal, ContinueSignal) as signal:
                raise LoopControlError("`break` and `continue` cannot leave a block", signal.span,
                                       source=self.interpreter.source) from None
        return relabel(value, chosen, deep=True)
