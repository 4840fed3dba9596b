"""The type words of an output schema and the JSON Schema type each one means.

An output schema is written with these words wherever a pattern or an instance
declares one: a slot's ``ensures: verdict object with `ok` (boolean)``, an
instance's `schema:` and a call's `schema:` property; `T[]` is an array of T.
The spec loader refuses a word not listed here (PS127, PS174), so the run
never meets one (`prose.llm.schema` builds the JSON schema from the same words).
"""

from __future__ import annotations

JSON_TYPES: dict[str, str] = {
    "string": "string",
    "str": "string",
    "text": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "number": "number",
    "float": "number",
    "integer": "integer",
    "int": "integer",
    "object": "object",
    "dict": "object",
    "array": "array",
    "list": "array",
    "null": "null",
}


def json_type(word: str) -> str | None:
    """The JSON Schema type of a type word (`array` for `T[]` of a known T); None if unknown."""
    text = word.strip().lower()
    if text.endswith("[]"):
        return "array" if json_type(text[:-2]) is not None else None
    return JSON_TYPES.get(text)


def known_words() -> str:
    """The type words, for a message: `array, bool, boolean, ...`."""
    return ", ".join(sorted(JSON_TYPES))
