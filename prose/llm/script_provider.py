"""The scripted provider: a LiteLLM `CustomLLM` that serves `prose-script/<key>` from a `Script`.

`loader.load_litellm` registers it in `litellm.custom_provider_map`; a
scripted deployment names its script in its `api_base`, so the same
`litellm.Router` routes scripted and real models alike.
"""

from __future__ import annotations

import importlib
import weakref
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from prose.llm.errors import ProviderError
from prose.llm.providers import register_custom_provider
from prose.llm.reply import STRUCTURED_FINGERPRINT
from prose.llm.script import SCRIPT_PROVIDER, Script, script_model, unreserved
from prose.llm.sent import count_request

_API_BASE = "prose-script://"
_TEXT_FINGERPRINT = "prose-script/text"

# Scripts by id; a scripted deployment names its script in its api_base.
_scripts: weakref.WeakValueDictionary[str, Script] = weakref.WeakValueDictionary()


def script_api_base(script: Script) -> str:
    """Register `script` and return the api_base that routes calls to it."""
    _scripts[script.id] = script
    return f"{_API_BASE}{script.id}"


def script_deployment(script: Script) -> dict[str, Any]:
    """A wildcard deployment serving every `prose-script/<key>` from `script`."""
    pattern = script_model("*")
    params = {"model": pattern, "api_base": script_api_base(script)}
    return {"model_name": pattern, "litellm_params": params}


def register_scripted_provider(litellm: ModuleType) -> None:
    """Put the scripted provider in `litellm.custom_provider_map` (once)."""
    register_custom_provider(litellm, SCRIPT_PROVIDER, _handler_class)


def _handler_class() -> type:
    # CustomLLM exists only once LiteLLM is imported, so the class is made here.
    custom_llm: Any = importlib.import_module("litellm.llms.custom_llm").CustomLLM
    usage_class = importlib.import_module("litellm").Usage
    types = importlib.import_module("litellm.types.utils")

    class ScriptedLLM(custom_llm):  # type: ignore[misc]
        """Answers `prose-script/<key>` from the Script its deployment names."""

        def completion(self, *args: Any, **call: Any) -> Any:
            return _answer(call, usage_class, types)

        async def acompletion(self, *args: Any, **call: Any) -> Any:
            return _answer(call, usage_class, types)

    return ScriptedLLM


def _answer(call: Mapping[str, Any], usage_class: Any, types: Any) -> Any:
    count_request()  # LiteLLM runs no input callbacks for a custom provider
    key = str(call["model"])
    api_base = str(call.get("api_base") or "")
    script = _scripts.get(api_base.removeprefix(_API_BASE))
    if script is None:
        raise ProviderError(
            f"no script is registered for `{api_base}` (use scripted_client)", retryable=False
        )
    reply = script.serve(key, call.get("messages") or [])
    response = call["model_response"]
    response.choices[0].message.content = reply.text
    if reply.tool_calls:
        response.choices[0].message.content = None
        response.choices[0].message.tool_calls = [
            types.ChatCompletionMessageToolCall(
                id=f"call_{index}", type="function",
                function=types.Function(name=name, arguments=arguments))
            for index, (name, arguments) in enumerate(reply.tool_calls)
        ]
        response.choices[0].finish_reason = "tool_calls"
    response.model = script_model(unreserved(key))
    response.system_fingerprint = STRUCTURED_FINGERPRINT if reply.structured else _TEXT_FINGERPRINT
    response.usage = usage_class(
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        total_tokens=reply.prompt_tokens + reply.completion_tokens,
    )
    return response


