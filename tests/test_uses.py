"""`use` targets (issue 14.4 and 14.5): cycles are found by lint and refused at run time,
nesting is bounded, and a target outside the project or the library is refused without
reading it; a nested file that is not a pattern is never echoed."""

from __future__ import annotations

from pathlib import Path

import pytest

from prose.uses import MAX_NESTING
from tests.conftest import run_prose_in_process

PATTERN = """---
name: {name}
kind: pattern
version: 0.1.0
---

# {name}

A pattern of the `use` tests.

### Slots

- `worker`

### Config

- None.

### Invariants

- none

### Parameters

- `task`: string -- what to do

### Returns

- `result`: anything

### Delegation

```prose
{program}
```
"""

SECRET = "TOPSECRET-do-not-echo"


def pattern(folder: Path, name: str, uses: str | None = None) -> Path:
    """A pattern that calls `uses` (if any) and then its worker."""
    lines = []
    if uses is not None:
        lines += [f'use "{uses}" as inner', "let inner_result = call inner", "  task: task"]
    lines += ["let done = call worker", "  task: task", "return { result: done }"]
    path = folder / f"{name}.prose.md"
    path.write_text(PATTERN.format(name=name, program="\n".join(lines)), encoding="utf-8")
    return path


def prose(folder: Path, *args: str) -> tuple[int, str]:
    script = folder / "script.yaml"
    if not script.exists():
        script.write_text("slots: {}\n", encoding="utf-8")
    done = run_prose_in_process(*args, cwd=folder)
    return done.code, done.stdout + done.stderr


def test_a_pattern_that_uses_itself_is_a_lint_error_and_refused_at_run_time(
        tmp_path: Path) -> None:
    pattern(tmp_path, "self", uses="self.prose.md")
    code, output = prose(tmp_path, "lint", "self.prose.md")
    assert code == 1 and "PT305" in output and "self.prose.md -> self.prose.md" in output
    code, output = prose(tmp_path, "run", "self.prose.md", "--script", "script.yaml",
                         "--input", "task=x", "--no-check", "-q", "--max-calls", "1")
    assert code == 1, output
    assert "a `use` cycle:" in output and "RecursionError" not in output


def test_a_two_file_cycle_is_refused_before_it_runs_away(tmp_path: Path) -> None:
    pattern(tmp_path, "a", uses="b.prose.md")
    pattern(tmp_path, "b", uses="a.prose.md")
    code, output = prose(tmp_path, "lint", "a.prose.md")
    assert code == 1 and "`use` cycle: a.prose.md -> b.prose.md -> a.prose.md" in output
    code, output = prose(tmp_path, "run", "a.prose.md", "--script", "script.yaml",
                         "--input", "task=x", "--no-check", "-q", "--max-calls", "1")
    assert code == 1, output
    assert "a `use` cycle:" in output and "a.prose.md -> " in output


def test_nesting_is_bounded(tmp_path: Path) -> None:
    depth = MAX_NESTING + 2
    for level in range(depth):
        pattern(tmp_path, f"p{level}", uses=f"p{level + 1}.prose.md" if level + 1 < depth
                else None)
    code, output = prose(tmp_path, "run", "p0.prose.md", "--script", "script.yaml",
                         "--input", "task=x", "--no-check", "-q")
    assert code == 1, output
    assert f"patterns nested more than {MAX_NESTING} deep" in output


@pytest.mark.parametrize("target", ["../secret.prose.md", "{abs}", "../secret.txt"])
def test_a_target_outside_the_project_is_refused_without_reading_it(
        tmp_path: Path, target: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("secret.prose.md", "secret.txt"):
        (tmp_path / name).write_text(f"{SECRET}\n", encoding="utf-8")
    target = target.format(abs=tmp_path / "secret.prose.md")
    pattern(project, "main", uses=target)
    code, output = prose(project, "lint", "main.prose.md")
    assert code == 1 and "PK506" in output and SECRET not in output
    code, output = prose(project, "run", "main.prose.md", "--script", "script.yaml",
                         "--input", "task=x", "--no-check", "-q")
    assert code == 1, output
    assert SECRET not in output
    assert "absolute path is refused" in output or "outside the project" in output \
        or "names a pattern file" in output


def test_a_nested_file_that_is_not_a_pattern_is_not_echoed(tmp_path: Path) -> None:
    (tmp_path / "notes.prose.md").write_text(f"{SECRET}\nmore private text\n",
                                             encoding="utf-8")
    pattern(tmp_path, "main", uses="notes.prose.md")
    code, output = prose(tmp_path, "run", "main.prose.md", "--script", "script.yaml",
                         "--input", "task=x", "--no-check", "-q")
    assert code == 1, output
    assert "notes.prose.md" in output and SECRET not in output
