"""The attempts of one call, by kind of service: a model, a Python callable, a nested pattern.

Each attempt is one `call` event, written when it ends (sent, failed,
cancelled or served from the cache); its `time` is when it started. A model
attempt goes through the run's one model exchange (`exchange.py`, which the
judge uses too): the budget admits it only when the cache does not answer it.

The route of a call: `Interpreter.eval_Call` evaluates the target and the
properties, `calls.call_service` asks the policy and makes the attempts,
`attempt` traces one and hands it to its kind, and `exchange.exchange` talks
to the model client.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from prose.lang import error_kinds as kinds
from prose.lang import flows
from prose.lang.flows import Label
from prose.llm.errors import LLMError, ScriptExhaustedError
from prose.runtime import pc
from prose.runtime.agent import InputsAltered, TurnsExceeded, declared_tools, run_agent
from prose.runtime.call_site import CallOptions, CallSite, Payload
from prose.runtime.content import checked_messages
from prose.runtime.context import RunContext
from prose.runtime.errors import (
    BudgetExceeded,
    CallFailed,
    InformationHidingViolation,
    ProseRuntimeError,
    ScriptExhausted,
)
from prose.runtime.exchange import Exchange, exchange
from prose.runtime.integrity import output_sha256
from prose.runtime.prompts import messages_to_dicts, render_value
from prose.runtime.python_calls import call_function
from prose.runtime.services import (
    ModelService,
    PatternService,
    PersonService,
    PythonService,
)
from prose.runtime.trace import CallEvent
from prose.runtime.values import Service, plain, to_text, wrap
from prose.syntax import nodes as n


def _finish(ctx: RunContext, event: CallEvent, output: Any, started: float) -> None:
    event.output = output
    event.sha256 = output_sha256(output)
    event.latency_ms = round((time.perf_counter() - started) * 1000, 3)
    ctx.shared.trace.emit(event)
    _progress(ctx, "end", event)


CANCELLED_MESSAGE = ("cancelled before it finished (a sibling branch won or failed, or the run "
                     "stopped)")


def _fail(ctx: RunContext, event: CallEvent, kind: str, message: str, started: float) -> None:
    event.error = {"kind": kind, "message": message}
    event.latency_ms = round((time.perf_counter() - started) * 1000, 3)
    ctx.shared.trace.emit(event)
    _progress(ctx, "end", event)


def _progress(ctx: RunContext, phase: str, event: CallEvent) -> None:
    if ctx.shared.progress is not None:
        ctx.shared.progress(
            phase,
            {
                "id": event.id,
                "slot": event.slot,
                "index": event.index,
                "model": event.model,
                "line": event.line,
                "usage": event.usage.to_dict(),
                "latency_ms": event.latency_ms,
                "error": event.error,
                "cache_hit": event.cache_hit,
                "finish_reason": event.finish_reason,
            },
        )


async def attempt(
    ctx: RunContext,
    site: CallSite,
    target: Service,
    payload: Payload,
    options: CallOptions,
    path: str,
    number: int,
    given: Label,
    label: Label,
) -> Any:
    """Attempt `number` of a call: traced as one `call` event, made by the service's kind."""
    shared = ctx.shared
    node, service = site.node, site.service
    slot = target.slot
    event = CallEvent(
        id=shared.trace.next_id(),
        slot=slot,
        index=target.index,
        service=service.label,
        file=node.span.file,
        line=node.line,
        column=node.column,
        path=path,
        attempt=number,
        provenance=sorted(given.provenance),
        transitive=sorted(given.transitive),
        branch=list(pc.branch()) or None,
        chains=sorted((made, list(branch), index, line)
                      for made, branch, index, line in given.chains
                      if branch or index != flows.NO_INDEX) or None,
        gates=dict(options.gates) if options.gates else None,
        entry=target.entry,
    )
    if isinstance(service, ModelService):
        return await model_attempt(ctx, site, service, payload, options, path, event, label,
                                   given)
    if isinstance(service, PythonService):
        return await python_attempt(ctx, node, service, payload, event, label)
    if isinstance(service, PersonService):
        from prose.runtime.people import person_attempt

        form = site.schema(options)
        return await person_attempt(ctx, node, slot, service, payload, form, path, event)
    return await pattern_attempt(ctx, node, slot, service, payload, event, label)


async def model_attempt(
    ctx: RunContext,
    site: CallSite,
    service: ModelService,
    payload: Payload,
    options: CallOptions,
    path: str,
    event: CallEvent,
    label: Label,
    given: Label | None = None,
) -> Any:
    """One attempt of a call of a model service, through the run's one model exchange (an
    agent's loop of exchanges when the slot declares tools: `agent.run_agent`)."""
    shared = ctx.shared
    node, slot = site.node, site.slot
    model = service.model or shared.default_model
    if options.model and not shared.scripted:
        model = options.model
        check_granted(ctx, node, model, f"the call to `{slot}`")
    elif service.requested and service.model and not shared.scripted:
        check_granted(ctx, node, service.model, f"the call to `{slot}`")
    messages = checked_messages(ctx, node, slot, payload)
    texts = [message.content for message in messages]
    request = Exchange(
        node=node,
        path=path,
        what=site.what,
        model=model,
        messages=messages,
        schema=site.schema(options),
        key_params=site.key_params,
        send_params=site.send_params,
        metadata={"slot": slot, "call": event.id},
    )
    if shared.shown is not None:
        shared.shown.append(
            {
                "slot": event.slot,
                "index": event.index,
                "line": node.line,
                "model": model,
                "messages": messages_to_dicts(messages),
            }
        )
    started = time.perf_counter()
    tools = declared_tools(ctx, slot)
    try:
        if tools:
            event.model = model
            _progress(ctx, "start", event)
            answer = await run_agent(ctx, node, slot, request, event, payload,
                                     given if given is not None else payload.label(), tools)
        else:
            answer = await exchange(ctx, request, event,
                                    on_send=lambda: _progress(ctx, "start", event))
    except (TurnsExceeded, InputsAltered) as error:
        _fail(ctx, event, error.kind, error.message, started)
        error.label = label
        raise
    except InformationHidingViolation as error:  # a tool call or a turn refused mid-loop
        _fail(ctx, event, error.kind, error.message, started)
        raise
    except BudgetExceeded as error:
        if tools:  # an agent stopped mid-loop: its earlier turns were sent and are counted
            _fail(ctx, event, kinds.BUDGET, error.message, started)
        raise
    except asyncio.CancelledError:
        _fail(ctx, event, kinds.CANCELLED, CANCELLED_MESSAGE, started)
        raise
    except ScriptExhaustedError as error:
        from prose.llm.script import exhausted_message

        message = exhausted_message(error, event.slot, event.index)
        _fail(ctx, event, kinds.SCRIPT_EXHAUSTED, message, started)
        raise ScriptExhausted(
            message,
            node.span,
            source=ctx.source,
            slot=slot,
        ) from None
    except LLMError as error:
        event.reply = getattr(error, "reply", None) or None  # a schema failure's reply
        _fail(ctx, event, error.kind, error.message, started)
        raise CallFailed(
            f"the call to `{slot}` failed: {error.message}",
            node.span,
            source=ctx.source,
            slot=slot,
            kind=error.kind,
            value=error,
            label=label,
        ) from None
    _finish(ctx, event, answer.output, started)
    if ctx.content.active:
        if tools:  # an agent was sent its tool results too: text it read is not its own
            texts = [str(message.get("content") or "") for message in event.messages]
        ctx.content.record(slot, node.line, answer.output, texts)
    return answer.output


async def python_attempt(
    ctx: RunContext,
    node: n.Call,
    service: PythonService,
    payload: Payload,
    event: CallEvent,
    label: Label,
) -> Any:
    arguments = {name: plain(value) for name, value in payload.inputs.items()}
    if payload.prompt is not None:
        arguments["prompt"] = to_text(payload.prompt)
    event.messages = [{"role": "arguments", "content": render_value(arguments)}]
    started = time.perf_counter()
    _progress(ctx, "start", event)
    try:
        async with ctx.shared.semaphore:
            result = await call_function(service.function, arguments)
    except asyncio.CancelledError:
        _fail(ctx, event, kinds.CANCELLED, CANCELLED_MESSAGE, started)
        raise
    except Exception as error:  # a user's function may raise anything
        message = f"{type(error).__name__}: {error}"
        _fail(ctx, event, kinds.PYTHON, message, started)
        raise CallFailed(
            f"the call to `{event.slot}` failed: {message}",
            node.span,
            source=ctx.source,
            slot=event.slot,
            kind=kinds.PYTHON,
            label=label,
        ) from None
    output = plain(wrap(result))
    _finish(ctx, event, output, started)
    return output


async def pattern_attempt(
    ctx: RunContext,
    node: n.Call,
    slot: str,
    service: PatternService,
    payload: Payload,
    event: CallEvent,
    label: Label,
) -> Any:
    run_nested = ctx.shared.run_nested
    if run_nested is None:  # a run context built without a runner cannot nest patterns
        raise ProseRuntimeError(f"`{slot}` is a nested pattern, which this run cannot start",
                                node.span, source=ctx.source)
    started = time.perf_counter()
    inputs = payload.inputs
    event.messages = [
        {"role": "inputs", "content": render_value({k: plain(v) for k, v in inputs.items()})}
    ]
    _progress(ctx, "start", event)
    try:
        result = await run_nested(
            ctx, service, slot, {k: plain(v) for k, v in inputs.items()}, node
        )
    except asyncio.CancelledError:
        _fail(ctx, event, kinds.CANCELLED, CANCELLED_MESSAGE, started)
        raise
    except ProseRuntimeError as error:
        if not error.catchable:
            raise
        # The nested pattern's error is this call's error: it carries this call's label
        # (`prose.lang.flows.call_output`), whatever happened inside.
        _fail(ctx, event, error.kind, error.message, started)
        raise CallFailed(
            f"the nested pattern `{slot}` failed: {error.message}",
            node.span,
            source=ctx.source,
            slot=slot,
            kind=error.kind,
            label=label | error.label,
        ) from None
    output = plain(result)
    _finish(ctx, event, output, started)
    return output


def check_granted(ctx: RunContext, node: n.Call, model: str, what: str) -> None:
    """Stop the run before a call to `model`, which the pattern named, unless the person
    running it granted that model (R018, `prose.lang.model_choice`)."""
    from prose.lang.model_choice import granted, how_to_allow
    from prose.runtime.errors import ModelNotGranted

    if granted(model, ctx.shared.granted_models):
        return
    raise ModelNotGranted(
        f"{what} would go to `{model}`, a model the pattern file names and the run was not "
        f"given; nothing was sent. A pattern file does not choose the model: "
        f"{how_to_allow(model)}", node.head, source=ctx.source)
