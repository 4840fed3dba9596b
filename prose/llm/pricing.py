"""Prices for deployments LiteLLM has none for: an explicit zero, so a call is not priced twice.

A model served by the user's own OpenAI-compatible server (`api_base` set, a
model name LiteLLM's price list has no price for: vLLM, llama.cpp's server, a
loopback stub) or by one of prose's own providers (the scripted and the
local model) costs nothing that LiteLLM can know. Left without a price,
LiteLLM looks for one on every call and, finding the reply priced at zero,
diagnoses why by walking its pricing tables: about a quarter of the CPU of
each call (measured on LiteLLM 1.110, `bench/batch.py`). Declaring the price
as an explicit zero gives the same cost (0, as prose reports for a model
with no known price) without that work.

A deployment with a price of its own (`input_cost_per_token`, ...) or a model
LiteLLM knows is left as it is: its cost stays LiteLLM's to compute.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import Any

# prose's own providers (`script_provider.py`, `local.py`): never billed.
OWN_PROVIDERS = ("prose-script/", "prose-local/")
_PRICE_KEYS = ("input_cost_per_token", "output_cost_per_token", "input_cost_per_second",
               "output_cost_per_second")


def with_zero_prices(deployments: Iterable[dict[str, Any]], litellm: ModuleType
                     ) -> list[dict[str, Any]]:
    """`deployments` with an explicit zero price on each that is free as described above."""
    return [_priced(deployment, litellm) for deployment in deployments]


def _priced(deployment: dict[str, Any], litellm: ModuleType) -> dict[str, Any]:
    params = deployment.get("litellm_params")
    if not isinstance(params, dict) or not _free(params, litellm):
        return deployment
    return {**deployment,
            "litellm_params": {**params, "input_cost_per_token": 0.0,
                               "output_cost_per_token": 0.0}}


def _free(params: dict[str, Any], litellm: ModuleType) -> bool:
    model = params.get("model")
    if not isinstance(model, str) or any(key in params for key in _PRICE_KEYS):
        return False
    if model.startswith(OWN_PROVIDERS):
        return True
    return bool(params.get("api_base")) and not has_price(model, litellm)


def has_price(model: str, litellm: ModuleType) -> bool:
    """Whether LiteLLM knows a price for `model` (a router it built may have registered the
    model with no price: that is not one)."""
    try:
        info = litellm.get_model_info(model=model)
    except Exception:  # LiteLLM raises its own "not mapped" error for an unknown model
        return False
    return any(isinstance(info.get(key), int | float) and info.get(key, 0) > 0
               for key in _PRICE_KEYS)
