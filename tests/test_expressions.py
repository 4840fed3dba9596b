"""Expressions as values and the pure built-ins (docs/language.md 3.4), run through the
real interpreter (`run_pattern` with the scripted model): comparisons, `and`/`or`/`not`,
arithmetic, `+` on strings and lists, `in`, slices, string tests, every built-in, and
type errors as run-time errors at their line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_runtime import ok, run


def value_of(tmp_path: Path, expression: str, prelude: str = "") -> Any:
    program = f"{prelude}\nreturn {{ result: {expression} }}" if prelude else \
        f"return {{ result: {expression} }}"
    return ok(run(tmp_path, program))["result"]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 == 1", True),
        ('"a" != "b"', True),
        ("2 < 3 and 3 <= 3", True),
        ("not 1 > 2", True),
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("7 - 2 - 1", 4),
        ("7 / 2", 3.5),
        ("8 / 2", 4),
        ("7 % 3", 1),
        ("1 - -1", 2),
        ('"ab" + "cd"', "abcd"),
        ("[1, 2] + [3]", [1, 2, 3]),
        ("2 in [1, 2]", True),
        ("3 not in [1, 2]", True),
        ('"b" in "abc"', True),
        ('"k" in { k: 1 }', True),
        ('"abc" contains "bc"', True),
        ("[1, [2]] contains [2]", True),
        ('"abc" starts with "ab"', True),
        ('"abc" matches "^a.c$"', True),
        ('"abc" matches "^b"', False),
        ("[1, 2, 3, 4][1:3]", [2, 3]),
        ("[1, 2, 3, 4][:2]", [1, 2]),
        ("[1, 2, 3, 4][-2:]", [3, 4]),
        ('"hello"[1:4]', "ell"),
        ("[1, 2, 3][1:].length", 2),
        ("1 == 1 or 1 / 0", True),  # `or` stops at the first true operand
        ("null or 3", True),
        ("1 + 2 == 3 and not false", True),
    ],
)
def test_expression_values(tmp_path: Path, expression: str, expected: Any) -> None:
    assert value_of(tmp_path, expression) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("length([1, 2, 3])", 3),
        ('length("abcd")', 4),
        ("length({ a: 1 })", 1),
        ("count([1, 2, 1])", 3),
        ("count([1, 2, 1], 1)", 2),
        ('count("banana", "an")', 2),
        ("sum([1, 2, 3.5])", 6.5),
        ("sum([])", 0),
        ("min([3, 1, 2])", 1),
        ("max(3, 7, 5)", 7),
        ('max([{ n: "a", s: 2 }, { n: "b", s: 9 }, { n: "c", s: 9 }], by: "s").n', "b"),
        ('mode(["x", "y", "y", "x", "z"])', "x"),
        ('mode(["a", "b", "b"])', "b"),
        ("sort([3, 1, 2])", [1, 2, 3]),
        ("sort([3, 1, 2], descending: true)", [3, 2, 1]),
        ('sort([{ s: 2, i: 0 }, { s: 1, i: 1 }, { s: 2, i: 2 }], by: "s")',
         [{"s": 1, "i": 1}, {"s": 2, "i": 0}, {"s": 2, "i": 2}]),
        ('top([{ s: 2, i: 0 }, { s: 5, i: 1 }, { s: 2, i: 2 }], 2, by: "s")',
         [{"s": 5, "i": 1}, {"s": 2, "i": 0}]),
        ("top([4, 9, 1], 5)", [9, 4, 1]),
        ("unique([1, 2, 1, [3], [3]])", [1, 2, [3]]),
        ("flatten([[1, 2], [3], 4])", [1, 2, 3, 4]),
        ("keys({ a: 1, b: 2 })", ["a", "b"]),
        ("values({ a: 1, b: 2 })", [1, 2]),
        ("zip([1, 2, 3], [4, 5])", [[1, 4], [2, 5]]),
        ("range(3)", [0, 1, 2]),
        ("range(2, 8, 3)", [2, 5]),
        ('join(["a", "b", 3], ", ")', "a, b, 3"),
        ('split("a,b,,c", ",")', ["a", "b", "", "c"]),
        ('split("  a  b ")', ["a", "b"]),
        ('lower("AbC")', "abc"),
        ('upper("AbC")', "ABC"),
        ('trim("  x  ")', "x"),
        ("length(sort([2, 1]) + [3])", 3),
    ],
)
def test_builtins(tmp_path: Path, expression: str, expected: Any) -> None:
    assert value_of(tmp_path, expression) == expected


def test_let_of_a_comparison_and_an_if_on_it(tmp_path: Path) -> None:
    value = ok(run(tmp_path, """
        let a = 2
        let b = 1 + 1
        let same = a == b
        if same and a in range(5):
          return { result: "same" }
        return { result: "different" }
        """))
    assert value == {"result": "same"}


@pytest.mark.parametrize(
    ("expression", "code", "words"),
    [
        ('1 + "a"', "R004", "cannot add a number and a string"),
        ('"a" - "b"', "R004", "`-` takes two numbers"),
        ("[1] < [2]", "R004", "cannot compare a list < a list"),
        ("1 in 5", "R004", "`in` looks for an item"),
        ("1 / 0", "R040", "by zero"),
        ('"abc" matches "a(b"', "R042", "cannot use the pattern"),
        ("min([])", "R004", "empty list"),
        ('sort([1, "a"])', "R004", "numbers and strings together"),
        ("range(1000000)", "R041", "past the bound"),
        ("length(3)", "R004", "`length` takes"),
        ('5[1:2]', "R004", "cannot slice"),
    ],
)
def test_type_errors_are_run_time_errors_at_their_line(
    tmp_path: Path, expression: str, code: str, words: str
) -> None:
    result = run(tmp_path, f"let x = 1\nlet y = {expression}\nreturn {{ result: y }}")
    assert result.exit_code == 1
    assert result.error is not None and result.error.code == code, result.error
    assert words in result.error.message
    assert result.error.span is not None and result.error.span.line == 35


def test_a_catastrophic_regex_ends_at_once(tmp_path: Path) -> None:
    """`(a+)+$` on "aaa...b" backtracks exponentially in Python's `re`; RE2 is linear."""
    value = value_of(tmp_path, 'text matches "(a+)+$"', 'let text = "' + "a" * 5000 + 'b"')
    assert value is False


def test_a_type_error_is_catchable(tmp_path: Path) -> None:
    value = ok(run(tmp_path, """
        try:
          let x = 1 + "a"
        catch as err:
          return { result: err.kind }
        """))
    assert value == {"result": "type"}
