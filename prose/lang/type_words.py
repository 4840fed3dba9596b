"""The type word of a plain value, for messages and schema checks, written once.

`type_word` names what a value is in the words of the type language
(`prose.lang.types`): `null`, `boolean`, `integer`, `number`, `string`, `list`,
`object`. Each place that says what a value is speaks from it: the JSON schema
check (`array` for `list`, `prose.llm.schema`), the spec's messages
(`prose.spec.values`), the interpreter (`number` for both numbers, a service for
anything else, `prose.runtime.values`) and `prose test` (`prose.testing.runner`).
"""

from __future__ import annotations

from collections.abc import Mapping

VALUE_WORDS = ("null", "boolean", "integer", "number", "string", "list", "object")


def type_word(value: object) -> str:
    """`null`, `boolean`, `integer`, `number`, `string`, `list` (a list or a tuple),
    `object` (a mapping); for anything else, its Python class name."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: a bool is an int to Python
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def program_word(value: object) -> str:
    """`type_word` in the program's words: one `number` for both kinds of number, and
    `service` for anything that is not data (the interpreter's `type_name`, the linter's
    type of a literal)."""
    word = type_word(value)
    if word == "integer":
        return "number"
    return word if word in VALUE_WORDS else "service"


def with_article(word: str) -> str:
    """`a string`, `an object`; `null` stays bare."""
    if word == "null":
        return word
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


__all__ = ["VALUE_WORDS", "program_word", "type_word", "with_article"]
