"""One model exchange: the single path every model request of a run takes.

A slot's call (`attempts.model_attempt`) and the judge's decisions
(`judge.judge`) both send through `exchange`, so they share, in this order:
the cache lookup (a hit costs nothing) and the budget's admission of a call
(`admit_and_lookup`), the scripted model's reservation in program order, the
run's one cap on calls in flight, the client, the usage and cost meters, a
check of the answer by the caller, and the cache write. What differs is only
what the caller asks (messages, schema) and how it records the outcome
(a `call` or a `judge` trace event).

Failures of the model layer (`prose.llm.errors.LLMError`, with
`ScriptExhaustedError` among them) reach the caller, which names them in its
own terms: a failed call of a slot, or a judge that could not decide.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from prose.llm.errors import LLMError
from prose.llm.types import ChatRequest, Message, ToolCall
from prose.runtime.cache import CachedResponse
from prose.runtime.context import RunContext
from prose.runtime.errors import BudgetExceeded
from prose.runtime.prompts import messages_to_dicts
from prose.runtime.trace import Usage
from prose.syntax import nodes as n


class ExchangeRecord(Protocol):
    """The fields of a trace event (`CallEvent`, `JudgeEvent`) that an exchange fills in."""

    model: str | None
    messages: list[dict[str, Any]]
    usage: Usage
    cost_usd: float
    cache_hit: bool
    key: str | None
    requests: int
    finish_reason: str | None


@dataclass(frozen=True)
class Exchange:
    """What to send: `key_params` are part of the cache key, `send_params` go to the client."""

    node: n.Node
    path: str
    what: str  # how the budget names it: "the call to `critic` at line 12"
    model: str
    messages: list[Message]
    schema: Mapping[str, Any] | None = None
    key_params: Mapping[str, Any] = field(default_factory=dict)
    send_params: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # The function-calling tools offered (an agent's turn; part of the cache key).
    tools: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class Answer:
    """What came back: `parsed` for a structured reply, else `text`; `tool_calls` when the
    model asked for tools instead of answering (never cached)."""

    text: str
    parsed: Any
    model: str
    cached: bool
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def output(self) -> Any:
        return self.parsed if self.parsed is not None else self.text


def admit_and_lookup(
    ctx: RunContext,
    node: n.Node,
    *,
    what: str,
    path: str,
    model: str,
    messages: list[dict[str, Any]],
    schema: Mapping[str, Any] | None,
    params: Mapping[str, Any],
) -> tuple[str, CachedResponse | None]:
    """The cache key of this attempt and its cached answer; a miss reserves one call of the budget."""
    shared = ctx.shared
    site = f"{node.span.file}:{node.line}:{node.column}"
    key = shared.keys.key(
        site=site, path=path, model=model, messages=messages, schema=schema, params=params
    )
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


async def exchange(
    ctx: RunContext,
    request: Exchange,
    record: ExchangeRecord,
    *,
    accept: Callable[[Answer], None] | None = None,
    on_send: Callable[[], None] | None = None,
) -> Answer:
    """Send `request` (or answer it from the cache), filling in `record` as it goes.

    `accept` checks the answer and raises to refuse it: a refused answer is not
    cached. `on_send` runs just before a request goes to the client.
    """
    shared = ctx.shared
    sent = messages_to_dicts(request.messages)
    record.model, record.messages = request.model, sent
    schema = dict(request.schema) if request.schema is not None else None
    key, cached = admit_and_lookup(
        ctx,
        request.node,
        what=request.what,
        path=request.path,
        model=request.model,
        messages=sent,
        schema=schema,
        params={**request.key_params, "tools": request.tools} if request.tools
        else request.key_params,
    )
    record.key = key
    if cached is not None:
        if shared.scripted:
            from prose.llm.script import skip_scripted

            # A resumed scripted run: the replayed call used its response the first time,
            # so the calls after it get the responses after it.
            skip_scripted(shared.client, request.model)
        record.cache_hit = True
        record.usage = Usage(
            prompt_tokens=cached.prompt_tokens,
            completion_tokens=cached.completion_tokens,
            total_tokens=cached.prompt_tokens + cached.completion_tokens,
        )
        answer = Answer(cached.text, cached.parsed, cached.model or request.model, cached=True,
                        tool_calls=cached.tool_calls)
        if accept is not None:
            accept(answer)
        return answer
    chat = ChatRequest(
        model=request.model,
        messages=request.messages,
        schema=schema,
        retries=0,  # a call's retries are its `retry:` property, made by the interpreter
        metadata=dict(request.metadata),
        tools=request.tools,
        **request.send_params,
    )
    if shared.scripted:
        from prose.llm.script import reserve_scripted

        # Take this request's scripted response now, in program order: parallel
        # branches reach the provider in timing order (see Script.reserve).
        chat = dataclasses.replace(chat, model=reserve_scripted(shared.client, chat.model))
    if on_send is not None:
        on_send()
    try:
        async with shared.semaphore:
            response = await shared.client.complete(chat)
    except LLMError as error:
        record.requests = error.requests  # what the providers were sent before it failed
        shared.budget.requests += error.requests
        if error.usage is not None:  # replies that came back and were billed, then refused
            spent = error.usage
            shared.budget.record(spent.prompt_tokens, spent.completion_tokens, error.cost_usd)
            record.usage = Usage(prompt_tokens=spent.prompt_tokens,
                                 completion_tokens=spent.completion_tokens,
                                 total_tokens=spent.total_tokens)
            record.cost_usd = error.cost_usd
        raise
    record.requests = response.requests
    shared.budget.requests += response.requests
    usage = response.usage
    shared.budget.record(usage.prompt_tokens, usage.completion_tokens, response.cost_usd)
    record.model = response.model or request.model
    record.usage = Usage(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
    )
    record.cost_usd = response.cost_usd
    record.finish_reason = (response.finish_reason
                            if response.finish_reason not in ("", "stop") else None)
    answer = Answer(response.text, response.parsed, record.model, cached=False,
                    tool_calls=response.tool_calls)
    if accept is not None:
        accept(answer)
    if shared.cache is not None and not answer.tool_calls:
        shared.cache.put(
            key,
            CachedResponse(
                response.text,
                response.parsed,
                record.model,
                usage.prompt_tokens,
                usage.completion_tokens,
            ),
        )
    return answer
