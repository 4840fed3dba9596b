"""The parser: golden ASTs, positions, and the exact text of syntax errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prose.errors import ProseSyntaxError
from prose.syntax import nodes as n
from prose.syntax import parse, parse_program
from prose.syntax.nesting import MAX_NESTING
from tests.make_golden import golden_path, inputs, render

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("source", inputs(), ids=lambda path: path.name)
def test_golden_ast(source: Path) -> None:
    golden = golden_path(source)
    assert golden.exists(), f"run `python tests/make_golden.py` to create {golden.name}"
    assert render(source) == golden.read_text(encoding="utf-8")


def test_golden_files_cover_every_construct() -> None:
    seen: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            seen.add(str(value.get("type")))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for source in inputs():
        walk(json.loads(golden_path(source).read_text(encoding="utf-8")))
    node_types = {
        name for name, value in vars(n).items()
        if isinstance(value, type) and issubclass(value, n.Node) and value is not n.Node
    }
    assert node_types - seen == set()


def test_the_dump_shows_every_field_the_repr_shows() -> None:
    """The dump reads the field layout of syntax/walk.py: a pipeline's `source` (a field
    named like the program's text, which is left out) was missing from `prose parse`."""
    import dataclasses

    from prose.syntax.dump import dump

    program = parse_program("let ys = xs | map:\n  call w\n    x: item\n")
    pipeline = dump(program, positions=False)["body"][0]["value"]
    assert pipeline["type"] == "Pipeline"
    assert pipeline["source"] == {"type": "Name", "name": "xs"}
    assert "source" not in dump(program)  # the program's whole text is not shown

    def check(node: object, out: object) -> None:
        if isinstance(node, tuple):
            assert isinstance(out, list) and len(out) == len(node)
            for item, dumped in zip(node, out, strict=True):
                check(item, dumped)
        elif isinstance(node, n.Node):
            assert isinstance(out, dict)
            shown = {f.name for f in dataclasses.fields(node) if f.repr}
            assert set(out) - {"type", "span"} == shown, type(node).__name__
            for name in shown:
                check(getattr(node, name), out[name])

    for source in inputs():
        program = parse(source.read_text(encoding="utf-8"), source.name)
        check(program, dump(program))


def test_positions_are_in_the_markdown_file() -> None:
    text = (ROOT / "patterns" / "dialectic.prose.md").read_text(encoding="utf-8")
    program = parse(text, "dialectic.prose.md")
    lines = text.splitlines()
    first = program.body[0]
    assert lines[first.line - 1].startswith("let exchange = []")
    assert (first.line, first.column) == (lines.index("let exchange = []") + 1, 1)
    loop = program.body[3]
    assert isinstance(loop, n.Repeat)
    call = loop.body[0]
    assert isinstance(call, n.Assign) and isinstance(call.value, n.Call)
    assert lines[call.line - 1].strip().startswith("last_thesis = call thesis")
    assert call.value.properties[0].span.column == 5


def test_spans_cover_the_node() -> None:
    program = parse_program('let greeting = "hi {user.name}"\n', "t.prose")
    let = program.body[0]
    assert isinstance(let, n.Let) and isinstance(let.value, n.String)
    assert (let.line, let.column, let.end_line, let.end_column) == (1, 1, 1, 32)
    assert (let.value.column, let.value.end_column) == (16, 32)
    interpolation = let.value.parts[1]
    assert isinstance(interpolation, n.Interpolation)
    assert interpolation.path == ("user", "name")
    assert (interpolation.column, interpolation.end_column) == (20, 31)


def test_condition_kinds() -> None:
    program = parse_program(
        "if round > 1 and verdict is not null:\n  break\n"
        "if ***the draft\n  is done***:\n  break\n"
        "if verdict accepts result:\n  break\n",
        "t.prose",
    )
    deterministic, marked, discretion = (stmt.branches[0].condition for stmt in program.body)  # type: ignore[union-attr]
    assert deterministic.predicate is not None and not deterministic.is_discretion
    assert marked.text == "the draft is done" and marked.marker == "***"
    assert marked.is_discretion
    assert discretion.text == "verdict accepts result"
    assert discretion.mentions == ("verdict", "accepts", "result")


def test_marked_and_unmarked_conditions_have_the_same_text() -> None:
    plain = parse_program("if x > 1:\n  break\n").body[0]
    marked = parse_program("if **x > 1**:\n  break\n").body[0]
    assert plain.branches[0].condition.text == marked.branches[0].condition.text  # type: ignore[union-attr]
    assert marked.branches[0].condition.predicate is not None  # type: ignore[union-attr]


def test_keywords_are_reserved_only_where_expected() -> None:
    program = parse_program("let max = 3\nlet count = max\nlet record = { to: 1, in: 2 }\n")
    assert [stmt.names for stmt in program.body] == [("max",), ("count",), ("record",)]  # type: ignore[union-attr]


def test_hyphenated_identifiers_and_call_of_variable() -> None:
    program = parse_program("for each-delegate in delegates:\n  call each-delegate\n    task-brief: x\n")
    loop = program.body[0]
    assert isinstance(loop, n.For) and loop.var == "each-delegate"
    call = loop.body[0]
    assert isinstance(call, n.ExprStmt) and isinstance(call.expr, n.Call)
    assert call.expr.target == n.Name("each-delegate")
    assert call.expr.properties[0].name == "task-brief"


def test_deep_nesting_does_not_recurse() -> None:
    depth = MAX_NESTING  # one more is refused (test_syntax_nesting.py)
    source = "".join("  " * level + "if x:\n" for level in range(depth)) + "  " * depth + "break\n"
    program = parse_program(source, "deep.prose")
    node = program.body[0]
    for _ in range(depth - 1):
        assert isinstance(node, n.If)
        node = node.branches[0].body[0]
    assert isinstance(node, n.If)


ERRORS = [
    ('let x = "abc\nlet y = 1\n', 1, 9, "string opened at 1:9 is not closed"),
    ('let x = """abc\n\nlet y = 1\n', 1, 9, "string opened at 1:9 is not closed"),
    ("let x = {\n  a: 1,\nlet y = 2\n", 1, 9, "`{` opened at 1:9 is not closed"),
    ("let x = [1, 2\n", 1, 9, "`[` opened at 1:9 is not closed"),
    ("repeat rounds as round:\nlet x = 1\n", 2, 1,
     "expected an indented block after `repeat rounds as round:`"),
    ("if x:\n", 1, 6, "expected an indented block after `if x:`"),
    ("repeat 3\n  let x = 1\n", 1, 9, "expected `:` at the end of this line"),
    ("repeat 3:\n\tlet x = 1\n", 2, 1, "tab in indentation"),
    ("repeat 3:\n    let x = 1\n  let y = 2\n", 3, 3,
     "unindent to column 3 does not match any outer indentation level"),
    ("let x = 1\n  let y = 2\n", 2, 1, "unexpected indentation"),
    ("let x = 1 $ 2\n", 1, 11, "unexpected character `$`"),
    ("let x =\n", 1, 8, "unexpected end of line; expected a value"),
    ("call\n", 1, 5, "unexpected end of line; expected a name"),
]


@pytest.mark.parametrize(("source", "line", "column", "message"), ERRORS)
def test_syntax_error_text_and_position(source: str, line: int, column: int, message: str) -> None:
    with pytest.raises(ProseSyntaxError) as caught:
        parse_program(source, "t.prose")
    error = caught.value
    assert (error.file, error.line, error.column) == ("t.prose", line, column)
    assert error.message == message
    assert "^" in error.frame


def test_several_errors_are_reported_together() -> None:
    with pytest.raises(ProseSyntaxError) as caught:
        parse_program("let = 1\nlet y = 2\nlet z = = 3\n", "t.prose")
    assert [(p.span.line, p.span.column) for p in caught.value.problems] == [(1, 5), (3, 9)]


def test_error_positions_are_in_the_markdown_file() -> None:
    text = "---\nname: x\nkind: pattern\n---\n\n### Delegation\n\n```prose\nlet x = 1\nlet y = \"oops\n```\n"
    with pytest.raises(ProseSyntaxError) as caught:
        parse(text, "x.prose.md")
    assert (caught.value.line, caught.value.column) == (10, 9)
    assert caught.value.frame.splitlines()[-2].startswith("10 | let y")


def test_markdown_without_delegation_block() -> None:
    with pytest.raises(ProseSyntaxError, match="no `### Delegation` section"):
        parse("---\nname: x\n---\n# X\n", "x.prose.md")


def test_unclosed_fence() -> None:
    with pytest.raises(ProseSyntaxError, match="is not closed") as caught:
        parse("# X\n\n### Delegation\n\n```prose\nlet x = 1\n", "x.prose.md")
    assert caught.value.line == 5


def test_comments_survive_a_final_condition() -> None:
    # The condition's nested predicate parse once reset the comment list.
    program = parse_program("x = 1  # c\nif x:\n  break\n")
    assert [comment.text for comment in program.comments] == ["# c"]


def test_loop_condition_may_start_with_a_parenthesis() -> None:
    loop = parse_program("loop until (a or b) and c (max: 3):\n  break\n").body[0]
    assert isinstance(loop, n.Loop) and loop.condition is not None
    assert loop.condition.text == "(a or b) and c" and loop.condition.predicate is not None


def test_strings_in_conditions_keep_their_text() -> None:
    spaced = parse_program('if x == "a  b":\n  break\n').body[0]
    assert isinstance(spaced, n.If)
    predicate = spaced.branches[0].condition.predicate
    assert isinstance(predicate, n.Compare) and predicate.right == n.String(("a  b",))
    colon = parse_program('if x == "a: #b":\n  break\n').body[0]
    assert isinstance(colon, n.If) and colon.branches[0].condition.text == 'x == "a: #b"'


def test_triple_quoted_string_with_escaped_quote() -> None:
    let = parse_program('let s = """say "hi\\""""\n').body[0]
    assert isinstance(let, n.Let) and let.value == n.String(('say "hi"',), triple=True)


def test_orphan_catch_keeps_its_variable() -> None:
    orphan = parse_program("catch as err:\n  break\n").body[0]
    assert isinstance(orphan, n.Orphan) and orphan.var == "err"


def test_grammar_has_no_conflicts() -> None:
    """The LALR table, built in strict mode, has no shift/reduce or reduce/reduce
    conflict (Lark would otherwise resolve a shift/reduce silently).

    The analysis is run directly: `Lark(strict=True)` also checks terminal
    collisions, which needs `interegular`, and merely having that package
    installed costs every `prose lint` about 40 ms of import time.
    """
    from lark.parsers.lalr_analysis import LALR_Analyzer

    from prose.syntax.parser import build_lark

    analysis = LALR_Analyzer(build_lark().parser.parser_conf, strict=True)
    analysis.compute_lalr()
    assert analysis.parse_table.states
