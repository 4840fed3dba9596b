"""Issue 14.9: deep nesting is refused by the parser, with a position, before anything recurses.

A literal nested 8,000 deep made `prose lint` print a RecursionError
traceback (from the checker's flow analysis) and `prose run` exit 70. The
parser now refuses a program nested deeper than `MAX_NESTING` levels
("nesting deeper than 100 levels", at file:line:col), and a program at the
limit goes through every stage within Python's default recursion limit.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from prose.check.lint import lint_text
from prose.errors import ProseSyntaxError
from prose.llm import Script
from prose.runtime import RunOptions, run_pattern
from prose.syntax import parse, parse_program
from prose.syntax.dump import dump
from prose.syntax.format import format_file
from prose.syntax.nesting import MAX_NESTING
from tests.conftest import run_prose, run_prose_in_process

HOSTILE = 8000
MESSAGE = f"nesting deeper than {MAX_NESTING} levels"

PATTERN = """---
name: deep
kind: pattern
version: 0.1.0
---

# Deep

A pattern nested deep.

### Slots

- `worker`

### Config

- None.

### Invariants

- none

### Parameters

- None.

### Returns

- `result`: the result

### Delegation

```prose
{program}
```
"""
BLOCK_LINE = PATTERN.splitlines().index("```prose") + 1  # the line before the program's first


def nested_list(depth: int) -> str:
    return "let x = " + "[" * depth + "1" + "]" * depth + "\nreturn { result: x }"


def nested_object(depth: int) -> str:
    return "let x = " + "{a: " * depth + "1" + "}" * depth + "\nreturn { result: x }"


def nested_ifs(depth: int) -> str:
    lines = ["  " * level + "if true:" for level in range(depth)]
    return "\n".join([*lines, "  " * depth + "let y = 1", "return { result: 1 }"])


def member_chain(depth: int) -> str:
    return "let o = {a: 1}\nlet x = o" + ".a" * depth + "\nreturn { result: x }"


def index_chain(depth: int) -> str:
    return "let o = [1]\nlet x = o" + "[0]" * depth + "\nreturn { result: x }"


def not_chain(depth: int) -> str:
    return "if " + "not " * depth + "true:\n  let y = 1\nreturn { result: 1 }"


def parens_in_condition(depth: int) -> str:
    return "if " + "(" * depth + "true" + ")" * depth + ":\n  let y = 1\nreturn { result: 1 }"


SHAPES: dict[str, Callable[[int], str]] = {
    "list": nested_list,
    "object": nested_object,
    "ifs": nested_ifs,
    "member-chain": member_chain,
    "index-chain": index_chain,
    "not-chain": not_chain,
    "parens-in-condition": parens_in_condition,
}


def refusal(source: str) -> tuple[int, int, str]:
    with pytest.raises(ProseSyntaxError) as caught:
        parse_program(source, "deep.prose")
    [problem] = caught.value.problems
    return problem.span.line, problem.span.column, problem.message


@pytest.mark.parametrize(
    ("shape", "where"),
    [
        ("list", (1, 9 + MAX_NESTING)),  # the bracket that opens level 101
        ("object", (1, 9 + 4 * MAX_NESTING)),
        ("ifs", (MAX_NESTING + 2, 2 * MAX_NESTING + 3)),  # the block that opens level 101
        ("member-chain", (2, 9)),  # the expression that holds too deep a chain
        ("index-chain", (2, 9)),
        ("not-chain", (1, 4 + 4 * (MAX_NESTING + 1))),  # the `not` at level 101
        ("parens-in-condition", (1, 4)),
    ],
)
def test_a_hostile_depth_is_a_syntax_error_at_its_position(
    shape: str, where: tuple[int, int]
) -> None:
    assert refusal(SHAPES[shape](HOSTILE)) == (*where, MESSAGE)


@pytest.mark.parametrize("shape", SHAPES)
def test_one_level_past_the_limit_is_refused(shape: str) -> None:
    assert refusal(SHAPES[shape](MAX_NESTING + 1))[2] == MESSAGE


@contextmanager
def default_recursion_limit() -> Iterator[None]:
    """Python's own limit (the test session and `prose` raise it to 20,000)."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


@pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")
@pytest.mark.parametrize("shape", SHAPES)
def test_a_program_at_the_limit_goes_through_every_stage(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "deep.prose.md"
    text = PATTERN.format(program=SHAPES[shape](MAX_NESTING))
    path.write_text(text, encoding="utf-8")
    script = Script.from_mapping({"slots": {"worker": ["ok"]}})
    with default_recursion_limit():
        program = parse(text, str(path))
        dump(program)
        format_file(text, str(path))
        lint_text(text, str(path))
        result = asyncio.run(run_pattern(path, RunOptions(script=script, write_trace=False)))
    # `o.a.a...` and `o[0][0]...` fail at run time (R005: 1 has no `.a`), as they should.
    assert result.exit_code in (0, 1), result.error and result.error.format()
    if result.error is not None:
        assert result.error.code == "R005"


@functools.cache
def hostile_refusal(shape: str) -> tuple[int, int, str]:
    """`refusal` of the shape at the hostile depth, computed once per worker (the 8,000
    nested `if`s are 64 MB of source)."""
    return refusal(SHAPES[shape](HOSTILE))


# The literal nested 8,000 deep (`list`, the shape of the report) runs every command as a
# process of its own: exit code, output and no traceback from a fresh interpreter at its
# own recursion limit. The other shapes call the same commands in the worker, where an
# escaping RecursionError fails the test just the same, without a new interpreter each.
IN_A_NEW_PROCESS = "list"


@pytest.mark.parametrize("shape", ["list", "object", "ifs", "member-chain"])
@pytest.mark.parametrize(
    "command",
    [["parse"], ["lint"], ["fmt", "--check"], ["run", "--script", "SCRIPT", "--no-check"]],
    ids=["parse", "lint", "fmt", "run"],
)
def test_every_command_refuses_a_hostile_depth_with_exit_1(
    tmp_path: Path, shape: str, command: list[str]
) -> None:
    path = tmp_path / "deep.prose.md"
    path.write_text(PATTERN.format(program=SHAPES[shape](HOSTILE)), encoding="utf-8")
    script = tmp_path / "script.yaml"
    script.write_text("slots:\n  worker: [ok]\n", encoding="utf-8")
    arguments = [str(script) if word == "SCRIPT" else word for word in command]
    run = run_prose if shape == IN_A_NEW_PROCESS else run_prose_in_process
    result = run(arguments[0], str(path), *arguments[1:], cwd=tmp_path)  # no Traceback
    assert result.code == 1, result.output
    line, column, _ = hostile_refusal(shape)
    assert f"{path}:{BLOCK_LINE + line}:{column}:" in result.output
    assert MESSAGE in result.output
    assert "RecursionError" not in result.output
