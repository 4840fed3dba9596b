"""One call to a slot: enforce the policy, then make the attempts (`attempts.py`).

The order matters and is the point of this module: the information-hiding
policy is asked first (a violation stops the run and nothing is sent or
traced as a call), then each attempt is admitted by the budget (or stops the
run) and answered by the cache or the service. Every attempt is one `call`
event, failed, cancelled and cache-hit ones included; `retry: N` gives N
extra attempts, with the call's `backoff` between them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prose.check.policy import InputFlow
from prose.runtime import values as v
from prose.runtime.attempts import CallOptions, model_attempt, pattern_attempt, python_attempt
from prose.runtime.context import RunContext
from prose.runtime.errors import (
    CallFailed,
    InformationHidingViolation,
    InputError,
    ValueTypeError,
)
from prose.runtime.services import ModelService, PythonService, ServiceSpec
from prose.runtime.trace import CallEvent, ErrorEvent
from prose.runtime.values import Service, Value, wrap
from prose.syntax import nodes as n

# Errors that another attempt cannot fix.
NO_RETRY = frozenset({"auth", "bad_request", "context_window"})


def service_for(ctx: RunContext, target: Service, node: n.Node) -> ServiceSpec:
    binding = ctx.bindings.get(target.slot)
    if binding is None:
        raise InputError(
            f"the slot `{target.slot}` is not bound to a service", node.span, source=ctx.source
        )
    if isinstance(binding, list):
        if target.index is None:
            raise InputError(
                f"`{target.slot}` is bound to {len(binding)} services: iterate it or index it",
                node.span,
                source=ctx.source,
            )
        if not 0 <= target.index < len(binding):
            raise InputError(f"`{target.label()}` is not bound", node.span, source=ctx.source)
        return binding[target.index]
    return binding


def enforce_policy(
    ctx: RunContext, node: n.Call, slot: str, inputs: Mapping[str, Value], options: CallOptions
) -> None:
    """Ask the policy about this call; on a violation stop the run before anything is sent."""
    flows = {name: InputFlow(value.provenance, value.transitive) for name, value in inputs.items()}
    literal = [*inputs]
    for value in inputs.values():
        literal.extend(sorted(value.literal))
    if options.prompt is not None:
        flows["prompt"] = InputFlow(options.prompt.provenance, options.prompt.transitive)
        literal.extend(sorted(options.prompt.literal))
    found = [(v.rule, v.message) for v in ctx.policy.violations(slot, flows, literal)]
    carried = frozenset().union(*(flow.provenance for flow in flows.values()))
    for a, b in ctx.unmerged:  # `the result returns A and B unmerged`: no call receives both
        if a in carried and b in carried:
            found.append(
                (
                    "unmerged",
                    f"the call would receive both `{a}` and `{b}`, "
                    "which the result must return unmerged",
                )
            )
    if not found:
        return
    message = "; ".join(text for _, text in found)
    error = InformationHidingViolation(
        f"information hiding: the call to `{slot}` is not sent: {message}",
        node.span,
        source=ctx.source,
        slot=slot,
        rules=[rule for rule, _ in found],
    )
    ctx.shared.trace.emit(
        ErrorEvent(
            code=error.code,
            kind=error.kind,
            message=error.message,
            file=node.span.file,
            line=node.line,
            column=node.column,
            slot=slot,
        )
    )
    raise error


def _delay(options: CallOptions, attempt: int, base: float, error: Any) -> float:
    delay = 0.0
    if options.backoff == "linear":
        delay = base * attempt
    elif options.backoff == "exponential":
        delay = base * 2 ** (attempt - 1)
    retry_after = getattr(error, "retry_after", None)
    return max(delay, float(retry_after)) if retry_after else delay


async def call_service(
    ctx: RunContext,
    node: n.Call,
    target: Service,
    inputs: dict[str, Value],
    options: CallOptions,
    path: str,
) -> Value:
    """Call `target` with `inputs`: policy first, then each attempt; the output with provenance."""
    slot = target.slot
    service = service_for(ctx, target, node)
    enforce_policy(ctx, node, slot, inputs, options)
    transitive = frozenset({slot})
    for value in (*inputs.values(), *([options.prompt] if options.prompt else [])):
        transitive |= value.transitive
    attempts = 1 + max(options.retry, 0)
    for attempt in range(1, attempts + 1):
        try:
            output = await _attempt(
                ctx, node, target, service, inputs, options, path, attempt, transitive
            )
        except CallFailed as error:
            if attempt >= attempts or error.kind in NO_RETRY:
                raise
            delay = _delay(options, attempt, ctx.shared.backoff_base_s, error.value)
            if delay > 0 and not ctx.shared.scripted:
                await ctx.shared.sleep(delay)
            continue
        return wrap(output, frozenset({slot}), transitive)
    raise AssertionError("unreachable")  # pragma: no cover


async def _attempt(
    ctx: RunContext,
    node: n.Call,
    target: Service,
    service: ServiceSpec,
    inputs: dict[str, Value],
    options: CallOptions,
    path: str,
    attempt: int,
    transitive: frozenset[str],
) -> Any:
    shared = ctx.shared
    slot = target.slot
    carried = [*inputs.values(), *([options.prompt] if options.prompt is not None else [])]
    provenance = sorted(set().union(*(value.provenance for value in carried)))
    event = CallEvent(
        id=shared.trace.next_id(),
        slot=slot,
        index=target.index,
        service=service.label,
        file=node.span.file,
        line=node.line,
        column=node.column,
        path=path,
        attempt=attempt,
        provenance=provenance,
        transitive=sorted(transitive - {slot}),
    )
    if isinstance(service, ModelService):
        return await model_attempt(ctx, node, slot, service, inputs, options, path, event)
    if isinstance(service, PythonService):
        return await python_attempt(ctx, node, service, inputs, options, event)
    return await pattern_attempt(ctx, node, slot, service, inputs, event)


def call_options(reserved: dict[str, Value]) -> CallOptions:
    """The reserved call properties checked and converted."""
    model = reserved.get("model")
    if model is not None and model.data is None:
        model = None  # `model: some_config` with a null default means "no override"
    retry = reserved.get("retry")
    backoff = reserved.get("backoff")
    schema = reserved.get("schema")
    if model is not None and not isinstance(model.data, str):
        raise ValueTypeError("`model:` must be a string")
    if retry is not None and (
        not isinstance(retry.data, int) or isinstance(retry.data, bool) or retry.data < 0
    ):
        raise ValueTypeError("`retry:` must be an integer >= 0")
    if backoff is not None and backoff.data not in ("none", "linear", "exponential"):
        raise ValueTypeError('`backoff:` is "none", "linear" or "exponential"')
    fields: dict[str, Any] | None = None
    if schema is not None:
        if not isinstance(schema.data, dict):
            raise ValueTypeError("`schema:` must be an object of field name to type name")
        fields = v.plain(schema)
    return CallOptions(
        prompt=reserved.get("prompt"),
        model=model.data if model is not None else None,  # type: ignore[arg-type]
        retry=retry.data if retry is not None else 0,  # type: ignore[arg-type]
        backoff=backoff.data if backoff is not None else "none",  # type: ignore[arg-type]
        schema=fields,
    )
