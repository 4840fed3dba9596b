"""One call to a slot: enforce the policy, then make the attempts (`attempts.py`).

The order matters and is the point of this module: the information-hiding
policy is asked first (a violation stops the run and nothing is sent or
traced as a call), then each attempt is admitted by the budget (or stops the
run) and answered by the cache or the service. Every attempt is one `call`
event, failed, cancelled and cache-hit ones included; `retry: N` gives N
extra attempts, with the call's `backoff` between them.
"""

from __future__ import annotations

from typing import Any

from prose.lang import error_kinds as kinds
from prose.lang import flows
from prose.lang.channels import channel_to_dict
from prose.lang.flows import CONCRETE
from prose.runtime import pc
from prose.runtime import values as v
from prose.runtime.attempts import attempt
from prose.runtime.call_site import CallOptions, CallSite, Payload, compile_site
from prose.runtime.context import RunContext
from prose.runtime.errors import (
    CallFailed,
    InformationHidingViolation,
    InputError,
    ValueTypeError,
)
from prose.runtime.services import ServiceSpec
from prose.runtime.trace import ErrorEvent
from prose.runtime.values import Service, Value, wrap
from prose.syntax import nodes as n


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


def site_for(ctx: RunContext, node: n.Call, target: Service, service: ServiceSpec) -> CallSite:
    """The call site of `node` reaching `service`, compiled at its first call of the run."""
    # The slot too: one service object may be bound to several slots (the run's default
    # model), and a call of a service value may reach a different slot each time.
    slot = target.slot
    key = (id(node), id(service), slot)
    site = ctx.call_sites.get(key)
    if site is None:
        site = ctx.call_sites[key] = compile_site(node, slot, service, ctx.slot_schema(slot),
                                                  ctx.slot_ensures(slot))
    return site


def _index(target: Service) -> int:
    return target.index if target.index is not None else flows.NO_INDEX


def enforce_policy(
    ctx: RunContext, node: n.Call, target: Service, payload: Payload, site: CallSite
) -> None:
    """Ask the policy about this call; on a violation stop the run before anything is sent.
    The site's screen (`prose.lang.screen`) clears a call whose values carry nothing any rule
    of the slot reads, without building its channels; any other call is judged in full."""
    slot = target.slot
    screen = site.screen(ctx.policy, payload, _index(target), target.entry)
    if screen is not None and screen.clears(payload.inputs.values(), payload.prompt,
                                            payload.schema):
        return
    channels = payload.channels()
    found = ctx.policy.violations(slot, channels, pc.branch(), _index(target), target.entry)
    if not found:
        return
    message = "; ".join(dict.fromkeys(violation.message for violation in found))
    error = InformationHidingViolation(
        f"information hiding: the call to `{slot}` is not sent: {message}",
        node.span,
        source=ctx.source,
        slot=slot,
        rules=list(dict.fromkeys(violation.rule for violation in found)),
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
            rules=list(dict.fromkeys(violation.rule for violation in found)),
            refused={"branch": list(pc.branch()), "index": _index(target), "entry": target.entry,
                     "channels": [channel_to_dict(channel) for channel in channels]},
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
    site = site_for(ctx, node, target, service)
    payload = site.payload(inputs, options)
    enforce_policy(ctx, node, target, payload, site)
    given = payload.label()
    label = flows.call_output(CONCRETE, slot, given, node.span, pc.branch(),
                              _index(target))
    attempts = 1 + max(options.retry, 0)
    for number in range(1, attempts + 1):
        try:
            output = await attempt(ctx, site, target, payload, options, path, number,
                                   given, label)
        except CallFailed as error:
            if number >= attempts or error.kind in kinds.NOT_RETRIED:
                raise
            if error.kind == kinds.RATE_LIMIT and not getattr(error.value, "retryable", True):
                raise  # a Retry-After past the limit: the error says so; never sleep it out
            delay = _delay(options, number, ctx.shared.backoff_base_s, error.value)
            if delay > 0 and not ctx.shared.scripted:
                await ctx.shared.sleep(delay)
            continue
        return wrap(output, label.provenance, label.transitive, label.chains)
    raise AssertionError("unreachable")  # pragma: no cover


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
        schema_value=schema,
        model=model.data if model is not None else None,  # type: ignore[arg-type]
        retry=retry.data if retry is not None else 0,  # type: ignore[arg-type]
        backoff=backoff.data if backoff is not None else "none",  # type: ignore[arg-type]
        schema=fields,
    )
