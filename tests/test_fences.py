"""One fence finder (issue 36): `prose lint`, `prose parse` and `prose fmt` agree on where
a file's ```prose block is, by the CommonMark rule in `prose.markdown_blocks` (0 to 3
spaces of indentation open a fence; 4 make an indented code block).

The commands run as the user runs them (`run_prose`, a new process) on a copy of a
library pattern whose block is indented or moved under a `####` heading."""

from __future__ import annotations

from pathlib import Path

import pytest

from prose.markdown_blocks import fence_opening
from prose.spec.markdown_sections import prose_fences, split_document
from prose.syntax.markdown import delegation_blocks
from tests.conftest import ROOT, run_prose

PATTERN = ROOT / "patterns" / "refine.prose.md"


def _variant(tmp_path: Path, name: str, change: str) -> Path:
    """The library pattern with its program block indented or preceded by a heading."""
    text = PATTERN.read_text(encoding="utf-8")
    start = text.index("```prose")
    end = text.index("```", start + len("```prose")) + 3
    block = text[start:end]
    if change == "heading":
        moved = "#### The program\n\n" + block
    else:
        moved = "\n".join(change + row if row else row for row in block.split("\n"))
    path = tmp_path / f"{name}.prose.md"
    path.write_text(text[:start] + moved + text[end:], encoding="utf-8")
    return path


@pytest.mark.parametrize(("change", "found"), [("   ", True), ("heading", True),
                                               ("    ", False), ("\t", False)])
def test_lint_parse_and_fmt_find_the_same_block(tmp_path: Path, change: str, found: bool) -> None:
    path = _variant(tmp_path, "variant", change)
    lint = run_prose("lint", "--format", "concise", str(path))
    parse = run_prose("parse", str(path))
    fmt = run_prose("fmt", "--check", str(path))
    for result in (lint, parse, fmt):
        assert "Traceback" not in result.stdout + result.stderr
    if found:
        assert lint.code == 0, lint.stdout
        assert parse.code == 0 and ": 8 statements" in parse.stdout
        assert fmt.code == 0 and "1 file would be left unchanged" in fmt.stdout + fmt.stderr
    else:
        assert lint.code == 1 and "PS113 `### Delegation` holds no ```prose block" in lint.stdout
        assert parse.code == 1 and "no `### Delegation` section with a ```prose block" in parse.stderr
        assert fmt.code == 1 and "no `### Delegation` section with a ```prose block" in fmt.stderr


@pytest.mark.parametrize(
    ("line", "info"),
    [
        ("```prose", "prose"),
        ("   ```Prose extra words", "prose"),
        ("~~~~ prose", "prose"),
        ("~~~ prose `with` backticks", "prose"),
        ("    ```prose", None),  # an indented code block
        ("\t```prose", None),
        ("``prose", None),
        ("``` prose `x`", None),  # a backtick info string holds no backtick
    ],
)
def test_a_fence_opens_by_the_commonmark_rule(line: str, info: str | None) -> None:
    opening = fence_opening(line)
    assert (opening.info if opening else None) == info


def test_a_fence_closes_with_a_run_at_least_as_long_of_its_own_character() -> None:
    opening = fence_opening("````prose")
    assert opening is not None
    assert not opening.closed_by("```")
    assert not opening.closed_by("~~~~")
    assert not opening.closed_by("    ````")  # indented 4: a line of the block
    assert not opening.closed_by("```` x")
    assert opening.closed_by("   `````  ")


def test_the_spec_reader_and_the_program_finder_read_one_block_alike() -> None:
    text = (
        "---\nname: x\nkind: pattern\n---\n# X\n\n### Delegation\n\n#### Note\n\n"
        "  ~~~prose\n  let a = 1\n   ```\n  return { result: a }\n  ~~~\n\n"
        "    ```prose\n    let b = 2\n    ```\n"
    )
    [found] = delegation_blocks(text)
    lines = text.split("\n")
    document = split_document(lines, 4)
    [section] = [s for s in document.sections if s.name == "delegation"]
    [fenced] = prose_fences(section)
    assert found.source == fenced.source == "let a = 1\n ```\nreturn { result: a }\n"
    assert (found.fence_line, found.end_line) == (fenced.fence_line, fenced.end_line) == (11, 15)
