"""Issue 19: the client's start (LiteLLM's import, the router) is timed apart from the calls.

It used to land in the first call's latency (a scripted call shown as 37 s, `prose stats`
averaging 18 s for a scripted slot). `prose run` now starts importing LiteLLM in the
background while it checks the pattern, and the run starts the client before its first
call, recording the time in `run_end`'s totals (`client_start_s`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from prose.runtime.trace import read_events

ROOT = Path(__file__).resolve().parent.parent


def test_the_client_start_is_recorded_in_a_new_process(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", "from prose.cli.main import main; main()", "run",
         str(ROOT / "examples" / "dialectic.yaml"), "--script",
         str(ROOT / "examples" / "dialectic.script.yaml"), "--trace", str(trace), "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    [end] = [e for e in read_events(trace) if e["type"] == "run_end"]
    assert end["totals"]["client_start_s"] > 0


def test_a_run_without_model_slots_starts_no_client(tmp_path: Path) -> None:
    import asyncio

    from prose.llm import LLMConfig
    from prose.runtime import RunOptions, run_pattern
    from prose.runtime.services import PythonService

    def answer(**inputs: object) -> str:
        return "done"

    worker = PythonService("tests:answer", answer)
    result = asyncio.run(run_pattern(ROOT / "bench" / "fixtures" / "sequential.prose.md", RunOptions(
        inputs={"task": "t"}, config={"calls": 2}, bindings={"worker": worker},
        llm_config=LLMConfig(), trace_path=tmp_path / "t.jsonl")))
    assert result.exit_code == 0, result.error
    assert "client_start_s" not in result.totals
