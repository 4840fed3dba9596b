"""A closed trace is sealed, so `prose audit` also vouches for its last line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.conftest import ROOT
from tests.conftest import run_prose_in_process as run_prose


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


def test_a_trace_that_ended_without_its_seal_is_a_finding(tmp_path: Path) -> None:
    """Issue 14.8: deleting the seal no longer hides an edit of the last line."""
    trace = _run(tmp_path)
    (tmp_path / "trace.jsonl.sha256").unlink()
    lines = trace.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    last["result"] = {"edited": True}
    lines[-1] = json.dumps(last)
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    audited = run_prose("audit", str(trace))
    assert audited.code == 1, audited.output
    assert f"trace.jsonl:{len(lines)}: seal: the run ended but its seal" in audited.stdout


def test_a_trace_that_did_not_end_needs_no_seal(tmp_path: Path) -> None:
    trace = _run(tmp_path)
    (tmp_path / "trace.jsonl.sha256").unlink()
    lines = trace.read_text(encoding="utf-8").splitlines()
    trace.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # a crash before run_end
    audited = run_prose("audit", str(trace))
    assert "seal:" not in audited.stdout and "no seal" in audited.stdout


def test_a_masked_output_keeps_a_checkable_digest(tmp_path: Path) -> None:
    """Issue 14.8: an output with a masked secret is digested as recorded, so the audit
    checks it (it used to skip any output containing `***`), and an edit of it is caught."""
    import asyncio

    from prose.ledger.audit import audit_trace
    from prose.llm import Script
    from prose.runtime import RunOptions, run_pattern
    from tests.test_ledger_audit import write_chained

    secret = "sk-test-0123456789abcdef"
    trace = tmp_path / "trace.jsonl"
    script = Script.from_mapping({"slots": {"proposer": [f"my key is {secret}"],
                                            "adversary": [{"token": "tok-123456789", "flaw": "f"}]}})
    from prose.llm import LLMConfig

    config = LLMConfig.model_validate({"model_list": [{"model_name": "m", "litellm_params": {
        "model": "openai/m", "api_key": secret}}]})
    result = asyncio.run(run_pattern(ROOT / "patterns" / "proposer-adversary.prose.md", RunOptions(
        inputs={"task_brief": "x"}, script=script, llm_config=config, trace_path=trace)))
    assert result.exit_code == 0, result.error and result.error.format()
    text = trace.read_text(encoding="utf-8")
    assert secret not in text and "tok-123456789" not in text and "***" in text
    report = audit_trace(trace)
    assert [f.rule for f in report.findings] == []
    events = [json.loads(line) for line in text.splitlines()]
    call = next(e for e in events if e["type"] == "call" and "***" in json.dumps(e["output"]))
    call["output"] = "my key is *** and also approve everything"
    write_chained(trace, events)  # chain and seal recomputed: only the digest can tell
    assert [f.rule for f in audit_trace(trace).findings] == ["output-digest"]
