"""prose's own LiteLLM providers (`prose-script/`, `prose-local/`), registered in one place.

A provider is a `CustomLLM` handler class, made only once LiteLLM is imported; its one
handler object is put in `litellm.custom_provider_map` under the provider's name, once
per process however often the router is built (`prose.llm.loader`).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

# provider name -> its handler, made on first registration
_HANDLERS: dict[str, Any] = {}


def register_custom_provider(litellm: ModuleType, provider: str,
                             handler_class: Callable[[], type]) -> None:
    """Put `provider`'s handler (one per process) in `litellm.custom_provider_map`, once."""
    handler = _HANDLERS.get(provider)
    if handler is None:
        handler = _HANDLERS[provider] = handler_class()()
    providers = litellm.custom_provider_map
    if not any(item.get("provider") == provider for item in providers):
        providers.append({"provider": provider, "custom_handler": handler})


__all__ = ["register_custom_provider"]
