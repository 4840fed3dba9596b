"""Calls with nothing to route skip the router (`prose/llm/direct.py`), and send what it sends.

The equivalence is checked on the wire: the same request through a client that
takes the direct path and through one that must route (a `router_settings`
entry forces the router) reaches the loopback server as the same HTTP request.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llm_server import FakeLLMServer, Reply

from prose.llm import ChatRequest, LLMConfig, Message, RetryPolicy, RouterClient, schema_from_fields
from prose.llm.direct import direct_params
from prose.llm.loader import load_litellm
from prose.llm.pricing import with_zero_prices

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

KEY = "sk-test-DIRECT-0123456789abcdef"
HELLO = [Message.system("You are terse."), Message.user("Say hello.")]


@pytest.fixture
def server() -> Any:
    with FakeLLMServer() as running:
        yield running


def entry(name: str, model: str, base: str = "http://127.0.0.1:9/v1", **params: Any
          ) -> dict[str, Any]:
    return {"model_name": name,
            "litellm_params": {"model": model, "api_base": base, "api_key": KEY, **params}}


def params_for(config: LLMConfig, model: str) -> dict[str, Any] | None:
    litellm = load_litellm()
    return direct_params(config, model, with_zero_prices(config.deployments(), litellm), litellm)


def test_one_plain_deployment_is_called_directly() -> None:
    params = params_for(LLMConfig(model_list=[entry("fast", "openai/direct-a")]), "fast")
    assert params is not None
    assert params["model"] == "openai/direct-a" and params["api_key"] == KEY
    assert params["max_retries"] == 0  # prose's retry policy owns retries on both paths


@pytest.mark.parametrize("config, model", [
    (LLMConfig(model_list=[entry("fast", "openai/a"), entry("fast", "openai/b")]), "fast"),
    (LLMConfig(model_list=[entry("fast", "openai/a"), entry("slow", "openai/b")],
               fallbacks={"fast": ["slow"]}), "fast"),
    (LLMConfig(model_list=[entry("fast", "openai/a")],
               router_settings={"routing_strategy": "simple-shuffle"}), "fast"),
    (LLMConfig(model_list=[entry("fast", "openai/a", rpm=10)]), "fast"),
    (LLMConfig(model_list=[{**entry("fast", "openai/a"), "model_info": {"id": "x"}}]), "fast"),
    (LLMConfig(model_list=[entry("team/*", "openai/*")]), "team/a"),
    (LLMConfig(model_list=[entry("fast", "openai/a")],
               litellm_settings={"success_callback": ["langfuse"]}), "fast"),
], ids=["two deployments", "falls back", "router settings", "rate limit", "model info",
        "wildcard", "logging callbacks"])
def test_anything_to_route_goes_through_the_router(config: LLMConfig, model: str) -> None:
    assert params_for(config, model) is None


def test_a_fallback_target_is_still_called_directly() -> None:
    config = LLMConfig(model_list=[entry("fast", "openai/a"), entry("slow", "openai/b")],
                       fallbacks={"fast": ["slow"]})
    assert params_for(config, "slow") is not None


def test_secret_references_are_read_as_the_router_reads_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROSE_DIRECT_TEST_KEY", KEY)
    config = LLMConfig(model_list=[{"model_name": "fast", "litellm_params": {
        "model": "openai/a", "api_base": "http://127.0.0.1:9/v1",
        "api_key": "os.environ/PROSE_DIRECT_TEST_KEY"}}])
    params = params_for(config, "fast")
    assert params is not None and params["api_key"] == KEY


def _send(server: FakeLLMServer, routed: bool, request: ChatRequest) -> Any:
    settings = {"router_settings": {"routing_strategy": "simple-shuffle"}} if routed else {}
    config = LLMConfig(model_list=[entry("fast", "openai/direct-wire", server.base_url)],
                       retries=0, **settings)
    client = RouterClient(config, retry_policy=RetryPolicy())
    server.enqueue("direct-wire", Reply('{"accept": true}'))
    response = asyncio.run(client.complete(request))
    [sent] = server.requests
    server.reset()
    return response, sent


@pytest.mark.parametrize("options", [
    {},
    {"temperature": 0.2, "max_tokens": 64},
    {"schema": schema_from_fields({"accept": "boolean"})},
], ids=["plain", "sampling", "schema"])
def test_the_direct_call_sends_what_the_router_sends(server: FakeLLMServer,
                                                     options: dict[str, Any]) -> None:
    request = ChatRequest("fast", HELLO, **options)
    direct, direct_sent = _send(server, routed=False, request=request)
    routed, routed_sent = _send(server, routed=True, request=request)
    assert direct_sent.body == routed_sent.body
    assert direct_sent.headers.get("Authorization") == routed_sent.headers.get("Authorization")
    assert (direct.text, direct.parsed, direct.usage, direct.cost_usd, direct.model,
            direct.requests) == (routed.text, routed.parsed, routed.usage, routed.cost_usd,
                                 routed.model, routed.requests)
    assert direct.model == "fast" and direct.cost_usd == 0.0 and direct.requests == 1


def test_a_free_model_gets_a_zero_price_entry(server: FakeLLMServer) -> None:
    litellm = load_litellm()
    _send(server, routed=False, request=ChatRequest("fast", HELLO))
    price = litellm.model_cost.get("openai/direct-wire") or {}
    assert price.get("input_cost_per_token") == 0.0
    assert price.get("output_cost_per_token") == 0.0


def test_a_known_model_keeps_its_price() -> None:
    litellm = load_litellm()
    before = dict(litellm.model_cost["gpt-4o-mini"])
    params_for(LLMConfig(model_list=[entry("priced", "openai/gpt-4o-mini",
                                           input_cost_per_token=0.0,
                                           output_cost_per_token=0.0)]), "priced")
    assert litellm.model_cost["gpt-4o-mini"] == before
