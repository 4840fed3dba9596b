"""One call to a slot: enforce the policy, build the messages, send, trace, retry.

The order matters and is the point of this module: the information-hiding
policy is asked first (a violation stops the run and nothing is sent or
traced as a call), then the budget admits the attempt (or stops the run),
then the cache or the model answers. Every attempt is one `call` event,
failed, cancelled and cache-hit ones included.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prose.check.policy import InputFlow
from prose.runtime.cache import CachedResponse
from prose.runtime.context import RunContext
from prose.runtime.errors import (
    BudgetExceeded,
    CallFailed,
    InformationHidingViolation,
    InputError,
    ScriptExhausted,
)
from prose.runtime.prompts import messages_to_dicts, render_value
from prose.runtime.services import ModelService, PatternService, PythonService, ServiceSpec
from prose.runtime.trace import CallEvent, ErrorEvent, Usage
from prose.runtime.values import Service, Value, plain, to_text, wrap
from prose.syntax import nodes as n

# Errors that another attempt cannot fix.
NO_RETRY = frozenset({"auth", "bad_request", "context_window"})


@dataclass(frozen=True, slots=True)
class CallOptions:
    """The reserved properties of one call, evaluated."""

    prompt: Value | None = None
    model: str | None = None
    retry: int = 0
    backoff: str = "none"
    schema: Mapping[str, Any] | None = None


def service_for(ctx: RunContext, target: Service, node: n.Node) -> ServiceSpec:
    binding = ctx.bindings.get(target.slot)
    if binding is None:
        raise InputError(f"the slot `{target.slot}` is not bound to a service", node.span, source=ctx.source)
    if isinstance(binding, list):
        if target.index is None:
            raise InputError(
                f"`{target.slot}` is bound to {len(binding)} services: iterate it or index it",
                node.span, source=ctx.source,
            )
        if not 0 <= target.index < len(binding):
            raise InputError(f"`{target.label()}` is not bound", node.span, source=ctx.source)
        return binding[target.index]
    return binding


def enforce_policy(ctx: RunContext, node: n.Call, slot: str, inputs: Mapping[str, Value], options: CallOptions) -> None:
    """Ask the policy about this call; on a violation stop the run before anything is sent."""
    flows = {name: InputFlow(value.provenance, value.transitive) for name, value in inputs.items()}
    literal = [*inputs]
    for value in inputs.values():
        literal.extend(sorted(value.literal))
    if options.prompt is not None:
        flows["prompt"] = InputFlow(options.prompt.provenance, options.prompt.transitive)
        literal.extend(sorted(options.prompt.literal))
    violations = ctx.policy.violations(slot, flows, literal)
    if not violations:
        return
    message = "; ".join(v.message for v in violations)
    error = InformationHidingViolation(
        f"information hiding: the call to `{slot}` is not sent: {message}",
        node.span, source=ctx.source, slot=slot, rules=[v.rule for v in violations],
    )
    ctx.shared.trace.emit(ErrorEvent(code=error.code, kind=error.kind, message=error.message,
                                     file=node.span.file, line=node.line, column=node.column, slot=slot))
    raise error


def admit_and_lookup(
    ctx: RunContext, node: n.Node, *, what: str, path: str, model: str,
    messages: list[dict[str, str]], schema: Mapping[str, Any] | None, params: Mapping[str, Any],
) -> tuple[str, CachedResponse | None]:
    """The cache key of this attempt and its cached answer; a miss reserves one call of the budget."""
    shared = ctx.shared
    site = f"{node.span.file}:{node.line}:{node.column}"
    key = shared.keys.key(site=site, path=path, model=model, messages=messages,
                          schema=schema, params=params)
    cached = shared.cache.get(key) if shared.cache is not None else None
    if cached is not None:
        shared.budget.cache_hits += 1
        return key, cached
    try:
        shared.budget.admit(what, node.span)
    except BudgetExceeded as error:
        error.at(node.span, ctx.source)
        raise
    return key, None


def record_usage(ctx: RunContext, response: Any) -> None:
    usage = response.usage
    ctx.shared.budget.record(usage.prompt_tokens, usage.completion_tokens, response.cost_usd)


def _schema(fields: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not fields:
        return None
    if "type" in fields or "properties" in fields or "$ref" in fields:
        return dict(fields)  # already a JSON schema (from an instance file)
    from prose.llm.schema import schema_from_fields

    return schema_from_fields({str(k): str(v) for k, v in fields.items()})


def _delay(options: CallOptions, attempt: int, base: float, error: Any) -> float:
    delay = 0.0
    if options.backoff == "linear":
        delay = base * attempt
    elif options.backoff == "exponential":
        delay = base * 2 ** (attempt - 1)
    retry_after = getattr(error, "retry_after", None)
    return max(delay, float(retry_after)) if retry_after else delay


async def call_service(
    ctx: RunContext, node: n.Call, target: Service, inputs: dict[str, Value],
    options: CallOptions, path: str,
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
            output = await _attempt(ctx, node, target, service, inputs, options, path, attempt,
                                    transitive)
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
    ctx: RunContext, node: n.Call, target: Service, service: ServiceSpec,
    inputs: dict[str, Value], options: CallOptions, path: str, attempt: int,
    transitive: frozenset[str],
) -> Any:
    shared = ctx.shared
    slot = target.slot
    carried = [*inputs.values(), *([options.prompt] if options.prompt is not None else [])]
    provenance = sorted(set().union(*(value.provenance for value in carried)))
    event = CallEvent(
        id=shared.trace.next_id(), slot=slot, index=target.index, service=service.label,
        file=node.span.file, line=node.line, column=node.column, path=path, attempt=attempt,
        provenance=provenance, transitive=sorted(transitive - {slot}),
    )
    if isinstance(service, ModelService):
        return await _model_attempt(ctx, node, slot, service, inputs, options, path, event)
    if isinstance(service, PythonService):
        return await _python_attempt(ctx, node, service, inputs, options, event)
    return await _pattern_attempt(ctx, node, slot, service, inputs, event)


def _finish(ctx: RunContext, event: CallEvent, output: Any, started: float) -> None:
    event.output = output
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, sort_keys=True)
    event.sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
    event.latency_ms = round((time.perf_counter() - started) * 1000, 3)
    ctx.shared.trace.emit(event)
    _progress(ctx, "end", event)


def _fail(ctx: RunContext, event: CallEvent, kind: str, message: str, started: float) -> None:
    event.error = {"kind": kind, "message": message}
    event.latency_ms = round((time.perf_counter() - started) * 1000, 3)
    ctx.shared.trace.emit(event)
    _progress(ctx, "end", event)


def _progress(ctx: RunContext, phase: str, event: CallEvent) -> None:
    if ctx.shared.progress is not None:
        ctx.shared.progress(phase, event.model_dump(include={
            "id", "slot", "index", "model", "line", "usage", "latency_ms", "error", "cache_hit"}))


async def _model_attempt(
    ctx: RunContext, node: n.Call, slot: str, service: ModelService, inputs: dict[str, Value],
    options: CallOptions, path: str, event: CallEvent,
) -> Any:
    from prose.llm.errors import LLMError, ScriptExhaustedError
    from prose.llm.types import ChatRequest

    shared = ctx.shared
    schema = _schema(options.schema or service.schema or ctx.slot_schema(slot))
    model = service.model or shared.default_model
    if options.model and not shared.scripted:
        model = options.model
    messages = shared.prompts.call_messages(
        role=service.role, ensures=ctx.slot_ensures(slot),
        prompt=to_text(options.prompt) if options.prompt is not None else None, inputs=inputs,
    )
    sent = messages_to_dicts(messages)
    event.model, event.messages = model, sent
    if shared.shown is not None:
        shared.shown.append({"slot": event.slot, "index": event.index, "line": node.line,
                             "model": model, "messages": sent})
    key, cached = admit_and_lookup(ctx, node, what=f"the call to `{slot}` at line {node.line}",
                                   path=path, model=model, messages=sent, schema=schema,
                                   params=dict(service.params))
    event.key = key
    started = time.perf_counter()
    if cached is not None:
        event.cache_hit = True
        event.usage = Usage(prompt_tokens=cached.prompt_tokens, completion_tokens=cached.completion_tokens,
                            total_tokens=cached.prompt_tokens + cached.completion_tokens)
        output = cached.parsed if cached.parsed is not None else cached.text
        _finish(ctx, event, output, started)
        return output
    params = {k: v for k, v in service.params.items() if k in ("temperature", "max_tokens")}
    if "timeout" in service.params:
        params["timeout_s"] = float(service.params["timeout"])
    request = ChatRequest(model=model, messages=messages, schema=schema, retries=0,
                          metadata={"slot": slot, "call": event.id}, **params)
    _progress(ctx, "start", event)
    try:
        async with shared.semaphore:
            response = await shared.client.complete(request)
    except asyncio.CancelledError:
        _fail(ctx, event, "cancelled", "cancelled: another branch finished first", started)
        raise
    except ScriptExhaustedError:
        _fail(ctx, event, "script_exhausted", f"the script has no response left for `{slot}`", started)
        raise ScriptExhausted(
            f"the script has no response left for slot `{event.slot}`"
            + (f" (service {event.index})" if event.index is not None else ""),
            node.span, source=ctx.source, slot=slot,
        ) from None
    except LLMError as error:
        _fail(ctx, event, error.kind, error.message, started)
        raise CallFailed(f"the call to `{slot}` failed: {error.message}", node.span,
                         source=ctx.source, slot=slot, kind=error.kind, value=error,
                         provenance=frozenset({slot})) from None
    record_usage(ctx, response)
    event.model = response.model or model
    event.usage = Usage(prompt_tokens=response.usage.prompt_tokens,
                        completion_tokens=response.usage.completion_tokens,
                        total_tokens=response.usage.total_tokens)
    event.cost_usd = response.cost_usd
    output = response.parsed if response.parsed is not None else response.text
    _finish(ctx, event, output, started)
    if shared.cache is not None:
        shared.cache.put(key, CachedResponse(response.text, response.parsed, event.model or model,
                                             response.usage.prompt_tokens, response.usage.completion_tokens))
    return output


async def _python_attempt(
    ctx: RunContext, node: n.Call, service: PythonService, inputs: dict[str, Value],
    options: CallOptions, event: CallEvent,
) -> Any:
    arguments = {name: plain(value) for name, value in inputs.items()}
    if options.prompt is not None:
        arguments["prompt"] = to_text(options.prompt)
    event.messages = [{"role": "arguments", "content": render_value(arguments)}]
    started = time.perf_counter()
    _progress(ctx, "start", event)
    try:
        async with ctx.shared.semaphore:
            result = service.function(**arguments)
            if inspect.isawaitable(result):
                result = await result
    except asyncio.CancelledError:
        _fail(ctx, event, "cancelled", "cancelled: another branch finished first", started)
        raise
    except Exception as error:  # a user's function may raise anything
        message = f"{type(error).__name__}: {error}"
        _fail(ctx, event, "python", message, started)
        raise CallFailed(f"the call to `{event.slot}` failed: {message}", node.span,
                         source=ctx.source, slot=event.slot, kind="python",
                         provenance=frozenset({event.slot})) from None
    output = plain(wrap(result))
    _finish(ctx, event, output, started)
    return output


async def _pattern_attempt(
    ctx: RunContext, node: n.Call, slot: str, service: PatternService,
    inputs: dict[str, Value], event: CallEvent,
) -> Any:
    from prose.runtime.runner import run_nested

    started = time.perf_counter()
    event.messages = [{"role": "inputs", "content": render_value({k: plain(v) for k, v in inputs.items()})}]
    _progress(ctx, "start", event)
    try:
        result = await run_nested(ctx, service, slot, {k: plain(v) for k, v in inputs.items()}, node)
    except asyncio.CancelledError:
        _fail(ctx, event, "cancelled", "cancelled: another branch finished first", started)
        raise
    except CallFailed as error:
        _fail(ctx, event, error.kind, error.message, started)
        raise
    output = plain(result)
    _finish(ctx, event, output, started)
    return output
