"""The structured answers a judge model gives for discretion conditions and choices.

The interpreter asks the judge with these schemas; a script's `conditions`
and `choices` sections are expanded into replies of the same shape, so a
scripted run exercises the same parsing as a real one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CONDITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["answer", "reason"],
    "additionalProperties": False,
}

SCRIPTED_REASON = "scripted"


def choice_schema(labels: Sequence[str]) -> dict[str, Any]:
    """The judge's answer to a `choice`: one of `labels` and a short reason."""
    return {
        "type": "object",
        "properties": {
            "choice": {"type": "string", "enum": list(labels)},
            "reason": {"type": "string"},
        },
        "required": ["choice", "reason"],
        "additionalProperties": False,
    }


def condition_answer(answer: bool, reason: str = SCRIPTED_REASON) -> dict[str, Any]:
    """A reply matching `CONDITION_SCHEMA`."""
    return {"answer": answer, "reason": reason}


def choice_answer(label: str, reason: str = SCRIPTED_REASON) -> dict[str, Any]:
    """A reply matching `choice_schema(...)`."""
    return {"choice": label, "reason": reason}
