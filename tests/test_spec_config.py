"""Config keys, parameters, literal defaults, types, and the code table."""

from __future__ import annotations

import re
from typing import Any

import pytest

from prose.diagnostics.model import Severity
from prose.spec import SPEC_CODES, load_spec
from prose.spec.codes import BY_CODE, make
from prose.spec.values import matches_type, normalise_type, parse_literal, types_compatible

HEAD = "---\nname: c\nkind: pattern\nversion: 1.0.0\n---\n# C\n\n### Slots\n\n- `s`\n  - ensures: thing\n"
TAIL = "\n### Delegation\n\n```prose\nreturn {}\n```\n"


def _load(body: str) -> tuple[Any, list[str]]:
    result = load_spec(HEAD + body + TAIL, "c.prose.md")
    assert result.spec is not None
    return result.spec, [f"{d.code}@{d.span.line}:{d.span.column}" for d in result.diagnostics]


@pytest.mark.parametrize(
    ("text", "value", "bracketless"),
    [
        ("3", 3, False),
        ("0.8", 0.8, False),
        ('"Corpus A"', "Corpus A", False),
        ("'x'", "x", False),
        ("true", True, False),
        ("False", False, False),
        ("none", None, False),
        ("null", None, False),
        ("None", None, False),
        ("[]", [], False),
        ('{"a": [1, 2]}', {"a": [1, 2]}, False),
        ("{'model': 'opus', 'count': 3}", {"model": "opus", "count": 3}, False),
        ("{'a': 1}, {'b': 2}", [{"a": 1}, {"b": 2}], True),
    ],
)
def test_defaults_are_json_or_python_literals(text: str, value: Any, bracketless: bool) -> None:
    literal = parse_literal(text)
    assert literal.ok and literal.value == value and literal.bracketless == bracketless


@pytest.mark.parametrize(
    "text", ["Corpus A", "{tone: plain}", "{1, 2}", "b'x'", "", "__import__('os')"]
)
def test_other_text_is_no_literal(text: str) -> None:
    assert not parse_literal(text).ok


@pytest.mark.parametrize(
    ("value", "type_name", "ok"),
    [
        (3, "integer", True),
        (True, "integer", False),
        (3, "number", True),
        (2.5, "integer", False),
        ("x", "string", True),
        (None, "string", True),
        ([{"a": 1}], "object[]", True),
        ([1, "a"], "integer[]", False),
        ([1, "a"], "list", True),
        ({"a": 1}, "object", True),
        ("x", "any", True),
        (False, "boolean", True),
    ],
)
def test_values_match_types(value: Any, type_name: str, ok: bool) -> None:
    assert matches_type(value, type_name) is ok


def test_types_are_normalised_and_compared() -> None:
    assert normalise_type(" Object[] ") == "object[]"
    # one type language with output schemas: `int` is `integer`, enums and objects are types
    assert normalise_type("int") == "integer" and normalise_type("foo[]") is None
    assert normalise_type('"fast" | "slow"') == '"fast" | "slow"'
    assert normalise_type("{ name: string, weight: number? }[]") == (
        "{ name: string, weight: number | null }[]")
    assert types_compatible("integer", "number") and types_compatible("list", "string[]")
    assert not types_compatible("string", "object")


@pytest.mark.parametrize(
    ("value", "type_name", "ok"),
    [
        ("fast", '"fast" | "slow"', True),
        ("medium", '"fast" | "slow"', False),
        ([{"name": "a", "weight": 1}], "{ name: string, weight: number? }[]", True),
        ([{"name": "a", "weight": None}], "{ name: string, weight: number? }[]", True),
        ([{"name": "a", "extra": 1}], "{ name: string, weight: number? }[]", False),
        ([{"name": 3}], "{ name: string }[]", False),
    ],
)
def test_config_values_match_enum_and_object_types(value: Any, type_name: str, ok: bool) -> None:
    assert matches_type(value, type_name) is ok


def test_an_enum_config_key_with_a_default_outside_it_is_refused() -> None:
    spec, found = _load(
        "\n### Config\n\n"
        '- `mode` ("fast" | "careful", default: "fast"): How hard to look\n'
        '- `style` ("terse" | "plain", default: "florid"): How to write\n'
        '- `level`: "low"\n'
    )
    assert [item.split("@")[0] for item in found] == ["PS133"]
    mode = next(c for c in spec.config if c.name == "mode")
    assert mode.type == '"fast" | "careful"' and mode.default == "fast"
    level = next(c for c in spec.config if c.name == "level")
    assert level.type == "string" and level.default == "low"  # a literal is a value, not a type


def test_config_bullets_with_odd_descriptions_and_defaults() -> None:
    spec, found = _load(
        "\n### Config\n\n"
        '- `dimension` (string, default: none): The quality compared (e.g. "clarity", "depth")\n'
        "- `limit` (integer, optional, default: 5) -- Upper limit\n"
        "- `free` (string): No default at all\n"
        '- `pair` (list, default: [1, "a, b"]): A pair\n'
    )
    assert found == []
    dimension, limit, free, pair = spec.config
    assert dimension.default is None and dimension.has_default
    assert dimension.description == 'The quality compared (e.g. "clarity", "depth")'
    assert (limit.default, limit.description) == (5, "Upper limit")
    assert (free.default, free.has_default) == (None, False)
    assert pair.default == [1, "a, b"]


def test_config_none_with_trailing_text_means_no_config() -> None:
    spec, found = _load("\n### Config\n\n- None. The brief is an input of the instance.\n")
    assert spec.config == [] and found == []


def test_a_bracketless_default_for_a_scalar_type_is_a_mismatch() -> None:
    _, found = _load("\n### Config\n\n- `n` (integer, default: 1, 2): N\n")
    assert found == ["PS133@15:26"]


def test_parameters_as_plain_bullets() -> None:
    spec, found = _load(
        "\n### Parameters\n\n"
        "- task_brief: string -- what to do\n"
        "- `notes`: string[] -- (optional) extra notes\n"
        "- depth: integer\n"
        "- None of the others.\n"
    )
    assert found == []
    assert [(p.name, p.type, p.optional, p.description) for p in spec.parameters] == [
        ("task_brief", "string", False, "what to do"),
        ("notes", "string[]", True, "extra notes"),
        ("depth", "integer", False, ""),
    ]


def test_a_parameter_named_like_a_slot_or_config_key_unifies_with_it() -> None:
    spec, found = _load(
        "\n### Config\n\n- `rounds` (integer, default: 2): Rounds\n"
        "\n### Parameters\n\n- Pattern instance receives:\n"
        "    s: string -- the service for the slot\n"
        "    rounds: number -- (optional, default 2)\n"
        "    task_brief: string -- the task\n"
    )
    assert found == []
    assert [p.name for p in spec.required_inputs()] == ["task_brief"]


def test_a_parameter_default_differing_from_the_config_default_is_reported() -> None:
    _, found = _load(
        "\n### Config\n\n- `rounds` (integer, default: 2): Rounds\n"
        "\n### Parameters\n\n- rounds: integer -- (optional, default 3)\n"
    )
    assert found == ["PS142@19:3"]


def test_code_table_rows_are_complete_and_unique() -> None:
    codes = [row.code for row in SPEC_CODES]
    assert len(codes) == len(set(codes)) and codes == sorted(codes)
    names = [row.name for row in SPEC_CODES]
    assert len(names) == len(set(names))
    for row in SPEC_CODES:
        assert re.fullmatch(r"PS(1\d\d|2[0-3]\d)", row.code)  # PS100-PS239
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", row.name)
        assert isinstance(row.severity, Severity)
        assert row.summary and "\n" not in row.summary
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
            assert heading in row.doc
        assert BY_CODE[row.code] is row


def test_make_uses_the_table_severity_and_the_spec_category() -> None:
    from prose.source import Span

    diagnostic = make("PS123", "slot `x` ...", Span.point("f.prose.md", 3, 4), help="do y")
    assert diagnostic.severity is Severity.INFO and diagnostic.category == "spec"
    assert (diagnostic.code, diagnostic.help, str(diagnostic.span)) == (
        "PS123",
        "do y",
        "f.prose.md:3:4",
    )


def test_brackets_and_separators_are_found_outside_quotes_alike() -> None:
    """`find_close` and `split_top` read quotes with one scanner: a backslash escapes a
    quote inside quotes for both (split_top used to end the quote there and split)."""
    from prose.spec.values import find_close, split_top

    text = '"a\\", b", (c, d), e'
    assert split_top(text) == [(0, '"a\\", b"'), (9, " (c, d)"), (17, " e")]
    assert find_close('("a\\")", x)', 0) == 10
    assert find_close('(e.g. "a)")', 0) == 10
    assert split_top("reviewer's notes, x") == [(0, "reviewer's notes"), (17, " x")]
