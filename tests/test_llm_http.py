"""The real LiteLLM HTTP path, against the loopback server in `llm_server.py`.

Every call goes through `litellm.Router` and the openai SDK to 127.0.0.1;
nothing reaches the internet and no real key is needed.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from llm_server import Delay, FakeLLMServer, Raw, Reply, Status

from prose.llm import (
    AuthError,
    BadRequestError,
    ChatRequest,
    ChatResponse,
    ContextWindowError,
    EmptyReplyError,
    LLMConfig,
    LLMError,
    Message,
    ModelTimeoutError,
    ProviderError,
    RateLimitError,
    RetryPolicy,
    RouterClient,
    SchemaError,
    Script,
    schema_from_fields,
    script_model,
    scripted_client,
    slot_key,
)

# LiteLLM's own types make pydantic warn when LiteLLM first uses them.
pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

KEY = "sk-test-SECRET-0123456789abcdef"
HELLO = [Message.system("You are terse."), Message.user("Say hello.")]
VERDICT = schema_from_fields({"accept": "boolean", "notes": "string"})


class Sleeps:
    """An injected `sleep` that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def deployment(name: str, model: str, server: FakeLLMServer) -> dict[str, Any]:
    return {
        "model_name": name,
        "litellm_params": {"model": model, "api_base": server.base_url, "api_key": KEY},
    }


def client_for(
    server: FakeLLMServer, sleeps: Sleeps | None = None, **settings: Any
) -> RouterClient:
    settings.setdefault("retries", 0)
    config = LLMConfig(
        model_list=[
            deployment("primary", "openai/fake", server),
            deployment("backup", "openai/fake-backup", server),
            deployment("priced", "openai/gpt-4o-mini", server),
        ],
        **settings,
    )
    return RouterClient(config, retry_policy=RetryPolicy(sleep=sleeps or Sleeps()))


def complete(client: RouterClient, request: ChatRequest) -> ChatResponse:
    return asyncio.run(client.complete(request))


def fail(client: RouterClient, request: ChatRequest) -> LLMError:
    with pytest.raises(LLMError) as caught:
        complete(client, request)
    return caught.value


def test_reply_with_usage(server: FakeLLMServer) -> None:
    server.enqueue("fake", Reply("Hello.", prompt_tokens=9, completion_tokens=2))
    request = ChatRequest(
        "primary", HELLO, temperature=0.2, max_tokens=40, metadata={"slot": "greeter"}
    )
    response = complete(client_for(server), request)
    assert response.text == "Hello."
    assert response.parsed is None
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (9, 2)
    assert response.usage.total_tokens == 11
    assert response.model == "primary"
    assert response.provider_model == "fake"
    assert response.attempts == 1
    assert response.cost_usd == 0.0  # a model without a price
    assert response.latency_ms > 0
    [sent] = server.requests
    assert sent.path.endswith("/chat/completions")
    assert sent.body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Say hello."},
    ]
    assert sent.body["temperature"] == 0.2
    assert sent.body["max_tokens"] == 40
    assert "metadata" not in sent.body
    assert "greeter" not in str(sent.body)
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["x-stainless-retry-count"] == "0"


def test_cost_of_a_priced_model(server: FakeLLMServer) -> None:
    server.enqueue("gpt-4o-mini", Reply("Hi", prompt_tokens=1000, completion_tokens=1000))
    response = complete(client_for(server), ChatRequest("priced", HELLO))
    assert response.cost_usd > 0
    assert response.cost_usd < 0.01


def test_rate_limit_then_success_waits_retry_after(server: FakeLLMServer) -> None:
    server.enqueue("fake", Status(429, "slow down", {"Retry-After": "3"}), Reply("done"))
    sleeps = Sleeps()
    response = complete(client_for(server, sleeps, retries=2), ChatRequest("primary", HELLO))
    assert response.text == "done"
    assert response.attempts == 2
    assert sleeps.delays == [3.0]  # Retry-After beats the 1 s backoff
    assert server.models_called() == ["fake", "fake"]  # no hidden SDK retries


def test_rate_limit_without_retries_raises(server: FakeLLMServer) -> None:
    server.enqueue("fake", Status(429, "slow down", {"Retry-After": "7"}))
    error = fail(client_for(server), ChatRequest("primary", HELLO))
    assert isinstance(error, RateLimitError)
    assert error.kind == "rate-limit"
    assert error.retry_after == 7.0
    assert error.retryable
    assert error.message == "slow down"
    assert error.model == "primary"


def test_server_error_then_success(server: FakeLLMServer) -> None:
    server.enqueue("fake", Status(500, "boom"), Reply("recovered"))
    sleeps = Sleeps()
    response = complete(client_for(server, sleeps, retries=1), ChatRequest("primary", HELLO))
    assert response.text == "recovered"
    assert response.attempts == 2
    assert sleeps.delays == [1.0]


def test_server_errors_exhaust_the_retries(server: FakeLLMServer) -> None:
    server.enqueue("fake", *[Status(503, "overloaded")] * 3)
    sleeps = Sleeps()
    error = fail(client_for(server, sleeps, retries=2), ChatRequest("primary", HELLO))
    assert isinstance(error, ProviderError)
    assert error.kind == "provider"
    assert error.attempts == 3
    assert sleeps.delays == [1.0, 2.0]
    assert server.models_called() == ["fake"] * 3


def test_request_retries_count_when_the_config_has_none(server: FakeLLMServer) -> None:
    server.enqueue("fake", Status(502, "bad gateway"), Reply("ok"))
    response = complete(client_for(server), ChatRequest("primary", HELLO, retries=1))
    assert response.attempts == 2


def test_auth_error_fails_fast_and_hides_the_key(server: FakeLLMServer) -> None:
    server.enqueue("fake", Status(401, f"Incorrect API key provided: {KEY}."))
    sleeps = Sleeps()
    error = fail(client_for(server, sleeps, retries=3), ChatRequest("primary", HELLO))
    assert isinstance(error, AuthError)
    assert error.kind == "auth"
    assert not error.retryable
    assert error.attempts == 1
    assert sleeps.delays == []
    assert len(server.requests) == 1
    assert error.message == "Incorrect API key provided: ***."
    for text in (str(error), repr(error), error.message, str(error.args)):
        assert KEY not in text


def test_bad_request_fails_fast(server: FakeLLMServer) -> None:
    server.enqueue("fake", Status(400, "temperature must be at most 2"))
    error = fail(client_for(server, retries=3), ChatRequest("primary", HELLO))
    assert isinstance(error, BadRequestError)
    assert error.kind == "bad-request"
    assert error.message == "temperature must be at most 2"
    assert len(server.requests) == 1


def test_context_window_error(server: FakeLLMServer) -> None:
    message = "This model's maximum context length is 8192 tokens. However, you requested 9000"
    server.enqueue("fake", Status(400, message))
    error = fail(client_for(server, retries=3), ChatRequest("primary", HELLO))
    assert isinstance(error, ContextWindowError)
    assert error.kind == "context-window"
    assert len(server.requests) == 1


def test_timeout(server: FakeLLMServer) -> None:
    # The server would answer after 120 s (cut short when it stops); the client gives up at
    # 0.3 s. The only bound on elapsed time is a hang guard far above any loaded machine.
    server.enqueue("fake", Delay(120.0))
    started = time.monotonic()
    error = fail(client_for(server), ChatRequest("primary", HELLO, timeout_s=0.3))
    assert isinstance(error, ModelTimeoutError)
    assert error.kind == "timeout"
    assert error.retryable
    assert time.monotonic() - started < 60  # a hang guard: it did not wait for the server


def test_timeout_then_success(server: FakeLLMServer) -> None:
    server.enqueue("fake", Delay(5.0), Reply("in time"))
    sleeps = Sleeps()
    response = complete(
        client_for(server, sleeps, timeout_s=0.3, retries=1), ChatRequest("primary", HELLO)
    )
    assert response.text == "in time"
    assert sleeps.delays == [1.0]


def test_malformed_json_body(server: FakeLLMServer) -> None:
    server.enqueue("fake", Raw(b'{"choices": [ not json'))
    error = fail(client_for(server), ChatRequest("primary", HELLO))
    assert isinstance(error, ProviderError)
    assert "Traceback" not in error.message


def test_fallback_model_used_when_primary_keeps_failing(server: FakeLLMServer) -> None:
    server.enqueue("fake", *[Status(500, "primary down")] * 5)
    server.enqueue("fake-backup", Reply("from backup"))
    client = client_for(server, fallbacks={"primary": ["backup"]})
    response = complete(client, ChatRequest("primary", HELLO))
    assert response.text == "from backup"
    assert response.model == "backup"
    assert response.fallbacks_used == 1
    assert response.attempts == 1  # the router's fallback is part of one attempt
    assert server.models_called() == ["fake", "fake-backup"]


def test_fallback_also_failing_raises(server: FakeLLMServer) -> None:
    server.enqueue("fake", Status(500, "primary down"))
    server.enqueue("fake-backup", Status(500, "backup down"))
    client = client_for(server, fallbacks=[{"primary": ["backup"]}])  # LiteLLM's form
    error = fail(client, ChatRequest("primary", HELLO))
    assert isinstance(error, ProviderError)
    assert server.models_called() == ["fake", "fake-backup"]


def test_structured_output(server: FakeLLMServer) -> None:
    server.enqueue("fake", Reply('{"accept": true, "notes": "fine"}'))
    response = complete(client_for(server), ChatRequest("primary", HELLO, schema=VERDICT))
    assert response.parsed == {"accept": True, "notes": "fine"}
    [sent] = server.requests
    assert sent.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": VERDICT, "strict": True},
    }


def test_structured_output_not_strict_when_schema_is_open(server: FakeLLMServer) -> None:
    schema = {"type": "object", "properties": {"score": {"type": "number"}}}
    server.enqueue("fake", Reply('```json\n{"score": 0.5}\n```'))
    request = ChatRequest("primary", HELLO, schema=schema, schema_name="review score")
    response = complete(client_for(server), request)
    assert response.parsed == {"score": 0.5}
    format_sent = server.requests[0].body["response_format"]["json_schema"]
    assert (format_sent["name"], format_sent["strict"]) == ("review_score", False)


def test_invalid_structured_reply_is_fixed_by_the_reask(server: FakeLLMServer) -> None:
    server.enqueue(
        "fake",
        Reply('{"accept": "yes"}', prompt_tokens=10, completion_tokens=4),
        Reply('{"accept": true, "notes": "ok"}', prompt_tokens=30, completion_tokens=6),
    )
    response = complete(client_for(server), ChatRequest("primary", HELLO, schema=VERDICT))
    assert response.parsed == {"accept": True, "notes": "ok"}
    assert response.attempts == 2
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (40, 10)
    reask = server.requests[1].body["messages"]
    assert reask[:2] == server.requests[0].body["messages"]
    assert reask[2] == {"role": "assistant", "content": '{"accept": "yes"}'}
    assert reask[3]["role"] == "user"
    assert "$.accept: expected boolean, got string" in reask[3]["content"]
    assert "$: missing required property `notes`" in reask[3]["content"]


def test_structured_reply_invalid_twice_raises_schema_error(server: FakeLLMServer) -> None:
    server.enqueue("fake", Reply("not json at all"), Reply('{"accept": 1, "notes": "x"}'))
    error = fail(client_for(server, retries=2), ChatRequest("primary", HELLO, schema=VERDICT))
    assert isinstance(error, SchemaError)
    assert error.kind == "schema"
    assert not error.retryable
    assert error.attempts == 2
    assert error.reply == '{"accept": 1, "notes": "x"}'
    assert error.problems == ("$.accept: expected boolean, got integer",)


def test_bare_model_name_gets_a_deployment(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_BASE", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.enqueue("some-new-model", Reply("routed"))
    server.enqueue("some-new-model", Status(401, f"bad key {KEY}"))
    client = client_for(server)
    response = complete(client, ChatRequest("openai/some-new-model", HELLO))
    assert response.text == "routed"
    assert response.model == "openai/some-new-model"
    error = fail(client, ChatRequest("openai/some-new-model", HELLO))
    assert isinstance(error, AuthError)
    assert KEY not in str(error)


def test_default_model_used_for_an_empty_model(server: FakeLLMServer) -> None:
    client = client_for(server, default_model="backup")
    assert complete(client, ChatRequest("", HELLO)).model == "backup"
    with pytest.raises(BadRequestError, match="default_model"):
        complete(client_for(server), ChatRequest("", HELLO))


def test_concurrency_bounds_calls_in_flight(server: FakeLLMServer) -> None:
    server.enqueue("fake", *[Delay(0.2, Reply("slow"))] * 6)
    client = client_for(server, concurrency=2)

    async def many() -> list[ChatResponse]:
        return await asyncio.gather(
            *(client.complete(ChatRequest("primary", HELLO)) for _ in range(6))
        )

    responses = asyncio.run(many())
    assert [r.text for r in responses] == ["slow"] * 6
    assert server.max_in_flight == 2


def test_client_works_across_event_loops(server: FakeLLMServer) -> None:
    client = client_for(server)
    assert complete(client, ChatRequest("primary", HELLO)).text == "ok"
    assert complete(client, ChatRequest("primary", HELLO)).text == "ok"


def test_the_key_never_appears_in_returned_objects(server: FakeLLMServer) -> None:
    client = client_for(server, retries=0)
    server.enqueue("fake", Reply("fine"), Status(403, f"key {KEY} revoked"), Status(500, KEY))
    response = complete(client, ChatRequest("primary", HELLO))
    errors = [fail(client, ChatRequest("primary", HELLO)) for _ in range(2)]
    texts = [repr(response), repr(client), repr(client.config), str(client.config)]
    texts += [repr(e) for e in errors] + [str(e) for e in errors] + [e.message for e in errors]
    for text in texts:
        assert KEY not in text
    assert [type(e) for e in errors] == [AuthError, ProviderError]


def test_a_router_that_ignores_the_timeout_is_cut_off() -> None:
    class HangingRouter:
        async def acompletion(self, **arguments: Any) -> Any:
            await asyncio.sleep(300)

    client = RouterClient(LLMConfig(retries=0))
    client._router = HangingRouter()  # type: ignore[attr-defined]
    client._routed.add("stuck")  # type: ignore[attr-defined]
    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match=r"no reply within 0\.05s"):
        asyncio.run(client.complete(ChatRequest("stuck", HELLO, timeout_s=0.05)))
    # LiteLLM's deadline plus a grace of 1 s; the bound only tells "cut off" from "hung" (300 s)
    assert time.monotonic() - started < 120


# Issue 14: empty replies, the requests a call sends, Retry-After and timeout messages ---


def raw_completion(choices: list[dict[str, Any]]) -> Raw:
    """A 200 chat completion with the given choices, as a provider may send it."""
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1,
        "model": "fake",
        "choices": choices,
        "usage": {"prompt_tokens": 3, "completion_tokens": 0, "total_tokens": 3},
    }
    return Raw(json.dumps(body).encode())


def choice(content: str | None, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "finish_reason": finish_reason,
    }


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (raw_completion([]), "no answer: the reply has no choices"),
        (raw_completion([choice(None)]), "no answer: the reply's content is null (finish_reason: stop)"),
        (
            raw_completion([choice("", "content_filter")]),
            "no answer: the reply's content is empty (finish_reason: content_filter)",
        ),
        (raw_completion([choice(" \n ")]), "no answer: the reply's content is only whitespace"),
    ],
    ids=["no-choices", "null-content", "empty-content", "blank-content"],
)
def test_an_empty_reply_is_an_error_of_its_own_kind(
    server: FakeLLMServer, reply: Raw, why: str
) -> None:
    server.enqueue("fake", reply)
    error = fail(client_for(server), ChatRequest("primary", HELLO))
    assert isinstance(error, EmptyReplyError)
    assert (error.kind, error.retryable, error.attempts) == ("empty-reply", True, 1)
    assert error.message.startswith(why)
    assert error.model == "primary"


def test_an_empty_reply_is_retried_like_a_provider_error(server: FakeLLMServer) -> None:
    server.enqueue("fake", raw_completion([]), raw_completion([choice(None)]), Reply("at last"))
    sleeps = Sleeps()
    response = complete(client_for(server, sleeps, retries=2), ChatRequest("primary", HELLO))
    assert (response.text, response.attempts, response.requests) == ("at last", 3, 3)
    assert sleeps.delays == [1.0, 2.0]


def test_an_empty_reply_to_a_structured_request_is_empty_not_a_schema_error(
    server: FakeLLMServer,
) -> None:
    server.enqueue("fake", raw_completion([choice(None)]))
    error = fail(client_for(server), ChatRequest("primary", HELLO, schema=VERDICT))
    assert isinstance(error, EmptyReplyError)
    assert len(server.requests) == 1  # no re-ask of an empty reply


def test_a_schema_that_accepts_the_empty_string_takes_an_empty_reply(
    server: FakeLLMServer,
) -> None:
    server.enqueue("fake", raw_completion([choice(None)]))
    response = complete(client_for(server), ChatRequest("primary", HELLO, schema={"type": "string"}))
    assert (response.text, response.parsed) == ("", "")
    server.enqueue("fake", raw_completion([choice("")]))
    bounded = {"type": "string", "minLength": 1}
    error = fail(client_for(server), ChatRequest("primary", HELLO, schema=bounded))
    assert isinstance(error, EmptyReplyError)


def test_requests_count_a_router_fallback_within_one_attempt(server: FakeLLMServer) -> None:
    server.enqueue("fake", Status(500, "primary down"))
    server.enqueue("fake-backup", Reply("from backup"))
    client = client_for(server, fallbacks={"primary": ["backup"]})
    response = complete(client, ChatRequest("primary", HELLO))
    assert (response.attempts, response.fallbacks_used, response.requests) == (1, 1, 2)
    assert len(server.requests) == 2


def test_requests_count_a_failed_fallback_and_the_config_retries(server: FakeLLMServer) -> None:
    server.enqueue("fake", *[Status(500, "primary down")] * 2)
    server.enqueue("fake-backup", *[Status(500, "backup down")] * 2)
    client = client_for(server, retries=1, fallbacks={"primary": ["backup"]})
    error = fail(client, ChatRequest("primary", HELLO))
    assert (error.attempts, error.requests) == (2, 4)
    assert len(server.requests) == 4


def test_requests_count_the_schema_reask_and_a_plain_call(server: FakeLLMServer) -> None:
    server.enqueue("fake", Reply("not json"), Reply('{"accept": true, "notes": "ok"}'))
    response = complete(client_for(server), ChatRequest("primary", HELLO, schema=VERDICT))
    assert (response.attempts, response.requests) == (2, 2)
    assert complete(client_for(server), ChatRequest("primary", HELLO)).requests == 1


def test_a_retry_after_above_the_limit_says_why_it_is_not_retried(
    server: FakeLLMServer,
) -> None:
    server.enqueue("fake", Status(429, "slow down", {"Retry-After": "100000"}), Reply("never"))
    sleeps = Sleeps()
    error = fail(client_for(server, sleeps, retries=3), ChatRequest("primary", HELLO))
    assert isinstance(error, RateLimitError)
    assert error.message == (
        "slow down (the provider asked to wait 100000 s before a retry,"
        " more than the limit of 120 s)"
    )
    assert (error.retry_after, error.retryable, error.attempts) == (100000.0, False, 1)
    assert sleeps.delays == [] and len(server.requests) == 1


def test_a_timeout_message_is_one_sentence(server: FakeLLMServer) -> None:
    server.enqueue("fake", Delay(5.0))
    error = fail(client_for(server), ChatRequest("primary", HELLO, timeout_s=0.3))
    assert isinstance(error, ModelTimeoutError)
    assert error.message == "no reply within 0.3s"


def test_a_provider_timeout_keeps_the_providers_words_only(server: FakeLLMServer) -> None:
    server.enqueue("fake", Status(408, "the upstream took too long"))
    error = fail(client_for(server), ChatRequest("primary", HELLO))
    assert isinstance(error, ModelTimeoutError)
    assert error.message == "the upstream took too long"


def test_requests_count_what_a_custom_provider_serves() -> None:
    # LiteLLM runs no input callbacks for a custom provider: the scripted one counts itself.
    client = scripted_client(Script.from_mapping({"slots": {"writer": ["hello"]}}))
    response = complete(client, ChatRequest(script_model(slot_key("writer")), HELLO))
    assert (response.text, response.attempts, response.requests) == ("hello", 1, 1)


def test_a_runs_trace_counts_the_requests_each_call_took(server: FakeLLMServer,
                                                         tmp_path: Path) -> None:
    """Issue 14.13: the LLM layer's own retries are visible in the trace: one call that
    took two requests says so, and the run's totals add them up."""
    from prose.llm.retry import no_sleep
    from prose.runtime import RunOptions, run_pattern
    from prose.runtime.budget import Limits

    root = Path(__file__).resolve().parent.parent
    server.enqueue("fake", Status(500, "try again"), Reply("second time lucky"),
                   Reply("once"))
    pattern = root / "patterns" / "proposer-adversary.prose.md"
    config = LLMConfig(model_list=[deployment("primary", "openai/fake", server)], retries=1,
                       default_model="primary")
    result = asyncio.run(run_pattern(pattern, RunOptions(
        inputs={"task_brief": "x"}, llm_config=config, default_model="primary",
        backoff_base_s=0, trace_path=tmp_path / "t.jsonl", limits=Limits(max_calls=2),
        sleep=no_sleep)))
    calls = [e for e in result.events if e.type == "call"]
    assert [c.requests for c in calls][:2] == [2, 1], result.error and result.error.format()
    assert result.totals["requests"] == sum(c.requests for c in calls)
    recorded = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [e["requests"] for e in recorded if e["type"] == "call"][:2] == [2, 1]


def test_retry_property_does_not_sleep_out_a_retry_after_past_the_limit(
        server: FakeLLMServer, tmp_path: Path) -> None:
    """Issue 14.13: `retry: 1` after a 429 asking for 100000 s fails at once, saying why,
    instead of sleeping it out."""
    from prose.runtime import RunOptions, run_pattern
    from tests.test_runtime import write_pattern

    server.enqueue("fake", Status(429, "slow down", {"Retry-After": "100000"}), Reply("later"))
    path = write_pattern(tmp_path, 'let r = call worker\n  task: "x"\n  retry: 1\n'
                                   "return { result: r }")
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    config = LLMConfig(model_list=[deployment("primary", "openai/fake", server)], retries=0,
                       default_model="primary")
    result = asyncio.run(run_pattern(path, RunOptions(
        llm_config=config, default_model="primary", sleep=sleep, write_trace=False)))
    assert result.exit_code == 4 and result.error is not None
    assert "asked to wait 100000 s" in result.error.message
    assert slept == [] and len(server.requests) == 1
