"""One description of a loop (issue 36): `prose.lang.loops.loop_shape` for every loop
kind, `max:` on `for` and `parallel for` (parse, format, lint, run), and
`every loop is bounded by` (PT304) over every loop kind. The lint cases proper are
data in tests/fixtures/rules/PT303.yaml and PT304.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from prose.check.lint import lint_text
from prose.lang.loops import loop_shape
from prose.syntax import nodes as n
from prose.syntax.format import format_program
from prose.syntax.parser import parse_program
from prose.syntax.walk import loops
from tests.test_runtime import HEADER, calls, ok, run


def parse(source: str) -> n.Program:
    return parse_program(source, "t.prose")


# --- the shape ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "keyword", "variables", "bound", "items", "parallel"),
    [
        ("repeat 3 as r:\n  break\n", "repeat", ("r",), "3", None, False),
        ("parallel repeat k:\n  break\n", "repeat", (), "k", None, True),
        ("loop until done (max: 4) as r:\n  break\n", "loop", ("r",), "4", None, False),
        ("loop:\n  break\n", "loop", (), None, None, False),
        ("for x, i in xs:\n  break\n", "for", ("x", "i"), None, "xs", False),
        ("for x in xs (max: 2):\n  break\n", "for", ("x",), "2", "xs", False),
        ('parallel for x in xs ("first", max: k):\n  break\n', "for", ("x",), "k", "xs", True),
        ("loop for each x in xs (max: 5):\n  break\n", "loop for each", ("x",), "5", "xs", False),
        ("let ys = xs | pmap:\n  return item\n", "pipeline", ("item",), None, "xs", True),
    ],
)
def test_every_loop_kind_has_one_shape(
    source: str, keyword: str, variables: tuple[str, ...], bound: str | None, items: str | None,
    parallel: bool,
) -> None:
    program = parse(source)
    [node] = list(loops(program.body))
    shape = loop_shape(node)
    assert (shape.keyword, shape.variables, shape.parallel) == (keyword, variables, parallel)
    assert _text(shape.bound) == bound
    assert _text(shape.items) == items
    assert shape.bounded_by_items == (bound is None and items is not None)


def _text(expr: n.Expr | None) -> str | None:
    if expr is None:
        return None
    if isinstance(expr, n.Name):
        return expr.name
    assert isinstance(expr, n.Literal)
    return str(expr.value)


# --- `max:` on `for` and `parallel for` -----------------------------------------------


def test_max_on_for_is_the_loop_s_bound_not_a_modifier() -> None:
    plain = parse("for x in xs (max: 3):\n  break\n").body[0]
    assert isinstance(plain, n.For) and plain.modifiers == () and plain.max == n.Literal(3)
    assert not plain.each
    racing = parse('parallel for x in xs ("first", max: rounds):\n  break\n').body[0]
    assert isinstance(racing, n.For) and racing.parallel and racing.max == n.Name("rounds")
    assert [m.key for m in racing.modifiers] == [None]


@pytest.mark.parametrize(
    "source",
    [
        "for x in xs (max: 3):\n  break\n",
        'parallel for x, i in xs ("first", max: rounds):\n  break\n',
        "parallel for x in xs (max: 2):\n  break\n",
        "loop for each x in xs (max: 2):\n  break\n",
    ],
)
def test_max_on_for_formats_to_itself(source: str) -> None:
    program = parse(source)
    out = format_program(program)
    assert out == source
    assert parse(out).body == program.body


def test_max_on_a_plain_for_is_no_modifier_finding() -> None:
    program = (
        "let xs = [1, 2, 3]\n"
        "for x in xs (max: 2):\n"
        "  call worker\n"
        "    text: x\n"
        "return { result: xs }\n"
    )
    result = lint_text(_pattern(program), "p.prose.md")
    assert not [d for d in result.diagnostics if d.code == "PC403"]
    on_repeat = lint_text(_pattern(program.replace("for x in xs", "repeat 3")), "p.prose.md")
    assert [d.message for d in on_repeat.diagnostics if d.code == "PC403"] == [
        "modifiers are only allowed on parallel loops and blocks"
    ]


def _pattern(program: str) -> str:
    return HEADER.format(
        name="p", slots="- `worker`\n  - requires: text\n  - ensures: a short text",
        config="- None.", invariants="- none", params="- None.", program=program.strip(),
    )


@pytest.mark.parametrize("parallel", ["", "parallel "])
def test_max_on_for_runs_at_most_max_items(tmp_path: Path, parallel: str) -> None:
    result = run(
        tmp_path,
        f"""
        let seen = {parallel}for x, i in ["a", "b", "c", "d"] (max: 2):
          call worker
            text: x
        return {{ result: seen }}
        """,
        {"slots": {"worker": ["one", "two", "three", "four"]}},
        slots="- `worker`\n  - requires: text\n  - ensures: a short text",
    )
    value = ok(result)
    assert len(value["result"]) == 2
    assert len(calls(result)) == 2
    notes = [e for e in result.events if e.type == "note" and e.what == "loop_max"]
    assert [note.detail["max"] for note in notes] == [2]


def test_a_computed_max_on_for_is_refused_at_run_time(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let n = "two"
        for x in [1, 2, 3] (max: n):
          break
        return { result: n }
        """,
    )
    assert result.error is not None and "`max` needs an integer >= 0" in result.error.message
