"""One type word for a value (issue 36): the schema check, the spec's messages, the
interpreter and `prose test` all say what a value is through `prose.lang.type_words`,
each in its own dialect of the same words."""

from __future__ import annotations

from typing import Any

import pytest

from prose.lang.type_words import VALUE_WORDS, type_word, with_article
from prose.llm.schema import json_type
from prose.runtime.values import type_name
from prose.spec.values import describe
from prose.testing.runner import _kind


@pytest.mark.parametrize(("value", "word", "json", "program", "test"), [
    (None, "null", "null", "null", "null"),
    (True, "boolean", "boolean", "boolean", "a boolean"),
    (3, "integer", "integer", "number", "a number"),
    (2.5, "number", "number", "number", "a number"),
    ("x", "string", "string", "string", "a string"),
    ([1], "list", "array", "list", "a list"),
    ((1,), "list", "array", "list", "a list"),
    ({"a": 1}, "object", "object", "object", "an object"),
])
def test_every_reader_speaks_from_the_one_word(
        value: Any, word: str, json: str, program: str, test: str) -> None:
    assert type_word(value) == describe(value) == word
    assert json_type(value) == json
    assert type_name(value) == program
    assert _kind(value) == test


def test_what_is_not_data() -> None:
    assert "bytes" not in VALUE_WORDS
    assert type_word(b"x") == "bytes"
    assert type_name(b"x") == "service"  # the interpreter's only non-data value
    assert with_article("integer") == "an integer" and with_article("null") == "null"
