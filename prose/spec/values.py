"""Literal values and value types of config keys and parameters.

Defaults are JSON or Python literals (`none`/`null` mean null); types are
written in the type language of `prose.lang.types` (`string`, `integer[]`,
`"fast" | "slow"`, `{ name: string, weight: number? }[]`, ...).
Also the bracket-aware scanning that config bullets need, because a default
may hold commas, parentheses and quotes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from prose.bounded import BoundExceeded, load_json
from prose.errors import ProseSyntaxError
from prose.lang.type_words import type_word
from prose.lang.types import accepts, show, try_parse

BASE_TYPES = frozenset({"string", "integer", "number", "boolean", "list", "object", "any"})
_NULL_WORDS = frozenset({"none", "null", "~"})
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(_OPEN.values())


@dataclass(frozen=True, slots=True)
class Literal:
    """A parsed default: `ok` False when the text is no literal.

    `bracketless` is set when comma-separated items without `[...]` were read
    as a list (`{'a': 1}, {'b': 2}`).
    """

    ok: bool
    value: Any = None
    bracketless: bool = False


def normalise_type(text: str) -> str | None:
    """The type written back in its canonical words (`int` gives `integer`, `dict[]`
    gives `object[]`), or None if `text` is no type of the type language."""
    found = try_parse(text)
    return None if found is None else show(found)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _json_like(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list | tuple):
        return all(_json_like(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _json_like(item) for key, item in value.items())
    return False


def parse_literal(text: str) -> Literal:
    """Read `text` as JSON, else as a Python literal; `none`/`null` give None."""
    text = text.strip()
    if not text:
        return Literal(False)
    if text.lower() in _NULL_WORDS:
        return Literal(True, None)
    try:
        return Literal(True, load_json(text, ""))
    except BoundExceeded:  # nested deeper than prose.bounded.MAX_DEPTH: no literal we take
        return Literal(False)
    except ProseSyntaxError:
        pass
    if len(text) > 10_000:
        return Literal(False)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return Literal(False)
    if not _json_like(value):
        return Literal(False)
    return Literal(True, _plain(value), bracketless=isinstance(value, tuple))


def matches_type(value: Any, type_name: str) -> bool:
    """Whether `value` (JSON-like) is of `type_name`; null matches every type (a key left
    without a value), and a type that does not parse matches everything (it was reported)."""
    found = try_parse(type_name)
    return found is None or accepts(found, value, null_anywhere=True)


def types_compatible(first: str, second: str) -> bool:
    """Whether two declared types can describe one value (`integer` fits `number`, `list`
    fits `T[]`); a type with literals, fields or options is compared by its base kind."""
    a, b = normalise_type(first), normalise_type(second)
    if a is None or b is None or a == b or "any" in (a, b):
        return True
    numeric = {"integer", "number"}
    if a in numeric and b in numeric:
        return True
    if (a == "list" and b.endswith("[]")) or (b == "list" and a.endswith("[]")):
        return True
    if a.endswith("[]") and b.endswith("[]"):
        return types_compatible(a[:-2], b[:-2])
    simple = BASE_TYPES | {"null"}
    return not (a in simple and b in simple)


def describe(value: Any) -> str:
    """A short type word for messages: `string`, `integer`, `list`..."""
    return type_word(value)


def _unquoted(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """(index, character) of every character of `text` from `start` that stands outside
    quotes (single or double; a backslash escapes the next character inside them). The
    quote characters themselves are not yielded."""
    quote = ""
    index = start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'" and _opens_quote(text, index):
            quote = char
        else:
            yield index, char
        index += 1


def find_close(text: str, start: int) -> int:
    """Index of the bracket closing the one at `text[start]`, or -1.

    Quotes (single or double) are skipped, so `(e.g. "a)")` closes correctly.
    """
    depth = 0
    for index, char in _unquoted(text, start):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0:
                return index
    return -1


def _opens_quote(text: str, index: int) -> bool:
    # An apostrophe inside a word ("other's") is not a quote.
    if text[index] == "'" and 0 < index < len(text) - 1:
        return not (text[index - 1].isalnum() and text[index + 1].isalnum())
    return True


def split_top(text: str, separator: str = ",") -> list[tuple[int, str]]:
    """Split on `separator` outside brackets and quotes: `(offset, part)` pairs, unstripped."""
    parts: list[tuple[int, str]] = []
    depth = 0
    begin = 0
    for index, char in _unquoted(text):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        elif char == separator and depth == 0:
            parts.append((begin, text[begin:index]))
            begin = index + 1
    parts.append((begin, text[begin:]))
    return parts
