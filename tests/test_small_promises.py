"""The smaller promises of issue 35: an instance file can set a slot's `max_tokens` (the
truncation warning tells users to raise it), the report marks replies cut at the token cap,
and a reader that goes away (`prose test ... | head -1`) is not a bug (exit 141, as a
process killed by SIGPIPE, never 70). Against the loopback server.

A scripted reply of the wrong type is re-asked once and the re-ask takes the slot's next
scripted reply: that is the documented behaviour (docs/testing.md, "A reply that fails the
call's schema is asked again once"), held by `test_schema_reask_takes_the_next_entry`
(tests/test_llm_scripted.py) and `test_a_scripted_reply_that_fails_its_schema_says_so`
(tests/test_newcomer.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import FakeLLMServer, Reply

from tests.conftest import ROOT, run_prose_in_process
from tests.loopback import write_project

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")


def _instance(project: Path, binding: str) -> None:
    (project / "capped.yaml").write_text(
        f"pattern: echo.prose.md\nwith:\n  worker: {binding}\ninputs:\n  task: t\n",
        encoding="utf-8")


def test_an_instance_sets_a_slots_max_tokens_and_the_report_marks_the_cut_reply(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    server.enqueue("echo", Reply("a reply that stopped mid-", finish_reason="length"))
    project = write_project(tmp_path, server)
    _instance(project, "{ model: fast, max_tokens: 7 }")
    done = run_prose_in_process("run", "capped.yaml", "--trace", "t.jsonl", "--report",
                                cwd=project)
    assert done.code == 0, done.output
    (request,) = server.requests
    assert request.body["max_tokens"] == 7
    assert "the reply stopped at the token cap (finish_reason: length); raise the slot's " \
        "max_tokens" in done.stderr
    page = (project / "t.report.html").read_text(encoding="utf-8")
    assert "cut at the token cap" in page and "1 reply (raise the slot&#x27;s max_tokens)" in page
    call = next(json.loads(line) for line in (project / "t.jsonl").read_text().splitlines()
                if json.loads(line)["type"] == "call")
    assert call["finish_reason"] == "length"


@pytest.mark.parametrize("value", ["0", "-3", "lots", "1.5"])
def test_a_max_tokens_that_is_no_cap_is_an_instance_error(
    tmp_path: Path, server: FakeLLMServer, value: str
) -> None:
    project = write_project(tmp_path, server)
    _instance(project, f"{{ model: fast, max_tokens: {value} }}")
    done = run_prose_in_process("run", "capped.yaml", cwd=project)
    assert done.code == 1, done.output
    assert "`max_tokens` of `worker` must be a whole number from 1" in done.output
    assert server.requests == []


def test_a_report_without_cut_replies_shows_no_cut_card(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = write_project(tmp_path, server)
    done = run_prose_in_process("run", "echo.prose.md", "--input", "task=t", "--trace",
                                "t.jsonl", "--report", cwd=project)
    assert done.code == 0, done.output
    assert "cut at the token cap</" not in (project / "t.report.html").read_text()


def test_a_reader_that_goes_away_is_not_a_bug() -> None:
    """`prose test ... | head -1`: the reader has gone before prose writes (the read end of
    its stdout is closed), so the first write fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from prose.cli.main import main; main()", "test",
             "examples/dialectic.test.yaml"],
            stdout=write, stderr=subprocess.PIPE, cwd=ROOT, timeout=300, check=False)
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert b"internal error" not in done.stderr and b"Traceback" not in done.stderr


def test_a_broken_pipe_is_reported_as_sigpipe_not_as_a_bug() -> None:
    """The one place every command's unhandled error goes (`unexpected_error`)."""
    from prose.cli.inputs import EXIT_BROKEN_PIPE, unexpected_error

    saved = os.dup(sys.stdout.fileno())
    try:
        assert unexpected_error(BrokenPipeError(32, "Broken pipe")) == EXIT_BROKEN_PIPE == 141
    finally:
        os.dup2(saved, sys.stdout.fileno())
        os.close(saved)
