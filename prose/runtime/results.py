"""`` the result satisfies `EXPR` ``, judged on what the program returned.

One evaluator of the pure expressions (`prose.lang.results.PURE_NODES`) over a returned
object, built from the interpreter's own operations: `predicate` and `compare` for
conditions, `prose.runtime.builtins` for operators, slices and built-ins, `values` for
members and indexes, so an expression means here what it means in a program. It never
suspends (nothing it evaluates waits for anything), so the audit, which is not async,
drives it with `evaluate_now`.

The run time asks `broken_results` when the program has returned (a run that stopped or
waits for a person returned nothing and is not judged); the audit asks it of the
result the trace's `run_end` records (`prose.ledger.results`).
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from prose.errors import ProseError
from prose.lang.results import ResultRule, parse_result_expression, root_names
from prose.runtime import builtins
from prose.runtime import values as v
from prose.runtime.conditions import predicate
from prose.runtime.errors import NameNotDefined, ValueTypeError
from prose.runtime.scope import Binding, Kind, Scope
from prose.runtime.values import Value
from prose.syntax import nodes as n

T = TypeVar("T")

_CONDITIONS = (n.Compare, n.BoolOp, n.Not, n.IsTest)


def _no_step(count: int) -> None:
    return None  # bounded by the built-ins' own limits (`prose.lang.builtins`)


async def evaluate(expr: n.Expr, scope: Scope, path: str = "") -> Value:
    """The value of a pure expression in `scope`."""
    if isinstance(expr, _CONDITIONS):
        return v.constant(await predicate(expr, scope, path, evaluate, _no_step))
    if isinstance(expr, n.Literal):
        return v.constant(expr.value)
    if isinstance(expr, n.String):
        pieces: list[str] = []
        for part in expr.parts:
            if isinstance(part, str):
                pieces.append(part)
                continue
            value = _lookup(part.path[0], scope)
            for name in part.path[1:]:
                value = v.member(value, name)
            pieces.append(v.to_text(value))
        return v.text("".join(pieces))
    if isinstance(expr, n.Name):
        return _lookup(expr.name, scope)
    if isinstance(expr, n.Member):
        return v.member(await evaluate(expr.obj, scope, path), expr.name)
    if isinstance(expr, n.Index):
        return v.index(await evaluate(expr.obj, scope, path),
                       await evaluate(expr.index, scope, path))
    if isinstance(expr, n.Array):
        return v.make_list([await evaluate(item, scope, path) for item in expr.items])
    if isinstance(expr, n.Object):
        return v.make_object({entry.key: await evaluate(entry.value, scope, path)
                              for entry in expr.entries})
    if isinstance(expr, n.BinOp):
        return builtins.operate(expr.op, await evaluate(expr.left, scope, path),
                                await evaluate(expr.right, scope, path), _no_step)
    if isinstance(expr, n.Slice):
        start = None if expr.start is None else await evaluate(expr.start, scope, path)
        stop = None if expr.stop is None else await evaluate(expr.stop, scope, path)
        return builtins.sliced(await evaluate(expr.obj, scope, path), start, stop, _no_step)
    if isinstance(expr, n.Builtin):
        args = [await evaluate(arg, scope, path) for arg in expr.args]
        keywords = {prop.name: await evaluate(prop.value, scope, path)
                    for prop in expr.keywords}
        return builtins.call_builtin(expr.name, args, keywords, _no_step)
    raise ValueTypeError(f"a `{type(expr).__name__}` is not a pure expression")


def _lookup(name: str, scope: Scope) -> Value:
    found = scope.find(name)
    if found is None:
        raise NameNotDefined(f"`{name}` is not defined")
    return found[1].value


def evaluate_now(coroutine: Coroutine[Any, Any, T]) -> T:
    """The value of a coroutine that never suspends (`evaluate`'s), without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    coroutine.close()
    raise RuntimeError("a pure expression suspended")


@dataclass(frozen=True, slots=True)
class BrokenResult:
    """A `the result satisfies` rule the returned object does not satisfy, and why."""

    rule: ResultRule
    message: str


def result_scope(result: Any, names: tuple[str, ...], rule: ResultRule,
                 run_values: Mapping[str, Any]) -> Scope:
    """Each name bound to that key of the returned object (null when it has none), or, for
    a parameter or config key the rule reads (`rule.given`), to the run's value of it."""
    scope = Scope()
    fields = result if isinstance(result, Mapping) else {}
    for name in names:
        value = run_values.get(name) if name in rule.given else fields.get(name)
        scope.bindings[name] = Binding(v.wrap(value), Kind.CONST)
    return scope


def _shown(value: Value) -> str:
    text = v.to_json(value)
    return text if len(text) <= 60 else text[:57] + "..."


async def broken_results(rules: tuple[ResultRule, ...], result: Any,
                         run_values: Mapping[str, Any] | None = None) -> list[BrokenResult]:
    """The rules the returned object `result` (plain data) breaks: false, or an expression
    that cannot be evaluated on it (a wrong type, say), which is no proof that it holds.
    `run_values`: the run's parameters and config keys, by name."""
    broken: list[BrokenResult] = []
    for rule in rules:
        parsed = parse_result_expression(rule.expression)
        if parsed.expr is None:
            broken.append(BrokenResult(rule, parsed.problem))
            continue
        if rule.items:
            broken += await _broken_items(rule, parsed.expr, result, run_values or {})
            continue
        scope = result_scope(result, root_names(parsed.expr), rule, run_values or {})
        try:
            holds = v.truthy(await evaluate(parsed.expr, scope))
        except ProseError as error:
            message = getattr(error, "message", str(error))
            broken.append(BrokenResult(rule, f"`{rule.expression}` cannot be evaluated on the "
                                             f"result: {message}"))
            continue
        if not holds:
            shown = ", ".join(f"`{name}` = {_shown(scope.bindings[name].value)}"
                              for name in root_names(parsed.expr))
            broken.append(BrokenResult(rule, f"`{rule.expression}` is false of the result "
                                             f"({shown})"))
    return broken


async def _broken_items(rule: ResultRule, expr: n.Expr, result: Any,
                        run_values: Mapping[str, Any]) -> list[BrokenResult]:
    """`` every `item` of `items` satisfies ``: the first item it is false of (or cannot
    be evaluated on); a returned `items` that is no list breaks it too."""
    fields = result if isinstance(result, Mapping) else {}
    items = fields.get(rule.items)
    if not isinstance(items, list):
        return [BrokenResult(rule, f"`{rule.items}` of the result is not a list")]
    names = tuple(name for name in root_names(expr) if name != rule.item)
    for position, item in enumerate(items):
        scope = result_scope(result, names, rule, run_values)
        scope.bindings[rule.item] = Binding(v.wrap(item), Kind.CONST)
        try:
            holds = v.truthy(await evaluate(expr, scope))
        except ProseError as error:
            message = getattr(error, "message", str(error))
            return [BrokenResult(rule, f"`{rule.expression}` cannot be evaluated on "
                                       f"`{rule.items}[{position}]`: {message}")]
        if not holds:
            return [BrokenResult(rule, f"`{rule.expression}` is false of `{rule.items}"
                                       f"[{position}]` (`{rule.item}` = "
                                       f"{_shown(scope.bindings[rule.item].value)})")]
    return []
