"""`prose parse`, `prose fmt` and the language server find a function's program under
`### Execution` (issue 15's leftover: they looked only for `### Delegation`).

Where the program is comes from the file's kind (`prose.spec.kinds`, read by
`prose.spec.loader.program_section`), the rule lint and run already use.
"""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from prose.cli.main import cli
from prose.lsp.actions import format_document
from prose.lsp.documents import analyse
from prose.lsp.incremental import ProgramCache
from prose.spec.loader import program_section

FUNCTION = """---
name: summarize
kind: function
version: 0.1.0
---

# Summarize

### Parameters

- `text`: string -- what to summarize

### Returns

- `summary`: the summary

### Execution

```prose
let s = call summarizer
    text: text
return { summary: s }
```
"""


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        done = CliRunner().invoke(cli, list(args))
    finally:
        os.chdir(cwd)
    return done.exit_code, done.output


def test_the_program_section_follows_the_kind() -> None:
    assert program_section(FUNCTION, "f.prose.md") == "execution"
    pattern = FUNCTION.replace("kind: function", "kind: pattern")
    assert program_section(pattern, "p.prose.md") == "delegation"


def test_prose_parse_reads_the_execution_block(tmp_path: Path) -> None:
    (tmp_path / "f.prose.md").write_text(FUNCTION)
    code, out = run(tmp_path, "parse", "f.prose.md")
    assert code == 0, out
    assert "2 statements" in out and "20:1 Let" in out


def test_prose_fmt_rewrites_the_execution_block_only(tmp_path: Path) -> None:
    path = tmp_path / "f.prose.md"
    path.write_text(FUNCTION)
    code, out = run(tmp_path, "fmt", "f.prose.md")
    assert code == 0, out
    assert path.read_text() == FUNCTION.replace("    text: text", "  text: text")
    code, out = run(tmp_path, "fmt", "--check", "f.prose.md")
    assert code == 0, out


def test_a_function_without_an_execution_block_names_the_section(tmp_path: Path) -> None:
    (tmp_path / "f.prose.md").write_text(FUNCTION.replace("### Execution", "### Notes"))
    code, out = run(tmp_path, "parse", "f.prose.md")
    assert code == 1
    assert "no `### Execution` section" in out


def test_the_language_server_reads_and_formats_the_execution_block() -> None:
    uri = "file:///tmp/summarize.prose.md"
    for programs in (None, ProgramCache()):  # the full read and the incremental one
        analysis = analyse(uri, FUNCTION, 1, programs=programs)
        assert analysis.pattern.syntax_error is None
        assert analysis.pattern.program is not None
        assert len(analysis.pattern.program.body) == 2
    edits = format_document(analyse(uri, FUNCTION, 1))
    assert edits is not None and len(edits) == 1
    assert "\n  text: text\n" in edits[0].new_text
