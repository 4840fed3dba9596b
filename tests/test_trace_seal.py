"""A closed trace is sealed, so `prose audit` also vouches for its last line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.conftest import ROOT, run_prose


def _run(tmp_path: Path) -> Path:
    trace = tmp_path / "trace.jsonl"
    script = tmp_path / "script.yaml"
    script.write_text('slots:\n  proposer: ["a plan"]\n  adversary: ["a flaw"]\n', encoding="utf-8")
    result = run_prose("run", str(ROOT / "patterns" / "proposer-adversary.prose.md"), "--script",
                       str(script), "--input", "task_brief=x", "--trace", str(trace), "--json")
    assert result.code == 0, result.output
    return trace


def test_the_seal_is_the_files_sha256(tmp_path: Path) -> None:
    trace = _run(tmp_path)
    seal = (tmp_path / "trace.jsonl.sha256").read_text(encoding="utf-8")
    assert seal == f"{hashlib.sha256(trace.read_bytes()).hexdigest()}  trace.jsonl\n"
    assert run_prose("audit", str(trace)).code == 0


def test_editing_the_last_line_is_caught_by_the_seal(tmp_path: Path) -> None:
    trace = _run(tmp_path)
    lines = trace.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    assert last["type"] == "run_end"
    last["status"] = "blocked" if last["status"] != "blocked" else "ok"
    lines[-1] = json.dumps(last)
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    audited = run_prose("audit", str(trace))
    assert audited.code == 1, audited.output
    assert "seal" in audited.stdout


def test_a_trace_without_a_seal_is_audited_with_a_note(tmp_path: Path) -> None:
    trace = _run(tmp_path)
    (tmp_path / "trace.jsonl.sha256").unlink()
    audited = run_prose("audit", str(trace))
    assert audited.code == 0, audited.output
    assert "no seal" in audited.stdout
