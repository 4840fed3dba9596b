"""examples/code-review/: two reviewers with tools find a planted bug by running its tests.

The example runs as a user runs it (`prose run INSTANCE --script SCRIPT`): the scripted
turns list and read files and run the declared `pytest` in each reviewer's sealed
workspace, for real; reviewer B never sees A's verdict; the run exits 0, `prose audit`
passes, `prose stats` counts the tool calls and `prose report` shows them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, Result, run_prose_in_process

from prose.runtime.sandbox import NO_SANDBOX_ENV, isolation_mode

EXAMPLE = ROOT / "examples" / "code-review"


def events(trace: Path, kind: str) -> list[dict[str, Any]]:
    lines = trace.read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    folder = tmp_path_factory.mktemp("code-review")
    trace = folder / "trace.jsonl"
    result = run_prose_in_process("run", str(EXAMPLE / "code-review.yaml"), "--script",
                                  str(EXAMPLE / "code-review.script.yaml"), "--json",
                                  "--trace", str(trace), cwd=folder)
    return result, trace


def test_the_instance_holds_the_repository_as_it_is_on_disk() -> None:
    data = yaml.safe_load((EXAMPLE / "code-review.yaml").read_text(encoding="utf-8"))
    repo = EXAMPLE / "repo"
    on_disk = {path.relative_to(repo).as_posix(): path.read_text(encoding="utf-8")
               for path in sorted(repo.rglob("*.py")) if "__pycache__" not in path.parts}
    assert data["inputs"]["repo"] == on_disk


def test_the_reviewers_find_the_bug_by_running_the_tests(ran: tuple[Result, Path]) -> None:
    result, trace = ran
    assert result.code == 0, result.output
    value = json.loads(result.stdout)
    assert value["status"] == "complete" and value["versions"] == 2
    tools = events(trace, "tool")
    first_a = [t for t in tools if t["slot"] == "reviewer_a"][:3]
    assert [t["tool"] for t in first_a] == ["list", "read", "cli:pytest"]
    assert "repo/inventory.py" in first_a[0]["output"]
    assert "items[1:]" in first_a[1]["output"]
    run = first_a[2]
    assert run["arguments"] == {"target": "repo"}
    assert "1 failed, 1 passed" in run["output"] and "exit code: 1" in run["output"]
    assert run["isolation"] == isolation_mode() and run["duration_ms"] > 0
    assert all(t["error"] is None for t in tools)
    # the revision passes: each reviewer's last pytest run
    assert ["2 passed" in t["output"] for t in tools if t["tool"] == "cli:pytest"] == [
        False, False, True, True]


def test_b_never_sees_a_and_the_worker_sees_the_findings(ran: tuple[Result, Path]) -> None:
    trace = ran[1]
    calls = events(trace, "call")
    for call in calls:
        if call["slot"] == "reviewer_b":
            assert "reviewer_a" not in call["provenance"]
            sent = json.dumps(call["messages"])
            assert "skipping the first line item" not in sent
    [worker] = [c for c in calls if c["slot"] == "worker"]
    assert "skipping the first line item" in json.dumps(worker["messages"])


def test_audit_stats_and_report_show_the_tool_calls(ran: tuple[Result, Path]) -> None:
    trace = ran[1]
    audited = run_prose_in_process("audit", str(trace))
    assert audited.code == 0, audited.output
    assert "audit: 0 findings" in audited.stdout
    stats = run_prose_in_process("stats", str(trace))
    assert stats.code == 0, stats.output
    assert "tool calls:" in stats.stdout
    row = next(line for line in stats.stdout.splitlines() if line.startswith("cli:pytest"))
    assert row.split()[:3] == ["cli:pytest", "4", "0"]
    report = run_prose_in_process("report", str(trace))
    assert report.code == 0, report.output
    page = (trace.parent / "report.html").read_text(encoding="utf-8")
    assert '"tools":[{"tool":"list"' in page and "1 failed, 1 passed" in page


def test_without_bubblewrap_the_trace_says_context_only(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    result = run_prose_in_process("run", str(EXAMPLE / "code-review.yaml"), "--script",
                                  str(EXAMPLE / "code-review.script.yaml"), "--json", "--trace",
                                  str(trace), cwd=tmp_path, env={NO_SANDBOX_ENV: "1"})
    assert result.code == 0, result.output
    runs = [t for t in events(trace, "tool") if t["tool"] == "cli:pytest"]
    assert {t["isolation"] for t in runs} == {"context-only"}
    assert "1 failed, 1 passed" in runs[0]["output"]
    refused = run_prose_in_process("run", str(EXAMPLE / "code-review.yaml"), "--script",
                                   str(EXAMPLE / "code-review.script.yaml"), "--require-sandbox",
                                   cwd=tmp_path, env={NO_SANDBOX_ENV: "1"})
    assert refused.code == 2, refused.output
