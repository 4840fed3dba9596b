"""Calls with nothing to route go to `litellm.acompletion` directly, not through the router.

`litellm.Router.acompletion` picks a deployment of the model group, then calls
`litellm.acompletion` with its parameters. For a group with one deployment,
no fallbacks, no rate limits and no router settings of the user's, the pick is
always the same and everything around it (the routing state, cooldowns, the
router's answer cache, its bookkeeping) is work with no effect: about a fifth
of the CPU of a call to a loopback server (measured on LiteLLM 1.110,
`bench/head_to_head.py`). prose's own retry policy, budgets, error mapping,
request counting (LiteLLM's input callbacks, which `litellm.acompletion` calls
the same way) and reply reading are the same on both paths; a reply's model group
is the group asked for, as the router reports it for a single deployment.

A free model (`pricing.py`: a deployment on the user's own server with a model
name LiteLLM has no price for) is priced at zero in LiteLLM's price map as well,
once, when its direct call is first made: a call priced at zero by its
parameters alone is diagnosed again on every reply by walking the model's price
entry (about 200 keys), which the router avoids by pricing its deployments.

Everything else still goes through the router: a group with several
deployments or a wildcard name, a group that falls back to another,
a deployment with router-only parameters (`rpm`, `tpm`, `order`, ...), any
run whose config has `router_settings`, whatever they are, and any whose
`litellm_settings` set callbacks (they log the router's metadata: the model group,
the deployment).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from prose.llm.config import LLMConfig
from prose.llm.pricing import has_price

# Deployment parameters only the router reads: a deployment with one is routed.
ROUTER_ONLY_PARAMS = frozenset({
    "rpm", "tpm", "max_parallel_requests", "order", "weight", "tags", "region_name",
    "mock_response", "mock_testing_fallbacks", "budget_duration", "max_budget",
})
_SECRET_PREFIX = "os.environ/"


def direct_params(config: LLMConfig, model: str, deployments: list[dict[str, Any]],
                  litellm: ModuleType) -> dict[str, Any] | None:
    """The `litellm.acompletion` keyword arguments that call `model` as the router would,
    or None when the call needs the router (see the module docstring).

    `deployments` are the router's, zero prices included (`pricing.with_zero_prices`);
    a model the config does not define is the one bare deployment the router got for it.
    """
    if config.router_settings or any(model in item for item in config.router_fallbacks()):
        return None
    if any("callback" in str(key) for key in config.litellm_settings):
        return None  # the user's LiteLLM callbacks get the router's metadata (model group...)
    group = [entry for entry in deployments if entry.get("model_name") == model]
    if len(group) != 1 or "*" in model:
        return None
    [entry] = group
    params = entry.get("litellm_params")
    if set(entry) - {"model_name", "litellm_params"} or not isinstance(params, dict):
        return None
    if ROUTER_ONLY_PARAMS & set(params) or not isinstance(params.get("model"), str):
        return None
    resolved = {key: _resolved(value, litellm) for key, value in params.items()}
    _price_free_model(resolved, litellm)
    return resolved


def _price_free_model(params: dict[str, Any], litellm: ModuleType) -> None:
    """Zero prices in LiteLLM's price map for a model priced at zero that it knows no price
    for (a known model priced at zero by the user keeps its map entry)."""
    model = params["model"]
    if params.get("input_cost_per_token") != 0 or params.get("output_cost_per_token") != 0:
        return
    if has_price(model, litellm):
        return
    try:
        provider = litellm.get_llm_provider(model=model, api_base=params.get("api_base"))[1]
        litellm.register_model({model: {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
                                        "litellm_provider": provider, "mode": "chat"}})
    except Exception:  # a price entry saves work; without one the call still prices at 0
        return


def _resolved(value: Any, litellm: ModuleType) -> Any:
    """A top-level `os.environ/NAME` reference read as the router reads it."""
    if isinstance(value, str) and value.startswith(_SECRET_PREFIX):
        return litellm.get_secret(value)
    return value
