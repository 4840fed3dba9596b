"""Interrupts seal (issue 35): Ctrl-C (SIGINT) at any point of `prose run`, a lone call in
flight included, leaves a trace that ends with `run_end` and has its seal, and the
`resume:` command prose prints is accepted. A real `prose` process and the loopback
server, which holds the call in flight until the test has sent the signal.
"""

from __future__ import annotations

import json
import shlex
import signal
import time
from pathlib import Path

import pytest
from llm_server import Delay, FakeLLMServer, Reply

from prose.ledger.audit import audit_trace
from prose.runtime.integrity import check_trace, seal_path
from tests.conftest import run_prose_in_process
from tests.loopback import (
    ROUNDS_PATTERN,
    ctrl_c_as_in_a_terminal,
    prose_process,
    wait_for_requests,
    write_project,
)

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")


def _interrupt(project: Path, server: FakeLLMServer, pattern: str, requests: int,
               *extra: str, again_after: float | None = None) -> tuple[int, str]:
    """Start `prose run PATTERN`, send SIGINT once the server holds request `requests`
    (0: half a second after the process starts), and again `again_after` seconds later (an impatient
    user), and return its exit code and stderr."""
    process = prose_process("run", pattern, "--input", "task=t", *extra, cwd=project,
                            preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        if requests:
            wait_for_requests(server, requests)
            time.sleep(0.2)  # the call is in flight: sent, its reply held by the server
        else:
            time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        if again_after is not None:
            time.sleep(again_after)
            process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, stderr.decode("utf-8", "replace")


def _resume_and_finish(project: Path, stderr: str) -> None:
    """The trace named on stderr is sealed and audits clean; the printed `resume:` runs."""
    assert "Traceback" not in stderr, stderr
    if "resume:" not in stderr:  # stopped before the run started: nothing to resume
        assert "interrupted before the run started" in stderr, stderr
        return
    trace = Path(stderr.split("the trace keeps every finished call: ", 1)[1].split("\n", 1)[0])
    trace = trace if trace.is_absolute() else project / trace
    assert seal_path(trace).is_file(), stderr
    assert check_trace(trace).damage is None
    last = json.loads(trace.read_text(encoding="utf-8").splitlines()[-1])
    assert last["type"] == "run_end" and last["status"] == "interrupted"
    assert audit_trace(trace).findings == []
    command = shlex.split(stderr.split("resume: ", 1)[1].split("\n", 1)[0])
    assert command[:2] == ["prose", "run"]
    done = run_prose_in_process(*command[1:], "--json", cwd=project)
    assert done.code == 0, done.output
    assert "damaged" not in done.stderr


def test_ctrl_c_with_a_lone_call_in_flight_seals_the_trace(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    server.enqueue("echo", Delay(30, Reply("late")))
    project = write_project(tmp_path, server)
    code, stderr = _interrupt(project, server, "echo.prose.md", 1)
    assert code == 130, stderr
    _resume_and_finish(project, stderr)


@pytest.mark.parametrize("held", [2, 3])
def test_ctrl_c_between_finished_calls_seals_the_trace(
    tmp_path: Path, server: FakeLLMServer, held: int
) -> None:
    server.enqueue("echo", *([Reply("done")] * (held - 1)), Delay(30, Reply("late")))
    project = write_project(tmp_path, server, pattern=ROUNDS_PATTERN, name="rounds.prose.md")
    code, stderr = _interrupt(project, server, "rounds.prose.md", held, "--trace", "r.jsonl")
    assert code == 130, stderr
    _resume_and_finish(project, stderr)
    assert len(server.requests) == 3 + 1  # the held call was sent again, no finished one


@pytest.mark.parametrize("gap", [0.001, 0.01, 0.05])
def test_a_second_ctrl_c_while_the_run_closes_leaves_it_sealed(
    tmp_path: Path, server: FakeLLMServer, gap: float
) -> None:
    """Pressed twice, Ctrl-C used to raise in the middle of writing `run_end` and the seal
    (asyncio's handler raises on the second press): the trace ended unsealed and the
    printed `resume:` was refused as damaged, or the process died with a traceback."""
    server.enqueue("echo", Delay(30, Reply("late")))
    project = write_project(tmp_path, server)
    code, stderr = _interrupt(project, server, "echo.prose.md", 1, again_after=gap)
    assert code == 130, stderr
    _resume_and_finish(project, stderr)
