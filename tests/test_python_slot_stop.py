"""A `python:` slot's plain function runs off the event loop (prose/runtime/python_calls.py),
so `--timeout` and Ctrl-C stop a run of slow functions at once: they ran on the loop's
thread, and a loop of five 2-second calls ran to its end whatever the budget or the key.
Real `prose run` processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.loopback import ctrl_c_as_in_a_terminal, worker_pattern

PATTERN = worker_pattern(
    "let result = null\nrepeat 5:\n  result = call worker\n    task: task\nreturn { result: result }",
    name="slow", title="Slow", summary="A loop of slow function calls.")

SLOW = """import time


def work(task: str) -> str:
    time.sleep(2)
    return "done: " + task
"""


def _project(tmp_path: Path) -> list[str]:
    (tmp_path / "slow.prose.md").write_text(PATTERN, encoding="utf-8")
    (tmp_path / "slow_work.py").write_text(SLOW, encoding="utf-8")
    return [sys.executable, "-c", "from prose.cli.main import main; main()", "run",
            "slow.prose.md", "--bind", "worker=python:slow_work:work", "--input", "task=x",
            "--trace", "trace.jsonl"]


def _calls(tmp_path: Path) -> list[dict[str, object]]:
    events = map(json.loads, (tmp_path / "trace.jsonl").read_text(encoding="utf-8").splitlines())
    return [event for event in events if event["type"] == "call"]


def test_the_timeout_stops_a_loop_of_slow_functions(tmp_path: Path) -> None:
    done = subprocess.run([*_project(tmp_path), "--timeout", "3"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "R011" in done.stderr and "time budget" in done.stderr
    finished = [call for call in _calls(tmp_path) if call["error"] is None]
    assert len(finished) < 5  # 10 s of calls; the budget was 3 s


def test_ctrl_c_stops_a_loop_of_slow_functions(tmp_path: Path) -> None:
    process = subprocess.Popen(_project(tmp_path), cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 60
        while not ((tmp_path / "trace.jsonl").is_file() and _calls(tmp_path)):
            assert time.monotonic() < deadline, "no call finished in 60 s"
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)  # during the second call
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert len([call for call in _calls(tmp_path) if call["error"] is None]) < 5
