"""Hostile data is an error, not a crash (issue 35): a model's reply, a trace, a row and the
outputs prose writes are each read or written within bounds, and what is past one is a
clear error (naming the file, row or call) with the paid call kept, never a traceback.
The real CLI against the loopback server.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest
from llm_server import FakeLLMServer, Reply

from prose.runtime.integrity import seal_path
from tests.conftest import run_prose, run_prose_in_process
from tests.loopback import ECHO_PATTERN, write_project

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

VERDICT_PATTERN = ECHO_PATTERN.replace(
    "  - ensures: an answer", "  - ensures: verdict object with `ok` (boolean), `n` (any)")

HOSTILE_REPLIES = {
    "a 5,000-digit integer": '{"ok": true, "n": ' + "7" * 5000 + "}",
    "JSON nested 100,000 deep": '{"ok": true, "n": ' + "[" * 100_000 + "]" * 100_000 + "}",
}


@pytest.mark.parametrize("reply", sorted(HOSTILE_REPLIES))
def test_a_hostile_reply_is_a_clear_error_and_its_paid_call_is_in_the_trace(
    tmp_path: Path, server: FakeLLMServer, reply: str
) -> None:
    server.enqueue("echo", *[Reply(HOSTILE_REPLIES[reply])] * 4)
    project = write_project(tmp_path, server, pattern=VERDICT_PATTERN)
    done = run_prose_in_process("run", "echo.prose.md", "--input", "task=t", "--trace",
                                "t.jsonl", "-q", cwd=project)
    assert done.code == 4, done.output
    assert "past a bound" in done.stderr and "internal error" not in done.stderr
    assert "echo.prose.md:" in done.stderr  # the call's place in the pattern
    events = [json.loads(line) for line in (project / "t.jsonl").read_text().splitlines()]
    calls = [e for e in events if e["type"] == "call"]
    assert len(calls) == 1 and calls[0]["error"] is not None
    assert calls[0]["requests"] == len(server.requests) >= 1  # what was paid is recorded
    assert calls[0]["usage"]["total_tokens"] > 0
    assert events[-1]["type"] == "run_end" and events[-1]["exit_code"] == 4


# --- traces whose fields have the wrong type --------------------------------------------

TRACE_EDITS = {  # line index (0: run_start, 1: the call, 2: run_end) -> field -> value
    "a call's line is text": (1, "line", "abc"),
    "a call's usage is text": (1, "usage", "lots"),
    "a call's usage counts are text": (1, "usage", {"prompt_tokens": "x", "total_tokens": "y"}),
    "a huge time": (0, "time", 1e300),
    "a time that is text": (1, "time", "yesterday"),
    "a latency that is text": (1, "latency_ms", "slow"),
    "totals that are text": (2, "totals", "x"),
    "inputs that are a list": (0, "inputs", [1, 2]),
}
TRACE_READERS = {  # command -> exit codes it may end with (never 70)
    "audit": {1},
    "stats": {0},
    "stats --json": {0},
    "report": {0},
    "export": {0},
    "run --resume": {1},
}


@pytest.fixture(scope="module")
def recorded_trace(tmp_path_factory: pytest.TempPathFactory,
                   module_server: FakeLLMServer) -> list[dict[str, object]]:
    """The events of one real run (run_start, call, run_end)."""
    module_server.reset()
    project = write_project(tmp_path_factory.mktemp("recorded"), module_server)
    done = run_prose_in_process("run", "echo.prose.md", "--input", "task=t", "--trace",
                                "t.jsonl", "-q", cwd=project)
    assert done.code == 0, done.output
    return [json.loads(line) for line in (project / "t.jsonl").read_text().splitlines()]


def _rewrite(events: list[dict[str, object]], path: Path) -> None:
    """Write `events` as a trace whose chain and seal are recomputed (as an editor who knew
    how would): only the field types are wrong."""
    lines: list[str] = []
    for event in events:
        event = {**event, "prev": hashlib.sha256(lines[-1].encode()).hexdigest()
                 if lines else None}
        lines.append(json.dumps(event))
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    seal_path(path).write_text(f"{hashlib.sha256(data).hexdigest()}  {path.name}\n")


@pytest.mark.parametrize("command", sorted(TRACE_READERS))
@pytest.mark.parametrize("edit", sorted(TRACE_EDITS))
def test_a_trace_with_fields_of_the_wrong_type_is_an_error_not_a_crash(
    tmp_path: Path, recorded_trace: list[dict[str, object]], command: str, edit: str
) -> None:
    index, name, value = TRACE_EDITS[edit]
    events = [dict(event) for event in recorded_trace]
    events[index][name] = value
    (tmp_path / "echo.prose.md").write_text(ECHO_PATTERN, encoding="utf-8")
    _rewrite(events, tmp_path / "t.jsonl")
    args = {"audit": ["audit", "t.jsonl"], "stats": ["stats", "t.jsonl"],
            "stats --json": ["stats", "--json", "t.jsonl"], "report": ["report", "t.jsonl"],
            "export": ["export", "t.jsonl", "ledger"],
            "run --resume": ["run", "echo.prose.md", "--resume", "t.jsonl", "--trace",
                             "again.jsonl"]}[command]
    done = run_prose_in_process(*args, cwd=tmp_path)
    assert done.code in TRACE_READERS[command], done.output
    assert "internal error" not in done.output
    line = f"line {index + 1} is not a valid trace event (its `{name}` is"
    if command in ("audit", "run --resume"):
        assert line in done.output
    elif command == "report":
        assert 'data-state="tampered"' in (tmp_path / "t.report.html").read_text()
    else:
        assert "the hash chain is broken" in done.stderr


def test_a_trace_past_its_size_bound_is_refused_unread(
    tmp_path: Path, recorded_trace: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from prose.runtime import integrity

    _rewrite([dict(event) for event in recorded_trace], tmp_path / "t.jsonl")
    monkeypatch.setattr(integrity, "MAX_TRACE_BYTES", 100)
    done = run_prose_in_process("audit", "t.jsonl", cwd=tmp_path)
    assert done.code == 2, done.output
    assert "the trace is larger than 100 bytes" in done.stderr


# --- outputs that cannot be written -----------------------------------------------------

def test_an_unwritable_trace_is_exit_2_before_anything_is_sent(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = write_project(tmp_path, server)
    done = run_prose_in_process("run", "echo.prose.md", "--input", "task=t", "--trace",
                                "/dev/full", cwd=project)
    assert done.code == 2, done.output
    assert "cannot write the trace /dev/full: No space left on device" in done.stderr
    assert server.requests == []


# --- rows and input files ----------------------------------------------------------------

def test_rows_from_a_fifo_are_read_once(tmp_path: Path, server: FakeLLMServer) -> None:
    project = write_project(tmp_path, server)
    fifo = project / "rows.jsonl"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("w", encoding="utf-8") as handle:
            handle.write('{"task": "a"}\n{"task": "b"}\n')

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    done = run_prose("batch", "echo.prose.md", "--inputs", "rows.jsonl", "--out",
                     "out.jsonl", "-q", cwd=project, timeout=120)
    writer.join(timeout=5)
    assert done.code == 0, done.output
    rows = (project / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(row)["status"] for row in rows] == ["ok", "ok"]


def test_rows_from_standard_input_run(tmp_path: Path, server: FakeLLMServer) -> None:
    project = write_project(tmp_path, server)
    rows = '{"task": "a"}\n{"task": "b"}\n{"task": "c"}\n'
    done = run_prose_in_process("batch", "echo.prose.md", "--inputs", "-", "--out",
                                "out.jsonl", "-q", cwd=project, input=rows)
    assert done.code == 0, done.output
    assert len((project / "out.jsonl").read_text(encoding="utf-8").splitlines()) == 3
    unnamed = run_prose_in_process("batch", "echo.prose.md", "--inputs", "-", "-q",
                                   cwd=project, input=rows)
    assert unnamed.code == 2 and "name the results file with --out" in unnamed.stderr


def test_a_5000_digit_number_in_a_row_names_the_file_and_the_row(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = write_project(tmp_path, server)
    (project / "rows.jsonl").write_text(
        '{"task": "a"}\n{"task": ' + "9" * 5000 + "}\n", encoding="utf-8")
    done = run_prose_in_process("batch", "echo.prose.md", "--inputs", "rows.jsonl", "-q",
                                cwd=project)
    assert done.code == 1, done.output
    assert "rows.jsonl:2: row 1: the JSON is past a bound" in done.stderr
    assert server.requests == []


def test_a_json_input_file_stops_at_the_yaml_bound(tmp_path: Path, server: FakeLLMServer) -> None:
    from prose.bounded import MAX_TEXT

    project = write_project(tmp_path, server)
    (project / "big.json").write_text(json.dumps("x" * MAX_TEXT), encoding="utf-8")
    done = run_prose_in_process("run", "echo.prose.md", "--input-file", "task=big.json",
                                cwd=project)
    assert done.code == 1, done.output
    assert f"big.json:1:{MAX_TEXT + 1}: the file is longer than {MAX_TEXT:,} bytes" \
        in done.stderr
    assert server.requests == []
