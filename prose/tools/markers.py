"""The `PIPELINE-FAULT:` marker: a stage that died, recorded instead of judged.

Any text that starts with the marker means "this part of the review did not
happen". It is never a pass: the gate turns a criterion carrying it into
UNMET and the verdict turns any of them into DIVERGES.
"""

from __future__ import annotations

PIPELINE_FAULT = "PIPELINE-FAULT:"


def is_fault(text: object) -> bool:
    """True when `text` is a string starting with the marker (leading spaces ignored)."""
    return isinstance(text, str) and text.lstrip().startswith(PIPELINE_FAULT)


def fault(message: str) -> str:
    """`message` with the marker in front."""
    return f"{PIPELINE_FAULT} {message}"


def kind_of(value: object) -> str:
    """What `value` is, for a message: "null", "a string", "an object", ..."""
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string",
             dict: "an object", list: "a list"}
    return names.get(type(value), type(value).__name__)
