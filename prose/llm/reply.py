"""Reading a LiteLLM response: the answer text, usage, cost and who served it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from prose.llm.types import ToolCall, Usage

# A provider marks a reply whose text is JSON from a structured (mapping or
# list) response by this system_fingerprint; the scripted provider does.
STRUCTURED_FINGERPRINT = "prose-script/structured"


@dataclass(frozen=True, slots=True)
class Reply:
    """One successful attempt.

    `empty` says why a reply carries no text ("" when it has some): a reply
    with no choices, a null content and an empty or blank content are all
    empty (`EmptyReplyError`, unless the request's schema accepts "").
    """

    text: str
    usage: Usage
    cost_usd: float
    provider_model: str
    model_group: str
    fallbacks_used: int
    structured: bool
    empty: str = ""
    # The provider's finish_reason ("length": cut at the token cap; "" when not given).
    finish_reason: str = ""
    # The tool calls the model asked for (an agent's turn; the text may then be empty).
    tool_calls: tuple[ToolCall, ...] = ()


def read_reply(response: Any, litellm: ModuleType, *, requested: str) -> Reply:
    """The parts of a `ModelResponse` prose uses. Reasoning content is dropped."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    hidden = getattr(response, "_hidden_params", None) or {}
    headers = hidden.get("additional_headers") or {}
    group = headers.get("x-litellm-model-group")
    return Reply(
        text=content if isinstance(content, str) else "",
        usage=usage_of(response),
        cost_usd=cost_of(response, litellm),
        provider_model=str(getattr(response, "model", "") or ""),
        model_group=group if isinstance(group, str) and "*" not in group else requested,
        fallbacks_used=_int(headers.get("x-litellm-attempted-fallbacks")),
        structured=getattr(response, "system_fingerprint", None) == STRUCTURED_FINGERPRINT,
        empty=_emptiness(choices, content),
        finish_reason=_finish_reason(choices),
        tool_calls=_tool_calls(message),
    )


def _tool_calls(message: Any) -> tuple[ToolCall, ...]:
    """The reply's `tool_calls` (OpenAI's shape, as LiteLLM returns it for every provider)."""
    calls = getattr(message, "tool_calls", None) or []
    out: list[ToolCall] = []
    for index, call in enumerate(calls):
        function = _field(call, "function")
        name = _field(function, "name") if function is not None else None
        arguments = _field(function, "arguments") if function is not None else None
        if not isinstance(name, str) or not name:
            continue
        ident = _field(call, "id")
        out.append(ToolCall(id=str(ident or f"call_{index}"), name=name,
                            arguments=arguments if isinstance(arguments, str) else "{}"))
    return tuple(out)


def _field(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def _finish_reason(choices: Any) -> str:
    finish = getattr(choices[0], "finish_reason", None) if choices else None
    return finish if isinstance(finish, str) else ""


def _emptiness(choices: Any, content: Any) -> str:
    """Why a reply has no text, in words ("" when it has some)."""
    if not choices:
        return "the reply has no choices"
    finish = getattr(choices[0], "finish_reason", None)
    reason = f" (finish_reason: {finish})" if isinstance(finish, str) and finish else ""
    if not isinstance(content, str):
        return f"the reply's content is null{reason}"
    if not content:
        return f"the reply's content is empty{reason}"
    if not content.strip():
        return f"the reply's content is only whitespace{reason}"
    return ""


def usage_of(response: Any) -> Usage:
    """Token usage as reported; zeros when the provider reported none."""
    usage = getattr(response, "usage", None)
    prompt = _int(getattr(usage, "prompt_tokens", 0))
    completion = _int(getattr(usage, "completion_tokens", 0))
    total = _int(getattr(usage, "total_tokens", 0)) or prompt + completion
    return Usage(prompt, completion, total)


def cost_of(response: Any, litellm: ModuleType) -> float:
    """Cost in USD: the router's own figure when it priced the reply, else
    `litellm.completion_cost`, else 0.0.

    The router has usually priced the reply already; pricing it again costs
    about 0.3 ms of CPU per call (and builds exceptions for unknown models).
    """
    hidden = getattr(response, "_hidden_params", None) or {}
    candidates: list[Any] = [hidden.get("response_cost")]
    if not _valid_cost(candidates[0]):
        try:
            candidates.append(litellm.completion_cost(completion_response=response))
        except Exception:  # unknown model or price: a cost is never worth failing a call
            pass
    for value in candidates:
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
            if math.isfinite(number) and number >= 0:
                return number
    return 0.0


def _valid_cost(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
        and float(value) >= 0
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
