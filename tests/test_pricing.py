"""Deployments LiteLLM has no price for get an explicit zero (prose.llm.pricing)."""

from __future__ import annotations

from typing import Any

from prose.llm import LLMConfig, RouterClient
from prose.llm.loader import load_litellm
from prose.llm.pricing import with_zero_prices


def params(model: str, **extra: Any) -> dict[str, Any]:
    return {"model_name": "m", "litellm_params": {"model": model, **extra}}


def test_only_free_deployments_get_a_zero_price() -> None:
    litellm = load_litellm()
    own_server = params("openai/my-vllm-model", api_base="http://127.0.0.1:9/v1")
    known = params("openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1")
    hosted = params("openai/my-vllm-model")  # no api_base: a provider's own model
    priced = params("openai/x", api_base="http://127.0.0.1:9/v1", input_cost_per_token=1e-6)
    scripted = params("prose-script/writer")
    out = with_zero_prices([own_server, known, hosted, priced, scripted], litellm)
    assert out[0]["litellm_params"]["input_cost_per_token"] == 0.0
    assert out[0]["litellm_params"]["output_cost_per_token"] == 0.0
    assert out[1] is known and out[2] is hosted and out[3] is priced
    assert out[4]["litellm_params"]["output_cost_per_token"] == 0.0
    assert "input_cost_per_token" not in own_server["litellm_params"]  # not changed in place


def test_the_routers_prose_builds_carry_the_zero_price() -> None:
    config = LLMConfig(model_list=[params("openai/local-model", api_base="http://127.0.0.1:9/v1",
                                          api_key="sk-test-0000")], default_model="m")
    # A router registers its models with LiteLLM: the second one must still see no price.
    for _ in range(2):
        router = RouterClient(config)._router_for("m")
        # LiteLLM 1.110 keeps its deployments in a registry; older releases in `model_list`.
        [deployment] = (router.registry().all() if hasattr(router, "registry")
                        else router.model_list)
        assert deployment["litellm_params"]["input_cost_per_token"] == 0.0
