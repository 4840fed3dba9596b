"""An agent that writes: `write` in its own workspace, and the files it wrote as its value.

A slot whose `ensures:` begins with `written files` returns what it wrote under `out/` of
its workspace (a map of paths to contents), so a worker's code and tests become a later
reviewer's workspace. Runs go through the real call path (the scripted model served by
LiteLLM's router); the `write` tool really writes, and its refusals are tool results.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from prose.lang.tools import returns_written_files
from prose.llm.script import Script
from prose.runtime import RunOptions, RunResult, run_pattern
from prose.runtime.toolbox import CommandSpec
from prose.spec.loader import load_spec
from tests.conftest import run_prose

PATTERN = """---
name: write-then-review
kind: pattern
version: 0.1.0
---
# Write, then review

### Parameters

- `task`: string -- the task
- `start`: object -- the files the worker starts from

### Slots

- `worker` (primary)
  - requires: task, out
  - ensures: written files: the repository, each path mapped to its content
  - tools: {tools}
- `reviewer`
  - requires: task, repo
  - ensures: review object with `verdict` (string)
  - tools: list, read, cli:check

### Delegation

```prose
let repo = call worker
  task: task
  out: start
let review = call reviewer
  task: task
  repo: repo
return { repo: repo, verdict: review.verdict }
```
"""
CHECK = CommandSpec(("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "repo"), {},
                    timeout=120)
START = {"calc.py": "def add(a, b):\n    return a - b\n", "conftest.py": ""}
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
FIXED = "def add(a, b):\n    return a + b\n"


def write_pattern(tmp_path: Path, tools: str = "list, read, write") -> Path:
    path = tmp_path / "files.prose.md"
    path.write_text(PATTERN.replace("{tools}", tools), encoding="utf-8")
    return path


def run(path: Path, worker: list[Any], reviewer: list[Any], **options: Any) -> RunResult:
    script = Script.from_mapping({"slots": {"worker": worker, "reviewer": reviewer}})
    opts = RunOptions(inputs={"task": "fix the adder and test it", "start": START},
                      script=script, tools=options.pop("tools", {"cli:check": CHECK}),
                      trace_path=path.parent / "trace.jsonl", **options)
    return asyncio.run(run_pattern(path, opts))


def events(result: RunResult, kind: str) -> list[dict[str, Any]]:
    assert result.trace_path is not None
    lines = Path(result.trace_path).read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


WORKER = [
    {"tool": "read", "args": {"path": "out/calc.py"}},
    {"tool_calls": [{"tool": "write", "args": {"path": "out/calc.py", "content": FIXED}},
                    {"tool": "write", "args": {"path": "out/test_calc.py", "content": TEST}}]},
    "fixed add and wrote its test",
]
REVIEWER = [{"tool": "list", "args": {}}, {"tool": "cli:check", "args": {}},
            {"verdict": "DONE"}]


def test_the_worker_s_files_are_the_reviewer_s_workspace(tmp_path: Path) -> None:
    result = run(write_pattern(tmp_path), WORKER, REVIEWER)
    assert result.exit_code == 0, result.error and result.error.format()
    assert result.value == {"repo": {"calc.py": FIXED, "conftest.py": "",
                                     "test_calc.py": TEST}, "verdict": "DONE"}
    tools = events(result, "tool")
    listed = next(t for t in tools if t["slot"] == "reviewer" and t["tool"] == "list")
    assert "repo/calc.py" in listed["output"] and "repo/test_calc.py" in listed["output"]
    check = next(t for t in tools if t["tool"] == "cli:check")
    assert "1 passed" in check["output"] and "exit code: 0" in check["output"]
    wrote = [t for t in tools if t["tool"] == "write"]
    assert [t["output"] for t in wrote] == [f"wrote out/calc.py ({len(FIXED)} bytes)",
                                            f"wrote out/test_calc.py ({len(TEST)} bytes)"]
    [worker] = [c for c in events(result, "call") if c["slot"] == "worker"]
    assert worker["agent"]["written"] == ["calc.py", "conftest.py", "test_calc.py"]
    assert worker["agent"]["changes"]["changed"] == ["out/calc.py"]
    assert worker["output"]["test_calc.py"] == TEST
    # the reviewer's workspace was laid out from the worker's files: its input label
    [reviewer] = [c for c in events(result, "call") if c["slot"] == "reviewer"]
    assert "worker" in reviewer["provenance"]


@pytest.mark.parametrize(("args", "why"), [
    ({"path": "../escape.py", "content": "x"}, "leaves the workspace"),
    ({"path": "/tmp/escape.py", "content": "x"}, "is an absolute path"),
    ({"path": "manifest.sha256", "content": "x"}, "the workspace's record of its inputs"),
    ({"path": "out", "content": "x"}, "is a folder"),
    ({"path": "out/a.py"}, "`content` must be a string"),
])
def test_write_refuses_what_it_must_not_write(tmp_path: Path, args: dict[str, Any],
                                               why: str) -> None:
    worker = [{"tool": "write", "args": args}, "gave up"]
    result = run(write_pattern(tmp_path), worker, [{"verdict": "DONE"}])
    assert result.exit_code == 0, result.error and result.error.format()
    [tool] = [t for t in events(result, "tool") if t["slot"] == "worker"]
    assert tool["error"] is not None and why in tool["error"], tool["error"]
    assert result.value["repo"] == START  # nothing but the starting files
    assert not (tmp_path.parent / "escape.py").exists() and not Path("/tmp/escape.py").exists()


def test_a_files_slot_without_a_writing_tool_is_ps196(tmp_path: Path) -> None:
    path = write_pattern(tmp_path, "list, read")
    result = load_spec(path.read_text(encoding="utf-8"), str(path))
    [found] = [d for d in result.diagnostics if d.code == "PS196"]
    assert (found.span.line, found.span.column) == (17, 14)  # the `ensures:` text
    assert "slot `worker` returns the files it writes" in found.message
    lint = run_prose("lint", str(path))
    assert lint.code == 1 and "PS196" in lint.output


@pytest.mark.parametrize(("ensures", "returns"), [
    ("written files: the repository", True),
    ("`written files`", True),
    ("Written files", True),
    ("written filesystem notes", False),
    ("the written files", False),
    (None, False),
])
def test_which_ensures_returns_written_files(ensures: str | None, returns: bool) -> None:
    assert returns_written_files(ensures) is returns


def test_resume_writes_the_files_again(tmp_path: Path) -> None:
    path = write_pattern(tmp_path)
    first = run(path, WORKER, REVIEWER[:1])  # the reviewer's script runs out
    assert first.exit_code == 1 and first.error is not None and first.error.code == "R013"
    (tmp_path / "first.jsonl").write_bytes((tmp_path / "trace.jsonl").read_bytes())
    (tmp_path / "first.jsonl.sha256").write_bytes(
        (tmp_path / "trace.jsonl.sha256").read_bytes())
    again = run(path, WORKER, REVIEWER, resume_trace=tmp_path / "first.jsonl")
    assert again.exit_code == 0, again.error and again.error.format()
    assert again.value["repo"]["calc.py"] == FIXED
    [worker] = [c for c in events(again, "call") if c["slot"] == "worker"]
    assert worker["cache_hit"] is True


# A command that writes a file no other run could write the same (a fresh uuid).
GENERATE = CommandSpec(("python", "-c", "import pathlib, uuid; "
                        "pathlib.Path('out/made.txt').write_text(str(uuid.uuid4()))"), {})


def test_resume_restores_the_files_a_command_wrote_without_running_it(tmp_path: Path) -> None:
    path = write_pattern(tmp_path, "list, read, write, cli:generate (writes)")
    tools = {"cli:check": CHECK, "cli:generate": GENERATE}
    worker = [{"tool": "cli:generate", "args": {}},
              {"tool": "write", "args": {"path": "out/calc.py", "content": FIXED}},
              "generated a file and fixed the adder"]
    first = run(path, worker, REVIEWER[:1], tools=tools)  # the reviewer's script runs out
    assert first.exit_code == 1 and first.error is not None and first.error.code == "R013"
    [made] = [c for c in events(first, "call") if c["slot"] == "worker"]
    token = made["output"]["made.txt"]
    assert len(token) == 36 and made["output"]["calc.py"] == FIXED
    (tmp_path / "first.jsonl").write_bytes((tmp_path / "trace.jsonl").read_bytes())
    (tmp_path / "first.jsonl.sha256").write_bytes(
        (tmp_path / "trace.jsonl.sha256").read_bytes())
    again = run(path, worker, REVIEWER, tools=tools, resume_trace=tmp_path / "first.jsonl")
    assert again.exit_code == 0, again.error and again.error.format()
    # The same files, the command's own (its uuid) included: it did not run again.
    assert again.value["repo"] == made["output"]
    [generated] = [t for t in events(again, "tool") if t["tool"] == "cli:generate"]
    assert generated["replayed"] is True
    [worker_call] = [c for c in events(again, "call") if c["slot"] == "worker"]
    assert worker_call["agent"]["restored"] is True and worker_call["output"]["made.txt"] == token
    assert worker_call["agent"]["changes"]["added"] == ["out/made.txt"]
    # and the reviewer's workspace held them: its listing names the command's file
    listed = next(t for t in events(again, "tool") if t["slot"] == "reviewer"
                  and t["tool"] == "list")
    assert "repo/made.txt" in listed["output"]
