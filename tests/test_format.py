"""The canonical formatter (prose.syntax.format) and `prose fmt`."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from prose.errors import ProseSyntaxError
from prose.syntax import nodes as n
from prose.syntax import parse, parse_program
from prose.syntax.format import FormatError, format_expr, format_file, format_program
from prose.syntax.nesting import MAX_NESTING

FIXTURES = Path(__file__).parent / "fixtures"


def fmt(source: str) -> str:
    """Format `source`, checking that the result is stable and means the same."""
    program = parse_program(source, "test.prose")
    out = format_program(program)
    again = parse_program(out, "test.prose")
    assert again == program
    assert len(again.comments) == len(program.comments)
    assert format_program(again) == out
    return out


CASES = {
    "bindings": (
        'let  x=1\nconst   y = "a"\nlet {a,b,} = obj\nx.key[0] = y\n',
        'let x = 1\nconst y = "a"\nlet { a, b } = obj\nx.key[0] = y\n',
    ),
    "calls": (
        "call  logger\n    message: \"hi\"\n    retry: 2\nlet r = call critic.fast[0]\n"
        "        draft: r\nreturn call judge\n  a: 1\ncall bare\n",
        'call logger\n  message: "hi"\n  retry: 2\nlet r = call critic.fast[0]\n  draft: r\n'
        "return call judge\n  a: 1\ncall bare\n",
    ),
    "repeat and for": (
        "repeat n as i (\"first\"):\n    break\nparallel repeat 3:\n    continue\n"
        "for x , i in xs:\n  continue\n"
        'parallel for d in ds ( "any" , count : 2 , on-fail : "continue" ):\n  continue\n',
        'repeat n as i ("first"):\n  break\nparallel repeat 3:\n  continue\n'
        "for x, i in xs:\n  continue\n"
        'parallel for d in ds ("any", count: 2, on-fail: "continue"):\n  continue\n',
    ),
    "loop": (
        "loop until  done  (max: 5) as k:\n  break\nloop while ***a\n   b*** (max: m):\n  break\n"
        "loop (max:3):\n  break\nloop:\n  break\nlet ys = repeat 2:\n  call w\n",
        "loop until done (max: 5) as k:\n  break\nloop while ***a b*** (max: m):\n  break\n"
        "loop (max: 3):\n  break\nloop:\n  break\nlet ys = repeat 2:\n  call w\n",
    ),
    "parallel": (
        'parallel ("first") :\n  let a = call x\n  let b = call y\nparallel:\n  call z\n',
        'parallel ("first"):\n  let a = call x\n  let b = call y\nparallel:\n  call z\n',
    ),
    "if with markers": (
        "if a==1:\n  break\nelif  **the draft is good** :\n  continue\n"
        "elif ***multi\n  line*** :\n  continue\nelse :\n  throw\n",
        "if a==1:\n  break\nelif **the draft is good**:\n  continue\n"
        "elif ***multi line***:\n  continue\nelse:\n  throw\n",
    ),
    "try": (
        "try:\n  call f\ncatch as   err:\n  throw err.message\nfinally:\n  record 1 in xs\n"
        "try:\n  call f\ncatch:\n  append 2 to xs\n",
        "try:\n  call f\ncatch as err:\n  throw err.message\nfinally:\n  record 1 in xs\n"
        "try:\n  call f\ncatch:\n  append 2 to xs\n",
    ),
    "blocks and use": (
        'block  summarise( a , b ):\n  return a\nblock none():\n  return\ndo summarise( 1 , "x" )\n'
        'do:\n  let s = 1\nuse  "lib/refine.prose.md"  as  refine\n',
        'block summarise(a, b):\n  return a\nblock none():\n  return\ndo summarise(1, "x")\n'
        'do:\n  let s = 1\nuse "lib/refine.prose.md" as refine\n',
    ),
    "choice": (
        'choice **which fix**:\n    option "code":\n        call coder\n    option "docs {x}":\n'
        "        call writer\n",
        'choice **which fix**:\n  option "code":\n    call coder\n  option "docs {x}":\n'
        "    call writer\n",
    ),
    "orphan clauses": (
        "else:\n  break\ncatch as e:\n  continue\nelif x:\n  break\n",
        "else:\n  break\ncatch as e:\n  continue\nelif x:\n  break\n",
    ),
    "short literals on one line": (
        'let a = [ 1 ,2, ]\nlet o = {a:1, "b c": 2, if: 3, s}\nlet e = [ ]\nlet f = { }\n'
        "let n = {\n  x: {y: [1, {z: 2}]}\n}\n",
        'let a = [1, 2]\nlet o = { a: 1, "b c": 2, if: 3, s }\nlet e = []\nlet f = {}\n'
        "let n = { x: { y: [1, { z: 2 }] } }\n",
    ),
    "long literal one entry per line": (
        'let long = { first_key: "aaaaaaaaaaaaaaaaaaaa", second_key: '
        '["bbbbbbbbbbbbbbbb", "cccccccccccccccc"] }\n',
        'let long = {\n  first_key: "aaaaaaaaaaaaaaaaaaaa",\n'
        '  second_key: ["bbbbbbbbbbbbbbbb", "cccccccccccccccc"],\n}\n',
    ),
    "long literal in a header": (
        'for x in ["aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbb", "ccccccccccccccccccccccccccc"]'
        ' ("first"):\n  break\n',
        'for x in [\n  "aaaaaaaaaaaaaaaaaaaa",\n  "bbbbbbbbbbbbbbbbbbbbbbbbb",\n'
        '  "ccccccccccccccccccccccccccc",\n] ("first"):\n  break\n',
    ),
    "long literal in a property": (
        'call f\n  schema: { accepted: "boolean", notes: "string", severity: "integer", '
        'extras: "string" }\n',
        'call f\n  schema: {\n    accepted: "boolean",\n    notes: "string",\n'
        '    severity: "integer",\n    extras: "string",\n  }\n',
    ),
    "strings": (
        'let s = "q\\"uote \\\\ tab\\t nl\\n {name} \\{literal} { spaced }"\n'
        'let t = """keep\n  "quoted" and \\"\\"\\" three"""\n',
        'let s = "q\\"uote \\\\ tab\\t nl\\n {name} \\{literal} { spaced }"\n'
        'let t = """keep\n  "quoted" and \\"\\"\\" three"""\n',
    ),
    "numbers": (
        "let f = [1.5, -2, 0.0000001, 100000000000000000000000.0, 3.0, 007]\n",
        "let f = [1.5, -2, 0.0000001, 100000000000000000000000.0, 3.0, 7]\n",
    ),
    "indentation": (
        "if x:\n    if y:\n          break\n    else:\n          continue\n",
        "if x:\n  if y:\n    break\n  else:\n    continue\n",
    ),
    "blank lines": (
        "\n\nlet x = 1\n\n\n\nlet y = 2\nif x:\n\n  let z = 3\n\n  let w = 4\n\nelse:\n  break\n\n\n",
        "let x = 1\n\nlet y = 2\nif x:\n  let z = 3\n\n  let w = 4\nelse:\n  break\n",
    ),
}


@pytest.mark.parametrize("source, expected", list(CASES.values()), ids=list(CASES))
def test_canonical_form(source: str, expected: str) -> None:
    assert fmt(source) == expected


COMMENTED = """\
# header comment

# second header
let x = 1   # trailing x
let y = call foo  # prose: ignore[PR101]
  # before a
  a: 1  # after a

  b: [1,   # one
    2]
  # end of props
# before if
if x == 1:  # if header
    # first in block
    z = 2
    # end of if body

# before else (dedented)
else:  # else header
    w = 3
  # odd indent
try:
  t = 1
# before catch
catch as e:   # catch header
  u = 1
let big = {  # opener
  # leading entry
  a: 1,
  b: { c: 2,  # inner
  },
  # end of big
}  # after close
choice **pick**:
  # before first option
  option "a":
    x = 1

  # between options
  option "b":
    x = 2
repeat 3:
  repeat 2:
    x = 1
      # deep end
  # mid end
do f(a,  # first arg
  # own line in args
  b)
# final
"""

COMMENTED_FORMATTED = """\
# header comment

# second header
let x = 1  # trailing x
let y = call foo  # prose: ignore[PR101]
  # before a
  a: 1  # after a

  b: [
    1,  # one
    2,
  ]
  # end of props
# before if
if x == 1:  # if header
  # first in block
  z = 2
  # end of if body
# before else (dedented)
else:  # else header
  w = 3
# odd indent
try:
  t = 1
# before catch
catch as e:  # catch header
  u = 1
let big = {  # opener
  # leading entry
  a: 1,
  b: {
    c: 2,  # inner
  },
  # end of big
}  # after close
choice **pick**:
  # before first option
  option "a":
    x = 1

  # between options
  option "b":
    x = 2
repeat 3:
  repeat 2:
    x = 1
    # deep end
  # mid end
# own line in args
do f(a, b)  # first arg
# final
"""


def test_comments_stay_with_their_statements() -> None:
    assert fmt(COMMENTED) == COMMENTED_FORMATTED


@pytest.mark.parametrize(
    "source, expected",
    [
        ("let x = [  # why\n  1, 2]\n", "let x = [  # why\n  1,\n  2,\n]\n"),
        ("let x = [\n  # only this\n]\n", "let x = [\n  # only this\n]\n"),
        ("let x = [[1, # c\n 2]]\n", "let x = [\n  [\n    1,  # c\n    2,\n  ],\n]\n"),
        ("let x = {\n  a: 1,\n}  # after\n", "let x = { a: 1 }  # after\n"),
        ("let x = [1,  # c\n 2] + ys\n", "let x = [\n  1,  # c\n  2,\n] + ys\n"),
        ("let n = length([1,  # c\n])\n", "let n = length([\n  1,  # c\n])\n"),
    ],
    ids=["opener", "only-comment", "nested", "after-closer", "in-an-operator", "in-a-builtin"],
)
def test_comments_in_literals(source: str, expected: str) -> None:
    assert fmt(source) == expected


def test_suppression_comment_stays_on_its_statement_line() -> None:
    source = (
        "let  brief = {\n  text: task_brief\n}  # prose: ignore[PR101]\n"
        "call   critic  # prose: ignore[PR205]\n  draft: brief\n"
    )
    out = fmt(source)
    assert out.splitlines()[0] == "let brief = { text: task_brief }  # prose: ignore[PR101]"
    assert out.splitlines()[1] == "call critic  # prose: ignore[PR205]"


def test_all_constructs_fixture_is_stable() -> None:
    source = (FIXTURES / "syntax" / "all-constructs.prose").read_text(encoding="utf-8")
    out = fmt(source)
    assert "  first: 1,  # a comment inside an object\n" in out
    assert "loop while ***the draft still has unresolved issues*** (max: limit):\n" in out
    assert fmt(out) == out


@pytest.mark.parametrize("path", sorted((FIXTURES / "seeds").glob("*.prose.md")), ids=lambda p: p.name)
def test_seed_files_format_to_the_same_program(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    out = format_file(text, str(path))
    assert parse(out, str(path)) == parse(text, str(path))
    assert format_file(out, str(path)) == out
    if path.name == "dialectic.prose.md":  # a short multi-line object goes on one line
        assert "\nreturn { result: exchange, exchange: exchange }\n```" in out


def test_format_expr_writes_predicates_with_needed_parentheses() -> None:
    a, b, c = n.Name("a"), n.Name("b"), n.Name("c")
    either = n.BoolOp("or", (a, b))
    assert format_expr(n.BoolOp("and", (either, c))) == "(a or b) and c"
    assert format_expr(n.BoolOp("or", (n.BoolOp("and", (a, b)), c))) == "a and b or c"
    assert format_expr(n.Not(either)) == "not (a or b)"
    assert format_expr(n.Not(n.IsTest(a, "not empty"))) == "not a is not empty"
    assert format_expr(n.Compare("<=", n.Member(a, "length"), n.Literal(2))) == "a.length <= 2"


def test_format_expr_writes_operators_with_needed_parentheses() -> None:
    a, b, c = n.Name("a"), n.Name("b"), n.Name("c")
    assert format_expr(n.BinOp("*", n.BinOp("+", a, b), c)) == "(a + b) * c"
    assert format_expr(n.BinOp("-", a, n.BinOp("-", b, c))) == "a - (b - c)"
    assert format_expr(n.BinOp("-", n.BinOp("-", a, b), c)) == "a - b - c"
    assert format_expr(n.Member(n.BinOp("+", a, b), "length")) == "(a + b).length"
    assert format_expr(n.Compare("in", n.BinOp("+", a, b), c)) == "a + b in c"
    assert format_expr(n.Slice(a, None, n.BinOp("+", b, n.Literal(1)))) == "a[:b + 1]"
    top = n.Builtin("top", (a, n.Literal(2)), (n.Property("by", n.String(("score",))),))
    assert format_expr(top) == 'top(a, 2, by: "score")'


def test_string_escapes_round_trip() -> None:
    text = 'x"""y{a}\\{b}\t\n'
    for triple in (False, True):
        value = n.String((text,), triple)
        source = f"let s = {format_expr(value)}\n"
        parsed = parse_program(source).body[0]
        assert isinstance(parsed, n.Let)
        assert parsed.value == value, source


def test_formatting_does_not_recurse_per_block() -> None:
    # Built by hand: the parser refuses blocks nested past MAX_NESTING (test_syntax_nesting.py).
    depth = 4 * MAX_NESTING
    inner: n.Stmt = n.Assign(n.Name("x"), n.Literal(1))
    for level in reversed(range(depth)):
        if level % 2 == 0:
            condition = n.Condition("x", predicate=n.Name("x"))
            inner = n.If((n.Branch(condition, (inner,)),))
        else:
            inner = n.Repeat(n.Literal(2), None, (inner,))
    lines = ["  " * level + ("if x:" if level % 2 == 0 else "repeat 2:") for level in range(depth)]
    text = "\n".join([*lines, "  " * depth + "x = 1"]) + "\n"
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 100)  # far fewer frames than blocks
    try:
        out = format_program(n.Program((inner,)))
    finally:
        sys.setrecursionlimit(before)
    assert out == text


def test_nothing_to_format() -> None:
    assert format_program(parse_program("# only a comment\n")) == "# only a comment\n"
    assert format_program(n.Program(())) == ""


# --- files ------------------------------------------------------------------------

MARKDOWN = (
    "---\nname: demo\nkind: pattern\n---\n# Demo\nA   summary  kept as is.  \n"
    "### Delegation\n\n```prose\nlet  x = {\n  a: 1\n}\nif x:\n    break   # why\nreturn x\n```\n"
    "### Notes\n```prose\nlet   untouched = 1\n```\ntrailing  text\n"
)


def test_markdown_only_the_delegation_block_changes() -> None:
    out = format_file(MARKDOWN, "demo.prose.md")
    expected_block = "let x = { a: 1 }\nif x:\n  break  # why\nreturn x\n"
    before, block, after = MARKDOWN.partition("let  x = {\n  a: 1\n}\nif x:\n    break   # why\nreturn x\n")
    assert block
    assert out == before + expected_block + after


def test_markdown_crlf_and_indented_fence_kept() -> None:
    text = MARKDOWN.replace("\n", "\r\n")
    out = format_file(text, "demo.prose.md")
    assert out == format_file(MARKDOWN, "demo.prose.md").replace("\n", "\r\n")
    multiline = 'let  s = """a\r\nb"""\r\n'
    assert format_file(multiline, "s.prose") == 'let s = """a\r\nb"""\r\n'
    indented = "### Delegation\n- the program:\n\n  ```prose\n  let  x = 1\n  if x:\n      break\n  ```\n"
    assert format_file(indented, "d.prose.md") == (
        "### Delegation\n- the program:\n\n  ```prose\n  let x = 1\n  if x:\n    break\n  ```\n"
    )


def test_bare_prose_file_is_formatted_whole() -> None:
    assert format_file("let   x = 1", "x.prose") == "let x = 1\n"


@pytest.mark.parametrize(
    "text, filename, message",
    [
        ("", "x.prose", "the file is empty"),
        ("# Title\n### Notes\n", "x.prose.md", "no `### Delegation` section"),
        ("### Delegation\n```prose\nlet x = 1\n", "x.prose.md", "is not closed"),
        ("### Delegation\n```prose\nlet x =\n```\n", "x.prose.md", "unexpected end of line"),
    ],
)
def test_invalid_files_raise_syntax_errors(text: str, filename: str, message: str) -> None:
    with pytest.raises(ProseSyntaxError) as info:
        format_file(text, filename)
    assert message in info.value.message


def test_comments_the_parser_loses_are_never_dropped() -> None:
    """parser-bugs.md #1: until it is fixed, formatting refuses instead of deleting comments."""
    text = "let  x = 1  # keep me\nif x:\n  break\n"
    try:
        out = format_file(text, "x.prose")
    except FormatError:
        return
    assert out == "let x = 1  # keep me\nif x:\n  break\n"


# --- the command ------------------------------------------------------------------


def run_prose(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from prose.cli.main import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "patterns").mkdir()
    (tmp_path / "patterns" / "demo.prose.md").write_text(MARKDOWN, encoding="utf-8")
    (tmp_path / "patterns" / "clean.prose.md").write_text(
        format_file(MARKDOWN, "clean.prose.md"), encoding="utf-8"
    )
    (tmp_path / "bad.prose").write_text("let x =\n", encoding="utf-8")
    return tmp_path


def test_cli_rewrites_in_place(workdir: Path) -> None:
    result = run_prose("fmt", "patterns", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert "reformatted patterns/demo.prose.md" in result.stderr
    assert "1 file reformatted, 1 file left unchanged." in result.stderr
    demo = (workdir / "patterns" / "demo.prose.md").read_text(encoding="utf-8")
    assert demo == format_file(MARKDOWN, "demo.prose.md")
    assert run_prose("fmt", "--check", "patterns", cwd=workdir).returncode == 0


def test_cli_check_names_files_and_writes_nothing(workdir: Path) -> None:
    result = run_prose("fmt", "--check", "patterns", cwd=workdir)
    assert result.returncode == 1
    assert "would reformat patterns/demo.prose.md" in result.stderr
    assert "clean.prose.md" not in result.stderr.replace("left unchanged", "")
    assert (workdir / "patterns" / "demo.prose.md").read_text(encoding="utf-8") == MARKDOWN
    assert "Traceback" not in result.stdout + result.stderr


def test_cli_diff_prints_a_unified_diff(workdir: Path) -> None:
    result = run_prose("fmt", "--diff", "patterns/demo.prose.md", cwd=workdir)
    assert result.returncode == 0
    assert result.stdout.startswith("--- patterns/demo.prose.md (original)\n+++ patterns/demo.prose.md (formatted)\n")
    assert "-let  x = {\n" in result.stdout
    assert "+let x = { a: 1 }\n" in result.stdout
    assert (workdir / "patterns" / "demo.prose.md").read_text(encoding="utf-8") == MARKDOWN
    both = run_prose("fmt", "--check", "--diff", "patterns/demo.prose.md", cwd=workdir)
    assert both.returncode == 1 and both.stdout == result.stdout


def test_cli_syntax_error_exits_1_without_traceback(workdir: Path) -> None:
    result = run_prose("fmt", "bad.prose", cwd=workdir)
    assert result.returncode == 1
    assert result.stderr.startswith("bad.prose:1:8: unexpected end of line")
    assert "1 | let x =" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert (workdir / "bad.prose").read_text(encoding="utf-8") == "let x =\n"


def test_cli_unreadable_path_and_usage_exit_2(workdir: Path) -> None:
    missing = run_prose("fmt", "nope.prose.md", cwd=workdir)
    assert missing.returncode == 2
    assert "error: nope.prose.md: no such file" in missing.stderr
    mixed = run_prose("fmt", "bad.prose", "nope.prose.md", cwd=workdir)
    assert mixed.returncode == 2
    usage = run_prose("fmt", cwd=workdir)
    assert usage.returncode == 2
    assert "Missing argument" in usage.stderr
    for result in (missing, mixed, usage):
        assert "Traceback" not in result.stdout + result.stderr


def test_cli_help_has_examples(workdir: Path) -> None:
    result = run_prose("fmt", "--help", cwd=workdir)
    assert result.returncode == 0
    assert "--check" in result.stdout and "--diff" in result.stdout
    assert "prose fmt --check patterns/" in result.stdout


def test_cli_keeps_bom_and_does_not_import_litellm(workdir: Path) -> None:
    path = workdir / "bom.prose"
    path.write_bytes(b"\xef\xbb\xbflet   x = 1\r\n")
    code = (
        "import sys\nfrom prose.cli.main import main\n"
        "try:\n    main(['fmt', 'bom.prose'])\nexcept SystemExit as exit:\n    code = exit.code\n"
        "print(code, 'litellm' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "0 False", result.stderr
    assert path.read_bytes() == b"\xef\xbb\xbflet x = 1\r\n"
