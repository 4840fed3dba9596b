"""The control-flow invariants at run time: asked before each call, from the run's history.

`admit` evaluates each `runs only if` condition of the slot in the call's scope, digests
the inputs a `gets the same` form watches, and asks `prose.lang.gates.GateHistory` (the
one judge, which the audit asks too) whether the call may be made; a violation stops
the run before the call (R060, nothing sent) and an `error` event records why. What it
evaluated is recorded on the call's trace events (`gates`), so the audit can judge the
same call again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from prose.errors import ProseError
from prose.lang.gates import GateHistory, Gates, digest
from prose.runtime import pc
from prose.runtime import values as v
from prose.runtime.call_site import CallOptions
from prose.runtime.calls import call_service
from prose.runtime.errors import GateViolation
from prose.runtime.trace import ErrorEvent
from prose.runtime.values import Service, Value
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.runtime.interpreter import Interpreter
    from prose.runtime.scope import Scope


def _path_expr(condition: tuple[str, ...], span: Any) -> n.Expr:
    expr: n.Expr = n.Name(condition[0], span=span)
    for name in condition[1:]:
        expr = n.Member(expr, name, span=span)
    return expr


def involved(gates: Gates, slot: str) -> bool:
    """Whether any control-flow invariant reads or judges calls of `slot`."""
    return (any(guard.slot == slot for guard in gates.guards)
            or any(slot in (rule.slot, rule.approver) for rule in gates.approvals)
            or any(slot in (rule.slot, rule.approver) for rule in gates.same)
            or any(slot in rule.slots for rule in gates.exclusive)
            or any(slot == rule.slot for rule in gates.one_of)
            or any(slot in (*rule.slots, rule.stopper) for rule in gates.stops)
            or gates.ordered_slot(slot) is not None
            or any(slot == rule.approver for rule in gates.growths)
            or any(slot == rule.slot for rule in gates.sequences)
            or any(slot == rule.slot for rule in gates.items_given)
            or any(slot == rule.slot for rule in gates.in_order))


async def admit(interpreter: Interpreter, node: n.Call, target: Service,
                inputs: Mapping[str, Value], scope: Scope, path: str) -> dict[str, Any] | None:
    """Judge a call of `target` before it is made; record it in the run's history.

    Returns what the call's trace events record under `gates` (None when no control-flow
    invariant is about this slot)."""
    ctx = interpreter.ctx
    gates, slot = ctx.policy.gates, target.slot
    if not gates or not involved(gates, slot):
        return None
    conditions: dict[str, Any] = {}
    for guard in gates.guards_of(slot):
        try:
            value = await interpreter.eval(_path_expr(guard.condition, node.span), scope, path,
                                           True)
        except ProseError:
            continue  # not evaluable here: the judge reports it
        conditions[guard.key] = v.truthy(value)
    given = {name: digest(v.plain(inputs[name])) for name in gates.watched_inputs(slot)
             if name in inputs}
    history = ctx.gate_history
    chain = pc.branch()
    found = history.violations(gates, slot, conditions=conditions, given=given, path=path,
                               index=target.index, chain=chain)
    if found:
        message = "; ".join(dict.fromkeys(item.message for item in found))
        rules = list(dict.fromkeys(item.rule for item in found))
        error = GateViolation(f"the call to `{slot}` is not made: {message}", node.span,
                              source=ctx.source, slot=slot, rules=rules)
        ctx.shared.trace.emit(ErrorEvent(
            code=error.code, kind=error.kind, message=error.message, file=node.span.file,
            line=node.line, column=node.column, slot=slot, rules=rules,
            refused={"path": path, "gates": {"conditions": conditions, "given": given}}))
        raise error
    history.started(gates, slot, given=given, path=path, index=target.index, chain=chain)
    record: dict[str, Any] = {}
    if conditions:
        record["conditions"] = conditions
    if given:
        record["given"] = given
    return record


async def gated_call(interpreter: Interpreter, node: n.Call, target: Service,
                     inputs: dict[str, Value], options: CallOptions, scope: Scope,
                     path: str) -> Value:
    """`call_service`, judged first by the control-flow invariants about its slot (a `call`,
    and a session, which is a call of its agent's slot)."""
    ctx = interpreter.ctx
    gates = ctx.policy.gates
    if not gates or not involved(gates, target.slot):
        return await call_service(ctx, node, target, inputs, options, path)
    record = await admit(interpreter, node, target, inputs, scope, path)
    try:
        output = await call_service(ctx, node, target, inputs,
                                    replace(options, gates=record or None), path)
    except ProseError:
        returned(ctx.gate_history, gates, target.slot, None, path)
        raise
    returned(ctx.gate_history, gates, target.slot, output, path, target.index)
    found = GateHistory.unexpected(gates, target.slot, v.plain(output))
    if found:  # `returns ... as one of`: the reply is not passed on
        message = "; ".join(dict.fromkeys(item.message for item in found))
        error = GateViolation(f"the result of `{target.slot}` is not used: {message}",
                              node.span, source=ctx.source, slot=target.slot,
                              rules=[found[0].rule])
        ctx.shared.trace.emit(ErrorEvent(
            code=error.code, kind=error.kind, message=error.message, file=node.span.file,
            line=node.line, column=node.column, slot=target.slot, rules=[found[0].rule],
            refused={"path": path, "returned": True}))
        raise error
    return output


def returned(history: GateHistory, gates: Gates, slot: str, output: Value | None,
             path: str, index: int | None = None) -> None:
    """The call ended: an approver's decision (None: it failed) is its latest."""
    if output is None:
        history.ended(gates, slot)
        history.failed(slot, path)
    else:
        history.returned(gates, slot, v.plain(output), path, index)


def admit_growth(interpreter: Interpreter, node: n.Node, name: str, path: str) -> None:
    """`` `name` grows only after `a` returns ... ``: judged before a `record`/`append` into
    `name` (or an assignment to it): a violation stops the run before the list grows
    (R060). The trace records no growth, so the audit cannot judge it again."""
    ctx = interpreter.ctx
    gates = ctx.policy.gates
    if not gates.growths:
        return
    found = ctx.gate_history.growth_violations(gates, name, path)
    if not found:
        return
    message = "; ".join(dict.fromkeys(item.message for item in found))
    rules = [found[0].rule]
    error = GateViolation(f"`{name}` does not grow: {message}", node.span, source=ctx.source,
                          slot=found[0].slot, rules=rules)
    ctx.shared.trace.emit(ErrorEvent(
        code=error.code, kind=error.kind, message=error.message, file=node.span.file,
        line=node.line, column=node.column, slot=found[0].slot, rules=rules,
        refused={"path": path}))
    raise error
