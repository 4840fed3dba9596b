"""Property tests of the parser and the formatter (hypothesis).

1. Random ASTs: formatting then parsing gives the same AST, and formatting is
   idempotent.
2. Arbitrary text and mutated programs: the parser raises only
   ProseSyntaxError, and whatever parses formats back to an equal program.
3. 400 nested blocks parse and format.

PROSE_THOROUGH=1 draws 13 to 40 times more examples (docs/testing.md).

Generators avoid what /work/ref/parser-bugs.md records as known parser bugs:
predicates in loop conditions never start with `(`, strings inside conditions
hold no spaces, `:` or `#`, and a triple-quoted string never ends with `"`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from functools import cache

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from prose.errors import ProseSyntaxError
from prose.lang.builtins import BUILTINS
from prose.syntax import nodes as n
from prose.syntax import parse_program
from prose.syntax.build import mentioned_names
from prose.syntax.code_conditions import code_problem
from prose.syntax.format import format_expr, format_program
from prose.syntax.nesting import MAX_NESTING
from tests.conftest import examples

KEYWORDS = frozenset(
    "let const call return repeat parallel for in as loop until while max if elif else choice "
    "option try catch finally throw continue break record append to block do use true false "
    "null and or not is absent present empty contains starts with matches".split()
)
BUILTIN_NAMES = sorted(BUILTINS)
PROPERTY_SETTINGS = settings(
    max_examples=examples(50, 2000), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

Draw = Callable[..., object]


@pytest.fixture(autouse=True)
def deep_recursion() -> Iterator[None]:
    """As the CLI does: deep (but legal) nesting must not hit Python's default limit."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, 20000))
    yield
    sys.setrecursionlimit(before)


# --- expressions ------------------------------------------------------------------

names = st.from_regex(r"[a-z_][a-z0-9_]{0,5}(-[a-z0-9]{1,3})?", fullmatch=True).filter(
    lambda name: name not in KEYWORDS
)
keys = st.one_of(names, st.sampled_from(sorted(KEYWORDS)), st.text("ab {}:\"'", max_size=5))
TEXT_CHARS = 'ab {}."\\\n\t#:é*'
numbers = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([True, False, None]),
).map(n.Literal)


@st.composite
def strings(draw: Draw, alphabet: str = TEXT_CHARS, triple: bool | None = None) -> n.String:
    raw = draw(
        st.lists(
            st.one_of(
                st.text(alphabet, max_size=6),
                st.lists(names, min_size=1, max_size=3).map(lambda p: n.Interpolation(tuple(p))),
            ),
            max_size=4,
        )
    )
    parts: list[str | n.Interpolation] = []
    for part in raw:  # normalise as the parser does: no empty or adjacent text parts
        if isinstance(part, str) and parts and isinstance(parts[-1], str):
            parts[-1] += part
        elif part != "":
            parts.append(part)
    is_triple = draw(st.booleans()) if triple is None else triple
    if is_triple:  # a triple-quoted string cannot end with `"` (parser-bugs.md)
        assume(not (parts and isinstance(parts[-1], str) and parts[-1].endswith('"')))
    return n.String(tuple(parts), is_triple)


# The strategy builders below are cached: one strategy object per argument, so hypothesis
# builds and validates each tree once, not once per use or per draw (`conditions` draws
# `predicates(2)` every time); uncached, that validation was most of this file's time.
@cache
def targets(depth: int) -> st.SearchStrategy[n.Expr]:
    """Names, members and indexes: what may stand left of `=`, after `call` or `in`."""
    name = names.map(n.Name)
    if depth <= 0:
        return name
    inner = targets(depth - 1)
    return st.one_of(
        name,
        st.builds(n.Member, inner, names),
        st.builds(n.Index, inner, exprs(depth - 1)),
    )


@cache
def exprs(depth: int, in_condition: bool = False) -> st.SearchStrategy[n.Expr]:
    """Value expressions (no calls, no predicates).

    Text in conditions has no spaces (the condition text is whitespace-normalised),
    no `:` or `#` (they end the header) and no `*` (markers): parser-bugs.md.
    """
    text = strings(alphabet='ab{}."\\\té', triple=False) if in_condition else strings()
    leaves = st.one_of(numbers, text, names.map(n.Name))
    if depth <= 0:
        return leaves
    inner = exprs(depth - 1, in_condition)
    entries = st.one_of(
        st.builds(n.Entry, names if in_condition else keys, inner),
        names.map(lambda key: n.Entry(key, n.Name(key), True)),
    )
    return st.one_of(
        leaves,
        st.lists(inner, max_size=4).map(lambda items: n.Array(tuple(items))),
        st.lists(entries, max_size=4).map(lambda items: n.Object(tuple(items))),
        st.builds(n.Member, inner, names),
        st.builds(n.Index, inner, inner),
        st.builds(n.BinOp, st.sampled_from(["+", "-", "*", "/", "%"]), inner, inner),
        st.builds(n.Slice, inner, st.none() | inner, st.none() | inner),
        st.builds(n.Builtin, st.sampled_from(BUILTIN_NAMES),
                  st.lists(inner, max_size=3).map(tuple),
                  st.lists(st.builds(n.Property, st.sampled_from(["by", "descending"]), inner),
                           max_size=1).map(tuple)),
    )


condition_operands = exprs(1, in_condition=True)


@cache
def predicates(depth: int) -> st.SearchStrategy[n.Expr]:
    simple = st.one_of(
        condition_operands,
        st.builds(
            n.Compare,
            st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in", "contains",
                             "starts with", "matches"]),
            condition_operands,
            condition_operands,
        ),
        st.builds(
            n.IsTest, condition_operands, st.sampled_from(["null", "not null", "empty", "not empty"])
        ),
    )
    if depth <= 0:
        return simple
    inner = predicates(depth - 1)
    return st.one_of(
        simple,
        st.builds(n.Not, inner),
        st.builds(
            n.BoolOp,
            st.sampled_from(["and", "or"]),
            st.lists(inner, min_size=2, max_size=3).map(tuple),
        ),
    )


WORDS = ["the", "draft", "looks", "good", "verdict.accepted", "score", "item-x", "enough?", "it's"]


@st.composite
def conditions(draw: Draw, in_loop: bool = False, judged: bool = False) -> n.Condition:
    marker = draw(st.sampled_from(["", "**", "***"]))
    if draw(st.booleans()):
        predicate = draw(predicates(2))
        text = format_expr(predicate)
        # A loop condition cannot start with `(` (parser-bugs.md).
        assume(not (in_loop and not marker and text.startswith("(")))
        return n.Condition(text, marker, predicate)
    text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=5)))
    # Unmarked text that reads as code (a dotted name) is refused, never a judge's.
    problem = None if marker or judged else code_problem(text)
    return n.Condition(text, marker, None, mentioned_names(text), problem)


modifiers = st.lists(
    st.one_of(
        st.builds(n.Modifier, st.none(), strings(triple=False)),
        st.builds(n.Modifier, names, exprs(1)),
    ),
    max_size=3,
).map(tuple)
calls = st.builds(
    n.Call,
    targets(2),
    st.lists(st.builds(n.Property, names, exprs(2)), max_size=3).map(tuple),
)


# --- statements -------------------------------------------------------------------


@cache
def bodies(depth: int) -> st.SearchStrategy[tuple[n.Stmt, ...]]:
    def unattached(stmts: list[n.Stmt]) -> tuple[n.Stmt, ...]:
        # An orphan clause right after an `if` or `try` would join it when parsed.
        kept = [
            stmt
            for index, stmt in enumerate(stmts)
            if not (isinstance(stmt, n.Orphan) and index and isinstance(stmts[index - 1], n.If | n.Try))
        ]
        return tuple(kept) or (n.Continue(),)

    return st.lists(statements(depth), min_size=1, max_size=3).map(unattached)


@cache
def loops(depth: int) -> st.SearchStrategy[n.Repeat | n.For | n.Loop]:
    body = bodies(depth - 1)
    return st.one_of(
        st.builds(n.Repeat, exprs(1), st.none() | names, body, st.booleans(), modifiers),
        st.builds(n.For, names, st.none() | names, exprs(1), body, st.booleans(), modifiers),
        st.builds(
            lambda kind, condition, maximum, var, body: n.Loop(
                kind, condition if kind else None, maximum, var, body
            ),
            st.sampled_from([None, "until", "while"]),
            conditions(in_loop=True),
            st.none() | exprs(1),
            st.none() | names,
            body,
        ),
    )


@cache
def values(depth: int) -> st.SearchStrategy[n.Expr]:
    """What may follow `let x =`, `x =` or `return`."""
    options = [exprs(2), calls]
    if depth > 0:
        options.append(loops(depth))
    return st.one_of(*options)


@cache
def statements(depth: int) -> st.SearchStrategy[n.Stmt]:
    simple = st.one_of(
        st.builds(lambda name, value: n.Let((name,), value), names, values(depth)),
        st.builds(lambda name, value: n.Let((name,), value, const=True), names, values(depth)),
        st.builds(
            lambda names_, value: n.Let(tuple(names_), value, destructure=True),
            st.lists(names, min_size=1, max_size=3),
            values(depth),
        ),
        st.builds(n.Assign, targets(2), values(depth)),
        st.builds(n.ExprStmt, calls),
        st.builds(n.Return, st.none() | values(depth)),
        st.builds(n.Throw, st.none() | exprs(2)),
        st.just(n.Continue()),
        st.just(n.Break()),
        st.builds(n.Append, exprs(2), targets(2), st.sampled_from(["record", "append"])),
        st.builds(n.Use, st.text(TEXT_CHARS, max_size=8), names),
        st.builds(n.Do, names, st.lists(exprs(1), max_size=3).map(tuple)),
    )
    if depth <= 0:
        return simple
    body = bodies(depth - 1)
    return st.one_of(
        simple,
        loops(depth),
        st.builds(n.Parallel, modifiers, body),
        st.builds(
            n.If,
            st.lists(st.builds(n.Branch, conditions(), body), min_size=1, max_size=3).map(tuple),
            st.none() | body,
        ),
        st.builds(
            n.Choice,
            conditions(judged=True),
            st.lists(st.builds(n.Option, st.text(TEXT_CHARS, max_size=6), body), min_size=1, max_size=3).map(tuple),
        ),
        st.builds(
            lambda body_, var, handler, final: n.Try(
                body_, var if handler is not None else None, handler, final
            ),
            body,
            st.none() | names,
            st.none() | body,
            st.none() | body,
        ),
        st.builds(n.BlockDef, names, st.lists(names, max_size=3).map(tuple), body),
        st.builds(lambda body_: n.Do(None, (), body_), body),
        st.builds(
            lambda keyword, condition, body_: n.Orphan(
                keyword, body_, condition if keyword == "elif" else None
            ),
            st.sampled_from(["elif", "else", "catch", "finally"]),
            conditions(),
            body,
        ),
    )


programs = st.lists(statements(2), min_size=1, max_size=4).map(
    lambda stmts: n.Program(bodies_fix(stmts))
)


def bodies_fix(stmts: list[n.Stmt]) -> tuple[n.Stmt, ...]:
    return tuple(
        stmt
        for index, stmt in enumerate(stmts)
        if not (isinstance(stmt, n.Orphan) and index and isinstance(stmts[index - 1], n.If | n.Try))
    ) or (n.Break(),)


@PROPERTY_SETTINGS
@given(programs)
def test_formatted_ast_parses_back_to_itself(program: n.Program) -> None:
    text = format_program(program)
    parsed = parse_program(text, "generated.prose")
    assert parsed == program, text
    assert format_program(parsed) == text


@PROPERTY_SETTINGS
@given(predicates(3))
def test_predicate_text_parses_back(predicate: n.Expr) -> None:
    condition = parse_program(f"if {format_expr(predicate)}:\n  break\n").body[0]
    assert isinstance(condition, n.If)
    assert condition.branches[0].condition.predicate == predicate


@st.composite
def commented_sources(draw: Draw) -> str:
    """A formatted random program with comments and blank lines dropped in anywhere."""
    lines = format_program(draw(programs)).split("\n")[:-1]
    for number in range(draw(st.integers(1, 6))):
        row = draw(st.integers(0, len(lines)))
        if row < len(lines) and draw(st.booleans()):
            lines[row] += draw(st.sampled_from(["  # t", " #t", "\t# tab"])) + str(number)
        else:
            lines.insert(row, " " * draw(st.integers(0, 8)) + f"# own {number}")
    for _ in range(draw(st.integers(0, 3))):
        lines.insert(draw(st.integers(0, len(lines))), "")
    return "\n".join(lines) + "\n"


@PROPERTY_SETTINGS
@given(commented_sources())
def test_comments_survive_formatting(text: str) -> None:
    program = parses_or_syntax_error(text)
    if program is None:
        return
    formatted = format_program(program)
    again = parse_program(formatted, "commented.prose")
    assert again == program, formatted
    assert format_program(again) == formatted
    kept = [comment.text for comment in again.comments]
    for comment in program.comments:
        assert any(comment.text.rstrip() in text for text in kept), comment


# --- robustness: arbitrary and mutated text -------------------------------------------

SNIPPETS = [
    'let x = [1, "a\\"b", { k: v, s }]  # note\nx.k[0] = call f\n  a: 1\n  # own\n  b: "{x.k}"\n',
    "if a == 1:\n  break\nelif **the draft is good**:\n  continue\nelse:\n  throw\n",
    "loop until verdict.ok (max: 3) as i:\n  let v = call critic\n    draft: d\n",
    'parallel ("any", count: 2):\n  let a = call x\n  let b = call y\n',
    "try:\n  call f\ncatch as e:\n  record e in errs\nfinally:\n  append 1 to xs\n",
    'choice ***which\n  one***:\n  option "a":\n    do f(1, 2)\n  option "b":\n    do:\n      let z = 1\n',
    'let t = """multi\nline {a.b} \\{x}"""\nlet { p, q } = call s  # trailing\nreturn {\n  a: 1,  # c\n}\n',
    "block b(x, y):\n  return repeat x as k:\n    use \"lib\" as l\n# end\n",
    "# top\nif a:  # h\n  # in\n  x = [1,  # one\n    2]\n  # tail\n# out\nelse:\n  y = 2\nz = 3\n",
]
MUTATION_CHARS = ' \n\t:#"\\{}[](),.*=-_ax1'


@st.composite
def mutated(draw: Draw) -> str:
    text = draw(st.sampled_from(SNIPPETS))
    for _ in range(draw(st.integers(1, 3))):
        lines = text.split("\n")
        action = draw(st.sampled_from(["delete", "insert", "duplicate", "line", "indent"]))
        at = draw(st.integers(0, max(len(text) - 1, 0)))
        row = draw(st.integers(0, len(lines) - 1))
        if action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 3)) :]
        elif action == "insert":
            text = text[:at] + draw(st.text(MUTATION_CHARS, min_size=1, max_size=3)) + text[at:]
        elif action == "duplicate":
            text = text[:at] + text[at : at + 4] + text[at:]
        elif action == "line":  # delete a line, or copy one elsewhere
            if draw(st.booleans()):
                lines.pop(row)
            else:
                lines.insert(row, lines[draw(st.integers(0, len(lines) - 1))])
            text = "\n".join(lines)
        else:
            lines[row] = " " * draw(st.integers(1, 3)) + lines[row]
            text = "\n".join(lines)
    return text


def parses_or_syntax_error(text: str) -> n.Program | None:
    try:
        return parse_program(text, "fuzz.prose")
    except ProseSyntaxError as error:
        assert error.problems and error.line >= 1
        return None


TOKENS = [
    *sorted(KEYWORDS), "x", "y.z", "a[0]", "=", ":", "\n", "\n  ", "\n    ", '"s"', '"""t\n"""',
    "{", "}", "[", "]", "(", ")", ",", "1", "-2.5", "**", "***", "# c", "==", "(max: 3)", "x:",
]  # fmt: skip


@settings(max_examples=examples(300, 5000), deadline=2000)
@given(st.text(MUTATION_CHARS + "letifcalrpny", max_size=60))
def test_arbitrary_text_raises_only_syntax_errors(text: str) -> None:
    parses_or_syntax_error(text)


@settings(max_examples=examples(300, 5000), deadline=2000)
@given(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(["", " ", "  "])), max_size=14))
def test_token_soup_raises_only_syntax_errors(tokens: list[tuple[str, str]]) -> None:
    program = parses_or_syntax_error("".join(token + space for token, space in tokens))
    if program is not None:
        assert parse_program(format_program(program), "fuzz.prose") == program


@settings(max_examples=examples(400, 5000), deadline=2000)
@given(mutated())
def test_mutated_programs_raise_only_syntax_errors_and_format_if_valid(text: str) -> None:
    program = parses_or_syntax_error(text)
    if program is None:
        return
    formatted = format_program(program)
    again = parse_program(formatted, "fuzz.prose")
    assert again == program, formatted
    assert format_program(again) == formatted
    # Every comment survives (trailing comments that end up on one line are joined).
    kept = [comment.text for comment in again.comments]
    for comment in program.comments:
        assert any(comment.text.rstrip() in text for text in kept), comment


# --- deep nesting -------------------------------------------------------------------


def test_blocks_nested_to_the_limit_parse_and_format() -> None:
    depth = MAX_NESTING
    lines = ["  " * level + ("if x:" if level % 2 == 0 else "repeat 2:") for level in range(depth)]
    text = "\n".join([*lines, "  " * depth + "x = 1"]) + "\n"
    program = parse_program(text, "deep.prose")
    assert format_program(program) == text
    assert parse_program(format_program(program), "deep.prose") == program
    inner = program.body[0]
    for _ in range(depth - 1):
        inner = inner.branches[0].body[0] if isinstance(inner, n.If) else inner.body[0]  # type: ignore[union-attr]
    assert isinstance(inner, n.Repeat)
    assert inner.body == (n.Assign(n.Name("x"), n.Literal(1)),)
