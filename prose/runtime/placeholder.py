"""A client that answers every call with a placeholder, for `prose run --show-prompts`.

Nothing is sent anywhere: a text call gets `<output of SLOT>`, a call with a
schema gets an object of that shape, a condition is false (bounded loops run
to their `max`) and a choice takes the first option. The runtime still
builds every message and enforces the policy, so what is printed is exactly
what each slot would receive given those stand-in answers.
"""

from __future__ import annotations

import json
from typing import Any

from prose.llm.types import ChatRequest, ChatResponse, Usage


def placeholder_for(schema: Any, name: str) -> Any:
    """A value of `schema`'s shape: strings name the field, numbers are 0, booleans false."""
    if not isinstance(schema, dict):
        return f"<{name}>"
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else "string"
    if kind == "object":
        properties = schema.get("properties") or {}
        return {key: placeholder_for(item, key) for key, item in properties.items()}
    if kind == "array":
        return [placeholder_for(schema.get("items"), name)]
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return 0
    if kind == "null":
        return None
    return f"<{name}>"


class PlaceholderClient:
    """An `LLMClient` that never calls a model."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        slot = str(request.metadata.get("slot") or request.metadata.get("judge") or "model")
        if request.schema is not None:
            parsed = placeholder_for(request.schema, slot)
            if "answer" in parsed and "reason" in parsed:
                parsed = {"answer": False, "reason": "placeholder"}
            text = json.dumps(parsed)
        else:
            parsed, text = None, f"<output of {slot}>"
        return ChatResponse(
            text=text,
            parsed=parsed,
            usage=Usage(),
            cost_usd=0.0,
            latency_ms=0.0,
            model=request.model or "placeholder",
            attempts=1,
        )
