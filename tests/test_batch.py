"""`prose batch` with the local executor, end to end against a loopback OpenAI-compatible
server: rows in order, failing rows, the batch's budget, --fail-fast, rows and columns
checked before anything runs, and kill -9 mid-batch then --resume (counted at the server).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prose.cli.main import cli
from prose.runtime.trace import read_events
from tests.chat_stub import ChatStub, completion, failure, serving

TWO_CALLS = """---
name: draft-check
kind: pattern
version: 0.1.0
---

# Draft and check

Two calls in a row.

### Slots

- `drafter`
  - ensures: a draft
- `checker`
  - ensures: a checked answer

### Invariants

- none

### Parameters

- `task`: string -- the task
- `tone`: string -- (optional, default "plain") the tone

### Returns

- `answer`: the checked answer

### Delegation

```prose
let draft = call drafter
  task: task
  tone: tone
let checked = call checker
  draft: draft
return { answer: checked }
```
"""

HANG_S = 30.0


class Stub(ChatStub):
    """Answers `seen<SECOND LINE>` (the first input's value) after `latency` seconds; a
    request whose text has `FAIL` gets a 400; the checker's request for a `HANG` row is
    held while `hang` is set. Counts the requests in flight."""

    def __init__(self, latency: float = 0.0) -> None:
        super().__init__()
        self.latency = latency
        self.in_flight = 0
        self.max_in_flight = 0
        self.hang = threading.Event()

    def respond(self, user: str) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.received.append(user)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency:
                time.sleep(self.latency)
            if "seen<" in user and "HANG" in user and self.hang.is_set():
                self.stop.wait(HANG_S)
            if "FAIL" in user:
                return 400, failure("bad row", "bad", "invalid_request")
            return 200, completion("seen<" + [*user.split("\n"), ""][1] + ">")
        finally:
            with self.lock:
                self.in_flight -= 1


@pytest.fixture
def stub() -> Iterator[Stub]:
    yield from serving(Stub())


def project(tmp_path: Path, stub: Stub, rows: list[dict[str, Any]] | None = None) -> Path:
    (tmp_path / "draft-check.prose.md").write_text(TWO_CALLS)
    (tmp_path / "prose.yaml").write_text(textwrap.dedent(f"""
        model_list:
          - model_name: stub
            litellm_params: {{model: openai/stub, api_base: "{stub.base_url}", api_key: sk-test}}
        default_model: stub
        retries: 0
        timeout_s: 60
        """))
    if rows is not None:
        with (tmp_path / "rows.jsonl").open("w") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
    return tmp_path


def batch(tmp_path: Path, *args: str) -> Any:
    """`prose batch` in this process, in `tmp_path`."""
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return CliRunner().invoke(cli, ["batch", "draft-check.prose.md", *args])
    finally:
        os.chdir(cwd)


def results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stderr(result: Any) -> str:
    return str(getattr(result, "stderr", "") or result.output)


def test_rows_run_in_input_order_and_a_failing_row_does_not_stop_the_others(
    tmp_path: Path, stub: Stub
) -> None:
    rows = [{"task": f"t{i}" + (" FAIL" if i % 10 == 3 else "")} for i in range(60)]
    project(tmp_path, stub, rows)
    done = batch(tmp_path, "--inputs", "rows.jsonl", "--out", "out.jsonl", "--json",
                 "--concurrency", "6")
    assert done.exit_code == 1, stderr(done)  # some rows failed
    lines = results(tmp_path / "out.jsonl")
    assert [line["row"] for line in lines] == list(range(60))
    for i, line in enumerate(lines):
        if i % 10 == 3:
            assert line["status"] == "error"
            assert line["error"]["kind"] and line["result"] is None
            assert line["calls"] == 1
        else:
            assert line["status"] == "ok", line
            assert line["result"] == {"answer": f"seen<seen<t{i}>>"}
            assert (line["calls"], line["tokens"]) == (2, 18)
        trace = tmp_path / line["trace"]
        assert [e["type"] for e in read_events(trace)][-1] == "run_end"
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["event"] == "summary"
    assert (summary["rows"], summary["rows_ok"], summary["rows_failed"]) == (60, 54, 6)
    assert summary["calls"] == 54 * 2 + 6 == len(stub.received)
    assert summary["tokens"] == 54 * 18
    progress = [json.loads(line) for line in stderr(done).splitlines() if line.startswith("{")]
    assert progress and progress[-1]["rows_done"] == 60


def test_the_local_executor_syncs_its_traces_with_the_results_not_row_by_row(
    tmp_path: Path, stub: Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An fsync per row's trace would hold the calls in flight back; the results file
    syncs the traces' file system (`syncfs`) before each of its own fsyncs instead."""
    from prose.batch import output

    real_fsync, fsynced = os.fsync, []
    real_sync, synced_folders = output.sync_file_system, []

    def fsync(fd: int) -> None:
        status = os.fstat(fd)
        fsynced.append((status.st_dev, status.st_ino))
        real_fsync(fd)

    def sync_file_system(folder: Path) -> bool:
        done = real_sync(folder)
        synced_folders.append((Path(folder).resolve(), done))
        return done

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(output, "sync_file_system", sync_file_system)
    project(tmp_path, stub, [{"task": f"t{i}"} for i in range(20)])
    done = batch(tmp_path, "--inputs", "rows.jsonl", "--out", "out.jsonl", "-q")
    assert done.exit_code == 0, stderr(done)
    lines = results(tmp_path / "out.jsonl")
    traces = [tmp_path / line["trace"] for line in lines]
    assert len(traces) == 20 and all(trace.is_file() for trace in traces)
    rows_synced = {(t.stat().st_dev, t.stat().st_ino) for t in traces} & set(fsynced)
    assert not rows_synced
    out = (tmp_path / "out.jsonl").stat()
    assert (out.st_dev, out.st_ino) in fsynced
    assert synced_folders and all(folder == traces[0].parent.parent for folder, _ in synced_folders)
    if sys.platform.startswith("linux"):
        assert synced_folders[-1][1]  # syncfs ran


def test_the_batch_budget_holds_across_rows(tmp_path: Path, stub: Stub) -> None:
    project(tmp_path, stub, [{"task": f"t{i}"} for i in range(30)])
    done = batch(tmp_path, "--inputs", "rows.jsonl", "--max-calls", "10", "--concurrency", "1",
                 "-q")
    assert done.exit_code == 3, stderr(done)
    lines = results(tmp_path / "rows.results.jsonl")
    assert len(lines) == 30 and len(stub.received) == 10
    # Rows run side by side, so the 10 calls may go to more than 5 rows; never an 11th.
    assert {line["status"] for line in lines} <= {"ok", "budget"}
    assert sum(line["calls"] for line in lines) == 10
    assert sum(line["status"] == "budget" for line in lines) >= 25
    stopped = [line for line in lines if line["status"] == "budget"]
    assert all(line["error"]["kind"] == "budget" for line in stopped)


def test_fail_fast_stops_at_the_first_failing_row(tmp_path: Path, stub: Stub) -> None:
    rows = [{"task": "t0"}, {"task": "t1 FAIL"}] + [{"task": f"t{i}"} for i in range(2, 200)]
    project(tmp_path, stub, rows)
    done = batch(tmp_path, "--inputs", "rows.jsonl", "--fail-fast", "--concurrency", "1", "-q")
    assert done.exit_code == 1
    lines = results(tmp_path / "rows.results.jsonl")
    assert [line["status"] for line in lines[:2]] == ["ok", "error"]
    assert len(lines) < 200


def test_unknown_and_missing_columns_fail_before_anything_runs(tmp_path: Path, stub: Stub) -> None:
    project(tmp_path, stub, [{"task": "a"}, {"task": "b", "colour": "red"}])
    done = batch(tmp_path, "--inputs", "rows.jsonl")
    assert done.exit_code == 1
    assert ("rows.jsonl:2: row 1: column `colour` is not a parameter of the pattern "
            "(parameters: `task`, `tone`)") in stderr(done)
    assert stub.received == [] and not (tmp_path / "rows.results.jsonl").exists()
    (tmp_path / "rows.jsonl").write_text('{"task": "a"}\n\n{"tone": "dry"}\n')
    done = batch(tmp_path, "--inputs", "rows.jsonl")
    assert done.exit_code == 1
    assert "rows.jsonl:3: row 1: missing column `task`" in stderr(done)
    (tmp_path / "rows.csv").write_text("question,tone\nwhat?,dry\n")
    done = batch(tmp_path, "--inputs", "rows.csv")
    assert "rows.csv:1: column `question` is not a parameter" in stderr(done)
    assert "Traceback" not in stderr(done) and stub.received == []


def test_csv_columns_map_to_parameters(tmp_path: Path, stub: Stub) -> None:
    project(tmp_path, stub)
    (tmp_path / "rows.csv").write_text('question,note\n"what, really?",x\nwhy,y\n')
    done = batch(tmp_path, "--inputs", "rows.csv", "--map", "question=task", "--map", "note=",
                 "--input", "tone=dry", "-q")
    assert done.exit_code == 0, stderr(done)
    lines = results(tmp_path / "rows.results.jsonl")
    assert [line["result"]["answer"] for line in lines] == [
        "seen<seen<what, really?>>", "seen<seen<why>>"]
    assert any("## tone\ndry" in text for text in stub.received)


def test_an_existing_results_file_needs_resume(tmp_path: Path, stub: Stub) -> None:
    project(tmp_path, stub, [{"task": "a"}])
    assert batch(tmp_path, "--inputs", "rows.jsonl", "-q").exit_code == 0
    done = batch(tmp_path, "--inputs", "rows.jsonl", "-q")
    assert done.exit_code == 2
    assert "rows.results.jsonl exists: continue that batch with --resume" in stderr(done)
    again = batch(tmp_path, "--inputs", "rows.jsonl", "-q", "--resume")
    assert again.exit_code == 0 and len(stub.received) == 2  # finished rows never run again


def test_the_local_executor_never_imports_ray(tmp_path: Path, stub: Stub) -> None:
    project(tmp_path, stub, [{"task": "a"}])
    code = ("import sys\nfrom prose.cli.main import main\n"
            "try:\n    main(['batch', 'draft-check.prose.md', '--inputs', 'rows.jsonl', '-q'])\n"
            "except SystemExit as e:\n    assert e.code == 0, e.code\n"
            "assert 'ray' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _seals(traces: Path) -> int:
    return sum(1 for _ in traces.glob("*/*.jsonl.sha256"))


def test_kill_9_mid_batch_then_resume_resends_no_finished_call(tmp_path: Path, stub: Stub) -> None:
    """100 rows, two calls each (one for a FAIL row); row 20's second call hangs, so rows
    0-19 are written, rows 21-83 (the window) finish but wait, 84+ have not started."""
    count, hang_row = 100, 20
    rows = []
    for i in range(count):
        task = f"t{i}" + (" FAIL" if i % 17 == 5 else "") + (" HANG" if i == hang_row else "")
        rows.append({"task": task})
    project(tmp_path, stub, rows)
    stub.hang.set()
    out, traces = tmp_path / "out.jsonl", tmp_path / "out.traces"
    command = [sys.executable, "-c", "from prose.cli.main import main; main()", "batch",
               "draft-check.prose.md", "--inputs", "rows.jsonl", "--out", "out.jsonl",
               "--concurrency", "4", "-q"]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    window = 64  # max(4 * concurrency, 64)
    try:
        deadline = time.monotonic() + 90
        while _seals(traces) < window - 1 + hang_row and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
        assert _seals(traces) == window - 1 + hang_row  # every row but the held one, in the window
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert len(results(out)) == hang_row  # written in order: up to the held row
    finished = set()  # the calls the killed batch finished, by the text they sent
    for trace in traces.glob("*/*.jsonl"):
        for event in read_events(trace):
            if event.get("type") == "call" and event.get("error") is None:
                finished.add(event["messages"][-1]["content"])
    before = len(stub.received)
    stub.hang.clear()
    done = subprocess.run([*command, "--resume", "--json"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # the FAIL rows
    resent = [text for text in stub.received[before:] if text in finished]
    assert resent == []
    # Only the held row's second call, and the rows never started, were sent again.
    sent_after = stub.received[before:]
    assert f"## draft\nseen<t{hang_row} HANG>" in sent_after
    assert f"## task\nt{hang_row} HANG" not in sent_after
    repeats = Counter(stub.received)
    assert [text for text, n in repeats.items() if n > 1] == [f"## draft\nseen<t{hang_row} HANG>"]
    lines = results(out)
    assert [line["row"] for line in lines] == list(range(count))
    for i, line in enumerate(lines):
        assert line["status"] == ("error" if i % 17 == 5 else "ok"), line
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["rows_resumed"] == hang_row
    assert summary["rows"] == count
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    again = subprocess.run([*command, "--resume"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 1
    assert hashlib.sha256(out.read_bytes()).hexdigest() == digest  # nothing left to run
    assert len(stub.received) == len(repeats.keys()) + 1
