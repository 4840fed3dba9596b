"""prose's own LiteLLM providers (`prose-script/`, `prose-local/`), registered in one place.

A provider is an `answer` function from one LiteLLM call (its keyword arguments:
`model`, `messages`, `optional_params`, `api_base`, ...) to a `ProviderReply`, and
optionally an async one. The `CustomLLM` handler class around them is made here, only
once LiteLLM is imported; its one handler object is put in `litellm.custom_provider_map`
under the provider's name, once per process however often the router is built
(`prose.llm.loader`), and it writes every reply into LiteLLM's response the same way.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from prose.llm.types import ToolCall


@dataclass(frozen=True, slots=True)
class ProviderReply:
    """What a provider answers one call with.

    `finish_reason` None leaves LiteLLM's own; a reply with tool calls finishes with
    "tool_calls". `fingerprint` None leaves the response's `system_fingerprint` unset."""

    text: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    fingerprint: str | None = None


Answer = Callable[[Mapping[str, Any]], ProviderReply]
AsyncAnswer = Callable[[Mapping[str, Any]], Awaitable[ProviderReply]]

# provider name -> its handler, made on first registration
_HANDLERS: dict[str, Any] = {}


def register_custom_provider(litellm: ModuleType, provider: str, answer: Answer,
                             aanswer: AsyncAnswer | None = None) -> None:
    """Put `provider`'s handler (one per process) in `litellm.custom_provider_map`, once.

    The handler answers synchronous calls with `answer` and async ones with `aanswer`
    (`answer` when there is none)."""
    handler = _HANDLERS.get(provider)
    if handler is None:
        handler = _HANDLERS[provider] = _handler_class(provider, answer, aanswer)()
    providers = litellm.custom_provider_map
    if not any(item.get("provider") == provider for item in providers):
        providers.append({"provider": provider, "custom_handler": handler})


def _handler_class(provider: str, answer: Answer, aanswer: AsyncAnswer | None) -> type:
    # CustomLLM exists only once LiteLLM is imported, so the class is made here.
    custom_llm: Any = importlib.import_module("litellm.llms.custom_llm").CustomLLM
    usage_class = importlib.import_module("litellm").Usage
    types = importlib.import_module("litellm.types.utils")

    def respond(call: Mapping[str, Any], reply: ProviderReply) -> Any:
        response = call["model_response"]
        choice = response.choices[0]
        choice.message.content = reply.text
        if reply.finish_reason is not None:
            choice.finish_reason = reply.finish_reason
        if reply.tool_calls:
            choice.message.tool_calls = [
                types.ChatCompletionMessageToolCall(
                    id=tool.id, type="function",
                    function=types.Function(name=tool.name, arguments=tool.arguments))
                for tool in reply.tool_calls
            ]
            choice.finish_reason = "tool_calls"
        response.model = reply.model
        if reply.fingerprint is not None:
            response.system_fingerprint = reply.fingerprint
        response.usage = usage_class(
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            total_tokens=reply.prompt_tokens + reply.completion_tokens,
        )
        return response

    class ProviderHandler(custom_llm):  # type: ignore[misc]
        __doc__ = f"Answers `{provider}/<name>` calls."

        def completion(self, *args: Any, **call: Any) -> Any:
            return respond(call, answer(call))

        async def acompletion(self, *args: Any, **call: Any) -> Any:
            return respond(call, await aanswer(call) if aanswer is not None else answer(call))

    return ProviderHandler


__all__ = ["ProviderReply", "register_custom_provider"]
