"""The interpreter: async evaluation of the AST, one method per node class.

Like lis.py, the whole evaluator is a method per node class (`exec_<Class>`
for statements, `eval_<Class>` for expressions, dispatched by
`prose.syntax.visitor.Visitor`) and an environment with an outer pointer
(`Scope`). Statements return their value (LANGUAGE.md 4.3: a call's result, a
`let`'s value, a collected loop; null for anything else), which is what a
collecting loop gathers per iteration. A node class without a method is
refused with R001, never skipped.

Three concerns have a class of their own, each holding this interpreter:
`loops.Loops` (repeat, for, loop, parallel), `handling.ErrorHandling` (try,
throw) and `blocks.Blocks` (block definitions, do). What a call does is in
`calls.py`.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from typing import NoReturn

from prose.lang import flows
from prose.lang.flows import CONCRETE, NO_LABEL, Label
from prose.lang.properties import RESERVED_PROPERTIES
from prose.runtime import builtins, pc
from prose.runtime import values as v
from prose.runtime.blocks import Blocks
from prose.runtime.calls import call_options
from prose.runtime.conditions import (
    condition_holds,
    mentioned_label,
    mentioned_values,
    predicate,
)
from prose.runtime.context import RunContext
from prose.runtime.errors import (
    InvariantBroken,
    LoopControlError,
    MemberError,
    NameNotDefined,
    ProseRuntimeError,
    UnknownNodeError,
    ValueTypeError,
)
from prose.runtime.gates import admit_growth, gated_call
from prose.runtime.handling import ErrorHandling
from prose.runtime.judge import judge
from prose.runtime.loops import Loops
from prose.runtime.pipelines import Pipelines
from prose.runtime.scope import Scope
from prose.runtime.sessions import Sessions
from prose.runtime.signals import BreakSignal, ContinueSignal, ReturnSignal, Signal
from prose.runtime.values import NULL, Service, Value
from prose.syntax import nodes as n
from prose.syntax.visitor import Visitor

# Statements between two returns to the event loop, so `asyncio.timeout` and
# cancellation reach a loop that never waits for a model.
YIELD_EVERY = 256

# What a declared but not yet bound name reads as in a condition (and its members too).
UNBOUND = v.constant(None)


class Interpreter(Visitor[Awaitable[Value]]):
    """Runs one pattern instance's program in a `RunContext`."""

    role = "the interpreter"

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.source = ctx.source
        self.strict = ctx.policy.strict
        self.loops = Loops(self)
        self.handling = ErrorHandling(self)
        self.blocks = Blocks(self)
        self.sessions = Sessions(self)
        self.pipelines = Pipelines(self)

    # --- the program ---------------------------------------------------------------

    async def run(self, scope: Scope) -> Value:
        """Run the program body in `scope`; the value of the `return` that ends it (else null)."""
        body = self.ctx.program.body
        for statement in body:  # blocks are hoisted: `do` may come before `block`
            if isinstance(statement, n.BlockDef):
                self.blocks.define(statement, scope)
            elif isinstance(statement, n.AgentDef):  # agents too: a session may come first
                self.sessions.define(statement)
        try:
            await self.exec_body(body, scope, self.ctx.prefix)
        except ReturnSignal as signal:
            return signal.value
        except (BreakSignal, ContinueSignal) as signal:
            raise self._misplaced(signal) from None
        return NULL

    def _misplaced(self, signal: Signal) -> LoopControlError:
        word = "break" if isinstance(signal, BreakSignal) else "continue"
        return LoopControlError(f"`{word}` outside a loop", signal.span, source=self.source)

    async def exec_body(
        self, body: tuple[n.Stmt, ...], scope: Scope, path: str, collecting: bool = False
    ) -> Value:
        """Run statements in order; the value of the last one (a loop there collects if asked)."""
        value = NULL
        last = len(body) - 1
        saved = pc.current()  # an early exit raises the pc for the rest of this body only
        try:
            for position, statement in enumerate(body):
                value = await self.exec_stmt(statement, scope, path, collecting and position == last)
        finally:
            if self.strict:
                pc.restore(saved)  # keeps what a conditional `throw` raised (pc.raise_rest)
        return value

    async def exec_stmt(
        self, stmt: n.Stmt, scope: Scope, path: str, collecting: bool = False
    ) -> Value:
        budget = self.ctx.shared.budget
        try:
            budget.step()  # a run that makes no calls is bounded too
            if budget.steps % YIELD_EVERY == 0:
                await asyncio.sleep(0)  # let a timeout or a cancellation in
            return await self.handler(stmt, "exec_")(stmt, scope, path, collecting)
        except ProseRuntimeError as error:
            raise error.at(stmt.span, self.source) from None

    async def eval(self, expr: n.Expr, scope: Scope, path: str, lenient: bool = False) -> Value:
        """The value of an expression. `lenient`: a declared but unbound name reads as null."""
        try:
            return await self.handler(expr, "eval_")(expr, scope, path, lenient)
        except ProseRuntimeError as error:
            raise error.at(expr.span, self.source) from None

    def refuse(self, node: n.Node, prefix: str) -> NoReturn:
        verb = "run" if prefix == "exec_" else "evaluate"
        raise UnknownNodeError(
            f"the interpreter cannot {verb} a `{type(node).__name__}` node",
            node.span,
            source=self.source,
        )

    async def _operand(self, expr: n.Expr, scope: Scope, path: str) -> Value:
        return await self.eval(expr, scope, path, True)

    def bound(self, value: Value) -> Value:
        """A value as it is bound: in strict mode it carries the program counter too."""
        if not self.strict:
            return value
        label = flows.bind(CONCRETE, NO_LABEL, pc.current(), True)
        return v.relabel(value, label, deep=True)

    async def test(
        self, condition: n.Condition, scope: Scope, path: str
    ) -> tuple[bool, Label]:
        """Whether a condition holds, and (strict mode) the label it depends on."""
        seen: list[Value] = []

        async def recording(expr: n.Expr, scope: Scope, path: str) -> Value:
            value = await self._operand(expr, scope, path)
            seen.append(value)
            return value

        try:
            holds = await condition_holds(
                self.ctx, condition, scope, path, recording if self.strict else self._operand,
                self.step,
            )
        except ProseRuntimeError as error:
            raise error.at(condition.span, self.source) from None
        if not self.strict:
            return holds, NO_LABEL
        if condition.predicate is None:
            return holds, mentioned_label(self.ctx, condition.mentions, scope)
        return holds, CONCRETE.join(value.label for value in seen)

    # --- statements ----------------------------------------------------------------

    async def exec_Let(self, node: n.Let, scope: Scope, path: str, collecting: bool) -> Value:
        value = self.bound(await self.eval(node.value, scope, path))
        if node.destructure:
            if not isinstance(value.data, dict):
                raise ValueTypeError(f"cannot destructure {v.describe(value)}: it is not an object",
                                     label=flows.value_error(CONCRETE, [value.label]))
            for name in node.names:
                scope.let(name, v.member(value, name), const=node.const)
        else:
            if node.names[0] in self.ctx.only_grows:
                self._check_grows(node.names[0], value, scope)
            scope.let(node.names[0], value, const=node.const)
        return value

    async def exec_Assign(self, node: n.Assign, scope: Scope, path: str, collecting: bool) -> Value:
        value = self.bound(await self.eval(node.value, scope, path))
        target = node.target
        while isinstance(target, n.Member | n.Index):  # `progress[0] = x` changes it too
            target = target.obj
        if isinstance(target, n.Name):
            admit_growth(self, node, target.name, path)
        await self.store(node.target, value, scope, path)
        return value

    async def store(self, target: n.Expr, value: Value, scope: Scope, path: str) -> None:
        """Assign `value` to a name, member or index, rebuilding the containers on the way."""
        if isinstance(target, n.Name):
            if target.name in self.ctx.only_grows:
                self._check_grows(target.name, value, scope)
            scope.assign(target.name, value)
        elif isinstance(target, n.Member):
            container = await self.eval(target.obj, scope, path)
            await self.store(target.obj, v.with_member(container, target.name, value), scope, path)
        elif isinstance(target, n.Index):
            container = await self.eval(target.obj, scope, path)
            key = await self.eval(target.index, scope, path)
            await self.store(target.obj, v.with_index(container, key, value), scope, path)
        else:
            raise ValueTypeError("only a name, a member or an index can be assigned")

    def _check_grows(self, name: str, value: Value, scope: Scope) -> None:
        """`NAME only grows`: a new value must keep every item it had, in order (R016)."""
        found = scope.find(name)
        old = found[1].value.data if found is not None else None
        new = value.data
        if not isinstance(old, tuple):
            return
        if not (isinstance(new, tuple) and len(new) >= len(old)) or any(
            a is not b for a, b in zip(old, new, strict=False)
        ):
            raise InvariantBroken(
                f"`{name}` only grows: it may be recorded or appended to, not reassigned or rebuilt"
            )

    async def exec_ExprStmt(
        self, node: n.ExprStmt, scope: Scope, path: str, collecting: bool
    ) -> Value:
        if isinstance(node.expr, n.LoopNode):
            return await self.loops.loop(node.expr, scope, path, collecting)
        return await self.eval(node.expr, scope, path)

    async def exec_Return(self, node: n.Return, scope: Scope, path: str, collecting: bool) -> Value:
        value = await self.eval(node.value, scope, path) if node.value is not None else NULL
        raise ReturnSignal(node.span, self.bound(value))

    async def exec_Continue(
        self, node: n.Continue, scope: Scope, path: str, collecting: bool
    ) -> Value:
        raise ContinueSignal(node.span)

    async def exec_Break(self, node: n.Break, scope: Scope, path: str, collecting: bool) -> Value:
        raise BreakSignal(node.span)

    async def exec_If(self, node: n.If, scope: Scope, path: str, collecting: bool) -> Value:
        # Strict mode: an arm runs under the labels of its condition and every earlier one.
        depends = NO_LABEL
        for branch in node.branches:
            holds, label = await self.test(branch.condition, scope, path)
            depends = depends | label
            if holds:
                with pc.raised(depends):
                    await self.exec_body(branch.body, scope, path)
                if self.strict and flows.exits_early(node):  # it could have left early
                    pc.raise_rest(depends, flows.may_throw(node))
                return NULL
        if node.orelse is not None:
            with pc.raised(depends):
                await self.exec_body(node.orelse, scope, path)
        if self.strict and flows.exits_early(node):  # the rest runs only because no arm left
            pc.raise_rest(depends, flows.may_throw(node))
        return NULL

    async def exec_Append(self, node: n.Append, scope: Scope, path: str, collecting: bool) -> Value:
        item = self.bound(await self.eval(node.value, scope, path))
        if isinstance(node.target, n.Name):
            admit_growth(self, node, node.target.name, path)
        current = await self.eval(node.target, scope, path)
        grown = v.appended(current, item)
        if self.strict:  # the list's length says the statement ran (its items keep their own)
            grown = v.relabel(grown, pc.current())
        await self.store(node.target, grown, scope, path)
        return NULL

    async def exec_Choice(self, node: n.Choice, scope: Scope, path: str, collecting: bool) -> Value:
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
            pc.raise_rest(depends, flows.may_throw(node))
        return NULL

    async def exec_Orphan(self, node: n.Orphan, scope: Scope, path: str, collecting: bool) -> Value:
        raise UnknownNodeError(
            f"`{node.keyword}` has no statement to belong to (it must follow "
            + ("`if`" if node.keyword in ("elif", "else") else "`try`")
            + ")",
            node.span,
            source=self.source,
        )

    async def exec_Repeat(
        self, node: n.LoopNode, scope: Scope, path: str, collecting: bool
    ) -> Value:
        return await self.loops.loop(node, scope, path, collecting)

    exec_For = exec_Loop = exec_Repeat

    async def exec_Parallel(
        self, node: n.Parallel, scope: Scope, path: str, collecting: bool
    ) -> Value:
        await self.loops.parallel(node, scope, path)
        return NULL

    async def exec_Try(self, node: n.Try, scope: Scope, path: str, collecting: bool) -> Value:
        await self.handling.run_try(node, scope, path)
        return NULL

    async def exec_Throw(self, node: n.Throw, scope: Scope, path: str, collecting: bool) -> Value:
        await self.handling.throw(node, scope, path)

    async def exec_BlockDef(
        self, node: n.BlockDef, scope: Scope, path: str, collecting: bool
    ) -> Value:
        self.blocks.define(node, scope)
        return NULL

    async def exec_Do(self, node: n.Do, scope: Scope, path: str, collecting: bool) -> Value:
        return await self.blocks.do(node, scope, path)

    async def exec_Use(self, node: n.Use, scope: Scope, path: str, collecting: bool) -> Value:
        return NULL  # bound before the run starts (see runner.globals_scope)

    async def exec_AgentDef(
        self, node: n.AgentDef, scope: Scope, path: str, collecting: bool
    ) -> Value:
        self.sessions.define(node)
        return NULL

    # --- expressions ---------------------------------------------------------------

    async def eval_Literal(self, node: n.Literal, scope: Scope, path: str, lenient: bool) -> Value:
        return v.constant(node.value)

    async def eval_String(self, node: n.String, scope: Scope, path: str, lenient: bool) -> Value:
        if len(node.parts) == 1 and isinstance(node.parts[0], str):
            text = node.parts[0]
            return v.text(text)
        pieces: list[str] = []
        texts: list[str] = []
        values: list[Label] = []
        literal = True  # every interpolated value is a literal string of the pattern
        for part in node.parts:
            if isinstance(part, str):
                pieces.append(part)
                texts.append(part)
                continue
            value = self._lookup(part.path[0], scope, part, lenient)
            for name in part.path[1:]:
                value = v.member(value, name)
            pieces.append(v.to_text(value))
            values.append(value.label)
            literal = literal and v.is_literal_text(value)
        whole = "".join(pieces)
        return v.labelled(whole, flows.string(CONCRETE, texts, values, node.span,
                                              (whole,) if literal else ()))

    def _lookup(self, name: str, scope: Scope, node: n.Node, lenient: bool) -> Value:
        found = scope.find(name)
        if found is not None:
            return found[1].value
        if lenient and name in self.ctx.declared:
            return UNBOUND
        raise NameNotDefined(f"`{name}` is not defined", node.span, source=self.source)

    async def eval_Name(self, node: n.Name, scope: Scope, path: str, lenient: bool) -> Value:
        return self._lookup(node.name, scope, node, lenient)

    async def eval_Member(self, node: n.Member, scope: Scope, path: str, lenient: bool) -> Value:
        holder = await self.eval(node.obj, scope, path, lenient)
        if holder is UNBOUND:
            return UNBOUND  # `verdict.accepted` before `verdict` is first bound: null
        return v.member(holder, node.name)

    async def eval_Index(self, node: n.Index, scope: Scope, path: str, lenient: bool) -> Value:
        container = await self.eval(node.obj, scope, path, lenient)
        if container is UNBOUND:
            return UNBOUND
        key = await self.eval(node.index, scope, path)
        item = v.index(container, key)
        if self.strict and key.label:  # a selection by a value carries it (strict mode),
            # members included: reading a field of the selected item cannot shed it
            return v.relabel(item, flows.index(CONCRETE, container.label, item.label, key.label,
                                               True), deep=True)
        return item

    async def eval_Shuffle(self, node: n.Shuffle, scope: Scope, path: str, lenient: bool) -> Value:
        items = await self.eval(node.items, scope, path)
        if not isinstance(items.data, tuple):
            raise ValueTypeError(f"`shuffle` takes a list, not {v.describe(items)}", node.span,
                                 label=flows.value_error(CONCRETE, [items.label]),
                                 source=self.source)
        # One order per run and place: a resumed run that replays it gets the same order.
        seed = f"{self.ctx.shared.trace.run_id}:{path}:{node.line}:{node.column}"
        order = list(range(len(items.data)))
        random.Random(seed).shuffle(order)
        return v.shuffled(items, order, node.span)

    async def eval_Array(self, node: n.Array, scope: Scope, path: str, lenient: bool) -> Value:
        return v.make_list([await self.eval(item, scope, path) for item in node.items])

    async def eval_Object(self, node: n.Object, scope: Scope, path: str, lenient: bool) -> Value:
        entries = {entry.key: await self.eval(entry.value, scope, path) for entry in node.entries}
        keys = flows.container(CONCRETE, (), [(entry.key, entry.span) for entry in node.entries])
        return v.make_object(entries, literal=keys.literal)

    async def eval_Compare(self, node: n.Expr, scope: Scope, path: str, lenient: bool) -> Value:
        seen: list[Value] = []

        async def recording(expr: n.Expr, scope: Scope, path: str) -> Value:
            value = await self._operand(expr, scope, path)
            seen.append(value)
            return value

        holds = await predicate(node, scope, path, recording, self.step)
        return v.labelled(holds, flows.predicate(CONCRETE, [value.label for value in seen]))

    eval_BoolOp = eval_Not = eval_IsTest = eval_Compare

    def step(self, count: int) -> None:
        """Charge the step budget for `count` items a built-in or operator reads."""
        self.ctx.shared.budget.step(count)

    async def eval_BinOp(self, node: n.BinOp, scope: Scope, path: str, lenient: bool) -> Value:
        left = await self.eval(node.left, scope, path, lenient)
        right = await self.eval(node.right, scope, path, lenient)
        return builtins.operate(node.op, left, right, self.step)

    async def eval_Slice(self, node: n.Slice, scope: Scope, path: str, lenient: bool) -> Value:
        container = await self.eval(node.obj, scope, path, lenient)
        start = None if node.start is None else await self.eval(node.start, scope, path, lenient)
        stop = None if node.stop is None else await self.eval(node.stop, scope, path, lenient)
        return builtins.sliced(container, start, stop, self.step)

    async def eval_Builtin(self, node: n.Builtin, scope: Scope, path: str, lenient: bool) -> Value:
        args = [await self.eval(arg, scope, path, lenient) for arg in node.args]
        keywords = {prop.name: await self.eval(prop.value, scope, path, lenient)
                    for prop in node.keywords}
        return builtins.call_builtin(node.name, args, keywords, self.step)

    async def eval_Repeat(
        self, node: n.LoopNode, scope: Scope, path: str, lenient: bool
    ) -> Value:
        return await self.loops.loop(node, scope, path, True)

    eval_For = eval_Loop = eval_Repeat

    async def eval_Parallel(
        self, node: n.Parallel, scope: Scope, path: str, lenient: bool
    ) -> Value:
        return await self.loops.parallel(node, scope, path)

    async def eval_Session(self, node: n.Session, scope: Scope, path: str, lenient: bool) -> Value:
        return await self.sessions.run(node, scope, path)

    async def eval_Do(self, node: n.Do, scope: Scope, path: str, lenient: bool) -> Value:
        return await self.blocks.do(node, scope, path)

    async def eval_Pipeline(
        self, node: n.Pipeline, scope: Scope, path: str, lenient: bool
    ) -> Value:
        return await self.pipelines.run(node, scope, path)

    async def _dispatch(self, target: n.Expr, scope: Scope, path: str) -> Value:
        """A call's target; `handlers[key]` of a map of services (a `map` slot) falls back
        to its `default` entry when it has no `key` entry, else is an error naming them."""
        if not isinstance(target, n.Index):
            return await self.eval(target, scope, path)
        container = await self.eval(target.obj, scope, path)
        data = container.data
        if not (isinstance(data, dict) and data
                and all(isinstance(item.data, Service) for item in data.values())):
            return await self.eval(target, scope, path)
        key = await self.eval(target.index, scope, path)
        if isinstance(key.data, str) and key.data in data:
            return data[key.data]
        if "default" in data:
            return data["default"]
        entries = ", ".join(f"`{name}`" for name in data)
        raise MemberError(f"no entry {v.to_json(key)} to call and no `default` entry "
                          f"(entries: {entries})", target.span, source=self.source,
                          label=flows.value_error(CONCRETE, [key.label]))

    async def eval_Call(self, node: n.Call, scope: Scope, path: str, lenient: bool) -> Value:
        target = await self._dispatch(node.target, scope, path)
        if not isinstance(target.data, Service):
            if (
                isinstance(target.data, tuple)
                and target.data
                and isinstance(target.data[0].data, Service)
            ):
                raise ValueTypeError(
                    f"`{target.data[0].data.slot}` is a list of services: call one of them "
                    "(`for s in ...: call s`, or an index)"
                )
            raise ValueTypeError(f"cannot call {v.describe(target)}: it is not a slot or service",
                                 label=flows.value_error(CONCRETE, [target.label]))
        inputs: dict[str, Value] = {}
        reserved: dict[str, Value] = {}
        for prop in node.properties:
            value = await self.eval(prop.value, scope, path)
            (reserved if prop.name in RESERVED_PROPERTIES else inputs)[prop.name] = value
        return await gated_call(self, node, target.data, inputs, call_options(reserved), scope,
                                path)
