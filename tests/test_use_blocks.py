"""Blocks exported across files: `use "lib/vote.prose.md" as vote`, `do vote.majority(xs)`.

The imported block is a local block for the linter and the run alike, so a leak through
it is caught statically (PH604) and at run time (R010), and its clean twin runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from prose.check import lint_text
from tests.conftest import FIXTURES, run_prose_in_process

LIB = FIXTURES / "use_blocks" / "lib" / "vote.prose.md"

MAIN = """---
name: main
kind: pattern
version: 0.1.0
---

# Main

Three answers, then the one the library's vote picks.

### Slots

- `answerer` (primary)
  - requires: question
  - ensures: answer text
- `summariser`
  - requires: answer
  - ensures: summary text

### Invariants

- `summariser` never sees `answerer`

### Parameters

- `question`: string -- the question

### Delegation

```prose
use "lib/vote.prose.md" as vote
let answers = []
repeat 3:
  let a = call answerer
    question: question
  append a to answers
let best = do vote.{block}(answers)
let s = call summariser
  answer: {sent}
return {{ result: s, best: best }}
```
"""


def _project(tmp_path: Path, block: str = "majority", sent: str = "best") -> Path:
    (tmp_path / "lib").mkdir()
    shutil.copy(LIB, tmp_path / "lib" / "vote.prose.md")
    (tmp_path / "main.script.yaml").write_text(
        "slots:\n  answerer: [x, y, z]\n  summariser: [done]\n")
    main = tmp_path / "main.prose.md"
    main.write_text(MAIN.format(block=block, sent=sent))
    return main


def _codes(path: Path) -> list[tuple[str, int]]:
    result = lint_text(path.read_text(), str(path))
    return [(d.code, d.span.line) for d in result.diagnostics]


def test_a_leak_through_an_imported_block_is_caught_by_lint_and_by_the_run(
    tmp_path: Path,
) -> None:
    main = _project(tmp_path)
    assert ("PH604", 39) in _codes(main)  # `answer: best`, best = the vote over the answers
    ran = run_prose_in_process("run", str(main), "--input", "question=q", "--script",
                               str(tmp_path / "main.script.yaml"), "--no-check", cwd=tmp_path)
    assert ran.code != 0
    assert "R010 information hiding: the call to `summariser` is not sent" in ran.stderr


def test_the_clean_twin_lints_clean_and_runs_the_imported_block(tmp_path: Path) -> None:
    main = _project(tmp_path, sent="question")
    assert [code for code, _ in _codes(main) if not code.startswith("PN105")] == []
    ran = run_prose_in_process("run", str(main), "--input", "question=q", "--script",
                               str(tmp_path / "main.script.yaml"), cwd=tmp_path)
    assert ran.code == 0, ran.stderr
    assert '"best": "x"' in ran.stdout  # the block ran: the first answer wins a tie


def test_an_unknown_block_and_a_block_that_reads_its_own_file_are_refused(
    tmp_path: Path,
) -> None:
    main = _project(tmp_path, block="majorty")
    result = lint_text(main.read_text(), str(main))
    [unknown] = [d for d in result.diagnostics if d.code == "PS222"]
    assert unknown.span.line == 31
    assert "`lib/vote.prose.md` exports no block `majorty`; did you mean `majority`?" in (
        unknown.message)
    main.write_text(MAIN.format(block="leaky", sent="question"))
    result = lint_text(main.read_text(), str(main))
    [leaky] = [d for d in result.diagnostics if d.code == "PS223"]
    assert "block `leaky` of `lib/vote.prose.md` reads `question`, a name of its own file" in (
        leaky.message)
