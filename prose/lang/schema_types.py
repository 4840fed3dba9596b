"""The type words of an output schema and the JSON Schema each one means.

An output schema is written with these words wherever a pattern or an instance
declares one: a slot's ``ensures: verdict object with `ok` (boolean)``, an
instance's `schema:` and a call's `schema:` property. Besides the words of
`JSON_TYPES`: `T[]` is an array of T, `any` is any JSON value, and a union is
written `A | B` or `A or B` (`string | null`). `schema_for` is the one
definition: the spec loader refuses a word it does not know (PS127, PS174),
the linter a call's `schema:` word (PK507), and the run builds the JSON schema
it sends from it (`prose.llm.schema`), so what lint accepts the run accepts.
"""

from __future__ import annotations

import re
from typing import Any

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
ANY = "any"
_UNION = re.compile(r"\s*\|\s*|\s+or\s+")


def schema_for(word: str) -> dict[str, Any] | None:
    """The JSON Schema a type word means; None if the word is unknown.

    `string` -> `{"type": "string"}`, `string[]` -> an array of strings, `any` -> `{}`
    (any value), `string | null` (or `string or null`) -> `{"anyOf": [...]}`."""
    text = word.strip().lower()
    parts = [part for part in _UNION.split(text) if part]
    if len(parts) > 1:
        options = [schema_for(part) for part in parts]
        if any(option is None for option in options):
            return None
        return {} if {} in options else {"anyOf": options}
    if text.endswith("[]"):
        items = schema_for(text[:-2])
        return None if items is None else {"type": "array", "items": items}
    if text == ANY:
        return {}
    found = JSON_TYPES.get(text)
    return None if found is None else {"type": found}


def json_type(word: str) -> str | None:
    """What a type word means, in a word (`string`, `array`, `any`, `string|null`); None if
    unknown."""
    schema = schema_for(word)
    if schema is None:
        return None
    if "anyOf" in schema:
        return "|".join(str(option.get("type", ANY)) for option in schema["anyOf"])
    return str(schema.get("type", ANY))


def known_words() -> str:
    """The type words, for a message: `any, array, bool, ...`."""
    return ", ".join(sorted([*JSON_TYPES, ANY]))
