"""The scripted provider: a LiteLLM `CustomLLM` that serves `prose-script/<key>` from a `Script`.

`loader.load_litellm` registers it in `litellm.custom_provider_map`; a
scripted deployment names its script in its `api_base`, so the same
`litellm.Router` routes scripted and real models alike.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from prose.llm.errors import ProviderError
from prose.llm.providers import ProviderReply, register_custom_provider
from prose.llm.reply import STRUCTURED_FINGERPRINT
from prose.llm.script import SCRIPT_PROVIDER, Script, script_model, unreserved
from prose.llm.sent import count_request
from prose.llm.types import ToolCall

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
    register_custom_provider(litellm, SCRIPT_PROVIDER, _answer)


def _answer(call: Mapping[str, Any]) -> ProviderReply:
    """The reply the Script named by the call's deployment gives."""
    count_request()  # LiteLLM runs no input callbacks for a custom provider
    key = str(call["model"])
    api_base = str(call.get("api_base") or "")
    script = _scripts.get(api_base.removeprefix(_API_BASE))
    if script is None:
        raise ProviderError(
            f"no script is registered for `{api_base}` (use scripted_client)", retryable=False
        )
    reply = script.serve(key, call.get("messages") or [])
    return ProviderReply(
        text=None if reply.tool_calls else reply.text,
        model=script_model(unreserved(key)),
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        tool_calls=tuple(ToolCall(f"call_{index}", name, arguments)
                         for index, (name, arguments) in enumerate(reply.tool_calls)),
        fingerprint=STRUCTURED_FINGERPRINT if reply.structured else _TEXT_FINGERPRINT,
    )
