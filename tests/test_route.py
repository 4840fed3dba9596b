"""The route of `prose run`: a pattern file is read once, loaded once and parsed once.

The commands run in process (click's runner) with a profile hook that counts
calls of the three functions by their code objects, so a second read, load or
parse anywhere on the route counts, however the function was imported. An
audit hook counts the operating system's opens of the pattern file.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import pytest
from click.testing import CliRunner

import prose.files
import prose.spec.loader
import prose.syntax
from prose.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PATTERNS = ROOT / "patterns"

COUNTED: dict[CodeType, str] = {
    prose.files.read_text.__code__: "read",
    prose.spec.loader.load_spec.__code__: "load",
    prose.syntax.parse.__code__: "parse",
}

_opened: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and isinstance(args[0], str | Path):
        _opened.append(str(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed; this one only records


@contextmanager
def counting() -> Iterator[tuple[Counter[tuple[str, str]], Callable[[str], int]]]:
    """(read/load/parse, file) -> calls; and a function: how often a path was opened."""
    calls: Counter[tuple[str, str]] = Counter()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            what = COUNTED.get(frame.f_code)
            if what is not None:
                name = frame.f_locals.get("path", frame.f_locals.get("filename"))
                calls[(what, Path(str(name)).name)] += 1

    start = len(_opened)
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield calls, lambda path: sum(1 for p in _opened[start:] if Path(p).name == path)
    finally:
        sys.setprofile(previous)


def _run(args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("target", ["pattern", "instance"])
def test_prose_run_reads_loads_and_parses_the_pattern_once(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = str(EXAMPLES / "dialectic.script.yaml")
    if target == "pattern":
        args = ["run", str(PATTERNS / "dialectic.prose.md"), "--script", script,
                "--input", "task_brief=Split the monolith?", "--config", "rounds=2"]
    else:
        args = ["run", str(EXAMPLES / "dialectic.yaml"), "--script", script]
    with counting() as (calls, opened):
        _run([*args, "-q", "--trace", str(tmp_path / "t.jsonl")], tmp_path, monkeypatch)
    name = "dialectic.prose.md"
    assert {what: calls[(what, name)] for what in ("read", "load", "parse")} == {
        "read": 1, "load": 1, "parse": 1}
    assert opened(name) == 1


NESTED = """---
name: {name}
kind: pattern
version: 0.1.0
---

# {name}

A pattern of the route test.

### Slots

- `worker`

### Config

- None.

### Invariants

- none

### Parameters

- `{param}`: {kind} -- {what}

### Returns

- `result`: anything

### Delegation

```prose
{program}
```
"""

OUTER_PROGRAM = """\
let results = for item in items:
  call worker
    item: item
return { result: results }"""

INNER_PROGRAM = """\
let answer = call worker
  item: item
return { result: answer }"""


def test_a_nested_pattern_called_in_a_loop_is_read_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "outer.prose.md").write_text(NESTED.format(
        name="outer", param="items", kind="list", what="the items", program=OUTER_PROGRAM))
    (tmp_path / "inner.prose.md").write_text(NESTED.format(
        name="inner", param="item", kind="string", what="one item", program=INNER_PROGRAM))
    (tmp_path / "script.yaml").write_text('slots:\n  "worker.worker": [a, b, c]\n')
    (tmp_path / "outer.yaml").write_text(
        "pattern: outer.prose.md\nwith:\n  worker:\n    pattern: inner.prose.md\n"
        "    with: { worker: { model: fast } }\n"
        "inputs:\n  items: [x, y, z]\n")
    args = ["run", "outer.yaml", "--script", "script.yaml", "-q", "--trace", "t.jsonl"]
    with counting() as (calls, opened):
        _run(args, tmp_path, monkeypatch)
    assert calls[("read", "inner.prose.md")] == 1
    assert calls[("parse", "inner.prose.md")] == 1
    assert opened("inner.prose.md") == 1


def test_prose_run_report_reads_parses_and_analyses_the_pattern_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: the lint gate, the audit and the report's graph share one read, one parse
    and one data-flow analysis (before, the audit and the graph each did all three)."""
    import prose.check.flow

    script = str(EXAMPLES / "dialectic.script.yaml")
    args = ["run", str(PATTERNS / "dialectic.prose.md"), "--script", script,
            "--input", "task_brief=Split the monolith?", "--config", "rounds=2",
            "-q", "--trace", str(tmp_path / "t.jsonl"), "--report"]
    COUNTED[prose.check.flow.analyse.__code__] = "analyse"
    try:
        with counting() as (calls, opened):
            _run(args, tmp_path, monkeypatch)
    finally:
        del COUNTED[prose.check.flow.analyse.__code__]
    name = "dialectic.prose.md"
    assert (tmp_path / "t.report.html").is_file()  # a trace not named trace.jsonl (issue 35)
    assert {what: calls[(what, name)] for what in ("read", "load", "parse")} == {
        "read": 1, "load": 1, "parse": 1}
    assert sum(count for (what, _), count in calls.items() if what == "analyse") == 1
    assert opened(name) == 1
