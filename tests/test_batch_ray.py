"""`prose batch --executor ray` on a local Ray started for the batch (2 workers): rows in
order, traces written by the workers, and the call budget and the cap on calls in flight
holding across both workers, counted at a loopback server. Skipped, saying why, only when
Ray is not installed or cannot start on this machine.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_batch import Stub, project, results

from tests.chat_stub import serving

pytestmark = pytest.mark.slow


@pytest.fixture
def slow_stub() -> Iterator[Stub]:
    yield from serving(Stub(latency=0.05))


def run_ray(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'prose-patterns[ray]')")
    command = [sys.executable, "-c", "from prose.cli.main import main; main()", "batch",
               "draft-check.prose.md", "--inputs", "rows.jsonl", "--executor", "ray",
               "--workers", "2", "--json", *args]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    if "Ray could not start" in done.stderr:
        pytest.skip(f"Ray cannot start on this machine: {done.stderr.strip()[-500:]}")
    return done


def test_ray_executor_runs_rows_on_two_workers_under_one_budget_and_cap(
    tmp_path: Path, slow_stub: Stub
) -> None:
    rows = [{"task": f"t{i}" + (" FAIL" if i == 3 else "")} for i in range(12)]
    project(tmp_path, slow_stub, rows)
    done = run_ray(tmp_path, "--concurrency", "2", "--max-calls", "15")
    assert "Traceback" not in done.stderr
    assert done.returncode == 1, done.stderr  # row 3 failed
    lines = results(tmp_path / "rows.results.jsonl")
    assert [line["row"] for line in lines] == list(range(12))
    assert lines[3]["status"] == "error"
    # 15 calls for the whole batch, across both workers; then rows stop with `budget`.
    assert len(slow_stub.received) == 15
    assert sum(line["calls"] for line in lines) == 15
    assert {line["status"] for line in lines} <= {"ok", "error", "budget"}
    assert any(line["status"] == "budget" for line in lines)
    for line in lines:
        if line["status"] == "ok":
            assert line["result"]["answer"].startswith("seen<seen<t")
            trace = Path(line["trace"])  # written by the worker, reported to the driver
            assert trace.is_absolute() and trace.is_file()
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["calls"] == 15 and summary["rows"] == 12
    assert slow_stub.max_in_flight <= 2  # the cap of 2 holds across the workers
