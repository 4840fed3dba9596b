"""Hostile data is an error, not a crash (issue 35): a model's reply, a trace, a row and the
outputs prose writes are each read or written within bounds, and what is past one is a
clear error (naming the file, row or call) with the paid call kept, never a traceback.
The real CLI against the loopback server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_server import FakeLLMServer, Reply

from tests.conftest import run_prose_in_process
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
