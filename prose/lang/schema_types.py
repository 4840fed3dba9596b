"""The type words of an output schema and the JSON Schema each one means.

An output schema is written in the type language of `prose.lang.types` wherever
a pattern or an instance declares one: a slot's ``ensures: verdict object with
`ok` (boolean)``, an instance's `schema:` and a call's `schema:` property.
`schema_for` is the one definition: the spec loader refuses a type it cannot
read (PS127, PS174), the linter a call's `schema:` type (PK507), and the run
builds the JSON schema it sends from it (`prose.llm.schema`), so what lint
accepts the run accepts.
"""

from __future__ import annotations

from typing import Any

from prose.lang.types import BASE_WORDS, json_schema, parse_type, try_parse

JSON_TYPES: dict[str, str] = {word: kind for word, kind in BASE_WORDS.items() if word != "any"}
ANY = "any"


def schema_for(word: str) -> dict[str, Any] | None:
    """The JSON Schema a type text means; None if it does not parse.

    `string` -> `{"type": "string"}`, `string[]` -> an array of strings, `any` -> `{}`
    (any value), `string | null` (or `string?`) -> `{"anyOf": [...]}`, `"a" | "b"` -> an
    enum, `{ a: string }` -> an object with exactly that field."""
    found = try_parse(word)
    return None if found is None else json_schema(found)


def json_type(word: str) -> str | None:
    """What a type text means, in a word (`string`, `array`, `any`, `string|null`); None if
    it does not parse."""
    schema = schema_for(word)
    if schema is None:
        return None
    if "anyOf" in schema:
        return "|".join(str(option.get("type", ANY)) for option in schema["anyOf"])
    return str(schema.get("type", ANY))


def known_words() -> str:
    """The type words, for a message: `any, array, bool, ...`."""
    return ", ".join(sorted(BASE_WORDS))


__all__ = ["ANY", "JSON_TYPES", "json_type", "known_words", "parse_type", "schema_for"]
