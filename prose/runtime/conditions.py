"""Conditions (LANGUAGE.md 4.5): deterministic predicates and the discretion judge.

A condition whose text parsed as a predicate is evaluated here over values in
scope. Any other text goes to the judge model, which receives the text and
the values of the variables, parameters and config keys it mentions (slot
names give it nothing) and answers `{answer, reason}`; a `choice` gets the
criteria and the fixed option labels and answers `{choice, reason}`. A judge
failure is an error at that line, never a silent false.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from prose.lang import flows
from prose.lang.builtins import operation_problem
from prose.lang.flows import CONCRETE, Label
from prose.runtime import builtins
from prose.runtime.builtins import Step
from prose.runtime.context import RunContext
from prose.runtime.errors import (
    ConditionNotCode,
    NameNotDefined,
    ProseRuntimeError,
    ValueTypeError,
)
from prose.runtime.judge import judge
from prose.runtime.scope import Kind, Scope
from prose.runtime.values import EMPTY, Value, equal, member, plain, truthy
from prose.syntax import nodes as n

Evaluate = Callable[[n.Expr, Scope, str], Awaitable[Value]]

ORDERINGS = ("==", "!=", "<", "<=", ">", ">=")
_VALUE_KINDS = (Kind.VAR, Kind.CONST, Kind.LOOP, Kind.CATCH, Kind.CONFIG, Kind.PARAMETER)


def _no_step(count: int) -> None:
    return None


async def predicate(
    expr: n.Expr, scope: Scope, path: str, evaluate: Evaluate, step: Step = _no_step
) -> bool:
    """The truth of a deterministic predicate (comparisons, and/or/not, `is` tests, truthiness)."""
    if isinstance(expr, n.BoolOp):
        for operand in expr.operands:
            holds = await predicate(operand, scope, path, evaluate, step)
            if expr.op == "and" and not holds:
                return False
            if expr.op == "or" and holds:
                return True
        return expr.op == "and"
    if isinstance(expr, n.Not):
        return not await predicate(expr.operand, scope, path, evaluate, step)
    if isinstance(expr, n.IsTest):
        value = await evaluate(expr.operand, scope, path)
        if expr.test == "null":
            return value.data is None
        if expr.test == "not null":
            return value.data is not None
        empty = value.data is None or (
            isinstance(value.data, str | tuple | dict) and not value.data
        )
        return empty if expr.test == "empty" else not empty
    if isinstance(expr, n.Compare):
        left = await evaluate(expr.left, scope, path)
        right = await evaluate(expr.right, scope, path)
        if expr.op in ORDERINGS:
            return compare(expr.op, left, right)
        return builtins.test(expr.op, left, right, step)
    return truthy(await evaluate(expr, scope, path))


def compare(op: str, left: Value, right: Value) -> bool:
    """`==`/`!=` by deep equality; orderings between two numbers or two strings only."""
    if op == "==":
        return equal(left, right)
    if op == "!=":
        return not equal(left, right)
    a, b = left.data, right.data
    problem = operation_problem(op, left.type_name, right.type_name)
    if problem is not None:  # it names the operands' types: it carries their labels
        raise ValueTypeError(problem, label=flows.value_error(CONCRETE, [left.label, right.label]))
    if op == "<":
        return a < b  # type: ignore[operator]
    if op == "<=":
        return a <= b  # type: ignore[operator]
    if op == ">":
        return a > b  # type: ignore[operator]
    return a >= b  # type: ignore[operator]


def mentioned_values(ctx: RunContext, mentions: Sequence[str], scope: Scope) -> dict[str, Any]:
    """The values of the names a discretion text mentions, by name (dotted paths included).

    A variable declared in the program but not bound yet gives null; slots,
    aliases, blocks and words that name nothing give nothing.
    """
    values: dict[str, Any] = {}
    for mention in mentions:
        head, *rest = mention.split(".")
        found = scope.find(head)
        if found is None:
            if head in ctx.declared:
                values[mention] = None
            continue
        binding = found[1]
        if binding.kind not in _VALUE_KINDS:
            continue
        value = binding.value
        try:
            for name in rest:
                value = member(value, name)
        except ProseRuntimeError:
            values[head] = plain(binding.value)
            continue
        values[mention] = plain(value)
    return values


def mentioned_label(ctx: RunContext, mentions: Sequence[str], scope: Scope) -> Label:
    """What a judge's decision depends on: the labels of the values it is shown (the whole
    value of each mentioned name, as `mentioned_values` may fall back to it)."""
    labels: list[Label] = []
    for mention in mentions:
        found = scope.find(mention.split(".")[0])
        if found is not None and found[1].kind in _VALUE_KINDS:
            labels.append(found[1].value.label)
    return CONCRETE.join(labels)


async def condition_holds(
    ctx: RunContext, condition: n.Condition, scope: Scope, path: str, evaluate: Evaluate,
    step: Step = _no_step,
) -> bool:
    """Evaluate an `if`/`elif`/`loop` condition: a predicate here, discretion text by the judge."""
    if condition.predicate is not None:
        return await predicate(condition.predicate, scope, path, evaluate, step)
    if condition.problem is not None:  # code that does not parse is never a judge's
        raise ConditionNotCode(
            f"the condition `{condition.text}` is not an expression: {condition.problem}",
            condition.span, source=ctx.source)
    values = mentioned_values(ctx, condition.mentions, scope)
    if not values:
        raise NameNotDefined(
            f"the condition `{condition.text}` mentions no variable, parameter or config key, "
            "so a judge would have nothing to decide from",
            condition.span,
            source=ctx.source,
        )
    decision, _ = await judge(
        ctx, kind="condition", text=condition.text, node=condition, values=values, path=path
    )
    return bool(decision)


__all__ = ["EMPTY", "compare", "condition_holds", "mentioned_values", "predicate"]
