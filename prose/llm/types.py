"""What the interpreter sends to a model and what comes back.

Plain frozen dataclasses: no LiteLLM type appears here, so the runtime can
build requests and read responses without importing LiteLLM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a model asked for: `arguments` is the JSON text it wrote."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message. An assistant's turn may carry `tool_calls`; a `tool` message is the
    result of the call `tool_call_id` (docs/agents.md)."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str) -> Message:
        return cls("assistant", content)


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One model call.

    `schema` is a JSON schema the reply must match (structured output);
    `retries` is the number of extra attempts for retryable errors (rate
    limits, timeouts, 5xx and connection errors); `metadata` (slot, call id)
    is for the caller's own bookkeeping and is never sent to the model.
    `schema_name` and `strict` shape the `response_format` sent with a schema
    (`strict=None` means: strict when the schema allows it).
    """

    model: str
    messages: list[Message]
    schema: dict[str, Any] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None
    retries: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    schema_name: str = "output"
    strict: bool | None = None
    # Function-calling tools offered to the model (OpenAI `tools=` entries); None: none.
    tools: list[dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them (summed over attempts)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
        )


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """The answer to a `ChatRequest`.

    `text` is the answer only (reasoning a provider returns separately is
    dropped). `parsed` is the validated object when the request had a schema,
    or the structured value a scripted response gave; else None. `usage` and
    `cost_usd` add up every attempt made for this call (a failed attempt that
    returned a reply was billed too); `latency_ms` is the wall time of the
    whole call, retries and re-ask included; `attempts` counts the model calls
    made by prose (a schema re-ask included), `requests` the requests
    providers were actually sent (a router fallback is a request within one
    attempt; 0: not counted, as for a client that sends nothing). `model` is
    the model group that answered (a fallback's name when the router fell
    back); `provider_model` is what the provider said it ran.
    """

    text: str
    parsed: Any | None
    usage: Usage
    cost_usd: float
    latency_ms: float
    model: str
    attempts: int
    provider_model: str = ""
    fallbacks_used: int = 0
    requests: int = 0
    # The last reply's finish_reason: "length" means it stopped at the token cap.
    finish_reason: str = ""
    # The tool calls the model asked for instead of answering (an agent's turn).
    tool_calls: tuple[ToolCall, ...] = ()


@runtime_checkable
class LLMClient(Protocol):
    """What the interpreter calls. Raises `prose.llm.errors.LLMError` subclasses."""

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


def message_dict(message: Message) -> dict[str, Any]:
    """A message as OpenAI's chat format writes it (tool calls and tool results included)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": call.arguments}}
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out
