"""The embedded model's function calling: the tools offered become one JSON grammar.

A small local model has no function-calling format of its own (nor does its chat template
know a `tool` role), so when a request offers `tools=` (an agent's turn,
docs/agents.md) the local provider asks for one JSON object the grammar allows exactly:
`{"tool": NAME, "arguments": {...}}` for one of the tools offered, its arguments as that
tool's parameter schema says, or `{"answer": ...}` (the final answer, of the request's
own schema when it has one). The reply is then turned back into OpenAI's shape: a
`tool_calls` entry, or the answer as the message's content. Earlier turns are written as
text the template can hold: the assistant's calls as that JSON, each tool result as a
user message. This is wiring: whether a 135M model picks the right tool is another matter.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

INSTRUCTIONS = (
    "You can use tools. To use one, reply with only the JSON "
    '{{"tool": NAME, "arguments": {{...}}}}; to answer, reply with only {{"answer": ...}}. '
    "The tools:\n{tools}"
)


@dataclass(frozen=True)
class ParsedReply:
    """A constrained reply read back: a tool call (`tool`, `arguments` as JSON text) or the
    answer's text."""

    answer: str | None
    tool: str | None = None
    arguments: str = "{}"


def _functions(tools: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [tool["function"] for tool in tools
            if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping)
            and tool["function"].get("name")]


def tool_schema(tools: Sequence[Mapping[str, Any]],
                answer_schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The JSON schema of one reply: a call of one offered tool, or the answer."""
    options: list[dict[str, Any]] = []
    for function in _functions(tools):
        parameters = function.get("parameters")
        options.append({
            "type": "object",
            "properties": {"tool": {"enum": [function["name"]]},
                           "arguments": dict(parameters) if isinstance(parameters, Mapping)
                           else {"type": "object"}},
            "required": ["tool", "arguments"]})
    options.append({"type": "object",
                    "properties": {"answer": dict(answer_schema) if answer_schema
                                   else {"type": "string"}},
                    "required": ["answer"]})
    return {"anyOf": options}


def plain_messages(messages: Sequence[Mapping[str, Any]],
                   tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as a chat template without tool support can hold it (see module)."""
    listed = "\n".join(f"- {f['name']}: {f.get('description') or ''}".rstrip()
                       for f in _functions(tools))
    note = INSTRUCTIONS.format(tools=listed)
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "tool":
            out.append({"role": "user", "content": f"Tool result:\n{content or ''}"})
        elif role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = call.get("function") or {}
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except json.JSONDecodeError:
                    arguments = {}
                calls.append(json.dumps({"tool": function.get("name"), "arguments": arguments}))
            out.append({"role": "assistant", "content": "\n".join(calls)})
        else:
            out.append({"role": str(role), "content": content or ""})
    if out and out[0]["role"] == "system":
        out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{note}"}
    else:
        out.insert(0, {"role": "system", "content": note})
    return out


def parse_reply(text: str) -> ParsedReply:
    """The reply the grammar allowed, read back; text that is not that JSON (a reply cut at
    its token cap) is returned as the answer, for the schema check to judge."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return ParsedReply(text)
    if isinstance(data, dict) and isinstance(data.get("tool"), str):
        arguments = data.get("arguments")
        return ParsedReply(None, data["tool"],
                           json.dumps(arguments if isinstance(arguments, dict) else {}))
    if isinstance(data, dict) and "answer" in data:
        answer = data["answer"]
        return ParsedReply(answer if isinstance(answer, str) else json.dumps(answer))
    return ParsedReply(text)
