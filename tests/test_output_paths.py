"""An output never destroys what a command reads, nor another run's trace, nor a result's
meaning (issue 36, red team): `--trace` and `report -o` refuse a file the command reads, a
trace is never written through a link and belongs to one live run; `--resume` keeps the
inputs its trace records; `prose batch --resume` never keeps a result for other inputs.
The real CLI in a new interpreter, real files (`prose.output_paths` is the rule).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_prose

PATTERN = """---
name: p
kind: pattern
version: 0.1.0
---

# P

Echo.

### Slots

- `worker` (primary)
  - requires: task_brief
  - ensures: result text

### Parameters

- `task_brief`: string -- the task

### Returns

- `result`: the result

### Delegation

```prose
let result = call worker
  task_brief: task_brief
return { result: result }
```
"""

WORKER = """import pathlib, time
def work(task_brief: str) -> str:
    if task_brief == "slow":  # holds its run until the test lets it go
        pathlib.Path("started").write_text("yes")
        for _ in range(1200):
            if pathlib.Path("release").exists():
                break
            time.sleep(0.05)
    return "done: " + task_brief
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "p.prose.md").write_text(PATTERN, encoding="utf-8")
    (tmp_path / "p.script.yaml").write_text('slots:\n  worker: ["ok"]\n', encoding="utf-8")
    (tmp_path / "worker_fn.py").write_text(WORKER, encoding="utf-8")
    (tmp_path / "brief.txt").write_text("the brief\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("trace", "what"), [("p.prose.md", "the target"),
                                             ("p.script.yaml", "the script"),
                                             ("brief.txt", "the input file of `task_brief`")])
def test_a_trace_may_not_be_a_file_the_run_reads(tmp_path: Path, trace: str, what: str) -> None:
    project = _project(tmp_path)
    before = (project / trace).read_bytes()
    done = run_prose("run", "p.prose.md", "--script", "p.script.yaml", "--input-file",
                     "task_brief=brief.txt", "--trace", trace, "-q", cwd=project)
    assert done.code == 2, done.stderr
    assert f"error: --trace {trace} is {what} {trace}: the trace needs a file of its own" in (
        done.stderr)
    assert (project / trace).read_bytes() == before


def test_a_trace_that_is_a_symbolic_link_is_refused_and_its_target_kept(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "precious.txt").write_text("keep me\n", encoding="utf-8")
    (project / "t.jsonl").symlink_to("precious.txt")
    done = run_prose("run", "p.prose.md", "--script", "p.script.yaml", "--input",
                     "task_brief=x", "--trace", "t.jsonl", "-q", cwd=project)
    assert done.code == 2, done.stderr
    assert "cannot write the trace t.jsonl: it is a symbolic link, not followed" in done.stderr
    assert (project / "precious.txt").read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize(("output", "what"), [("t.jsonl", "the trace"),
                                              ("p.prose.md", "the run's pattern")])
def test_a_report_may_not_overwrite_the_trace_or_the_pattern_it_reads(
    tmp_path: Path, output: str, what: str
) -> None:
    project = _project(tmp_path)
    ran = run_prose("run", "p.prose.md", "--script", "p.script.yaml", "--input", "task_brief=x",
                    "--trace", "t.jsonl", "-q", cwd=project)
    assert ran.code == 0, ran.stderr
    before = (project / output).read_bytes()
    done = run_prose("report", "t.jsonl", "-o", output, cwd=project)
    assert done.code == 2, done.stderr
    assert f"error: -o {output} is {what} {output}: the page needs a file of its own" in (
        done.stderr)
    assert (project / output).read_bytes() == before


def test_a_trace_another_live_run_writes_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    command = [sys.executable, "-c", "from prose.cli.main import main; main()", "run",
               "p.prose.md", "--bind", "worker=python:worker_fn:work", "--trace", "same.jsonl",
               "-q", "--json", "--input"]
    first = subprocess.Popen([*command, "task_brief=slow"], cwd=project, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (project / "started").exists():  # the first run holds its trace
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.05)
        second = run_prose(*command[3:], "task_brief=fast", cwd=project)
        (project / "release").write_text("go", encoding="utf-8")
        out, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert second.code == 2, second.stderr
    assert ("cannot write the trace same.jsonl: another process is writing it" in second.stderr)
    assert first.returncode == 0, err
    assert json.loads(out) == {"result": "done: slow"}
    audit = run_prose("audit", "same.jsonl", cwd=project)
    assert audit.code == 0, audit.stdout + audit.stderr


def _waiting_refund(tmp_path: Path) -> tuple[Path, str, str]:
    """The person-approved refund of examples/ run with another task: waiting (exit 6)."""
    for name in ("approval-gate-person.yaml", "approval-gate.script.yaml", "refund_desk.py"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    instance = tmp_path / "approval-gate-person.yaml"
    instance.write_text(instance.read_text(encoding="utf-8").replace(
        "../patterns/", f"{ROOT / 'patterns'}/"), encoding="utf-8")
    first = run_prose("run", "approval-gate-person.yaml", "--script",
                      "approval-gate.script.yaml", "--input", "task_brief=Order 7: refund 5 EUR",
                      "--no-ask", "-q", cwd=tmp_path, input="")
    assert first.code == 6, first.stderr
    then = next(line for line in first.stderr.splitlines() if line.startswith("then:"))
    [run] = [p.name for p in (tmp_path / ".prose" / "runs").iterdir()]
    return tmp_path, run, then.removeprefix("then:").strip()


def test_resume_keeps_the_inputs_the_run_started_with(tmp_path: Path) -> None:
    project, run, then = _waiting_refund(tmp_path)
    assert "--input" not in then  # the printed command stays short
    answered = run_prose("answer", run, "c2", "--value", '{"approved": true, "reason": "ok"}',
                         "--as", "carol", cwd=project)
    assert answered.code == 0, answered.stderr
    args = then.split()[2:]  # prose run ...
    resumed = run_prose("run", *args, "--trace", "resumed.jsonl", "--json", cwd=project)
    assert resumed.code == 0, resumed.stderr
    events = [json.loads(line) for line in
              (project / "resumed.jsonl").read_text(encoding="utf-8").splitlines()]
    assert events[0]["inputs"] == {"task_brief": "Order 7: refund 5 EUR"}
    calls = [e for e in events if e["type"] == "call"]
    assert [c["slot"] for c in calls if c["cache_hit"]] == ["proposer"]  # not paid twice
    assert json.loads(resumed.stdout)["reason"] == "ok"  # the person's answer is the one used


def test_resume_refuses_an_input_other_than_the_recorded_one(tmp_path: Path) -> None:
    project, _, then = _waiting_refund(tmp_path)
    args = then.split()[2:]
    again = run_prose("run", *args, "--input", "task_brief=another task", cwd=project)
    assert again.code == 2, again.stderr
    assert "error: --input task_brief: the run to resume" in again.stderr
    assert "recorded another value: a resumed run keeps the inputs it started with" in (
        again.stderr)
    same = run_prose("run", *args, "--input", "task_brief=Order 7: refund 5 EUR", "--no-ask",
                     "-q", cwd=project, input="")
    assert same.code == 6, same.stderr  # the same input is accepted: it waits again


def test_batch_resume_runs_again_the_rows_whose_inputs_changed(tmp_path: Path) -> None:
    project = _project(tmp_path)
    rows = project / "rows.jsonl"
    rows.write_text("".join(json.dumps({"task_brief": t}) + "\n" for t in "abc"), encoding="utf-8")
    batch = ["batch", "p.prose.md", "--bind", "worker=python:worker_fn:work", "--inputs",
             "rows.jsonl", "--out", "res.jsonl"]
    first = run_prose(*batch, "-q", cwd=project)
    assert first.code == 0, first.stderr
    rows.write_text("".join(json.dumps({"task_brief": t}) + "\n" for t in ["new", "a", "b", "c"]),
                    encoding="utf-8")
    resumed = run_prose(*batch, "--resume", "--json", cwd=project)
    assert resumed.code == 0, resumed.stderr
    lines = [json.loads(line) for line in
             (project / "res.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["result"]["result"] for line in lines] == [
        "done: new", "done: a", "done: b", "done: c"]
    summary = json.loads(resumed.stdout.splitlines()[-1])
    assert summary["rows_rerun_inputs_changed"] == 3 and summary["rows_resumed"] == 0
    # Unchanged, a resume keeps every row.
    again = run_prose(*batch, "--resume", "--json", cwd=project)
    assert json.loads(again.stdout.splitlines()[-1])["rows_resumed"] == 4
