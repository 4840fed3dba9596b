"""A disk that fills up in the middle of a run (issue 35): a clear error and exit 2, never
the internal-error exit 70; nothing already written is lost, the trace keeps whole lines
and is sealed, and `--resume` takes it up. The disk is filled with a file-size limit
(`RLIMIT_FSIZE`) on the real `prose` process: a write past it fails with EFBIG as a write
to a full disk fails with ENOSPC (Python ignores SIGXFSZ, so the write returns the error).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import FakeLLMServer

from prose.ledger.audit import audit_trace
from prose.runtime.integrity import check_trace, seal_path
from tests.conftest import run_prose_in_process
from tests.loopback import ROUNDS_PATTERN, write_project

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")


def _prose_with_file_limit(limit: int, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`prose ARGS` in a new interpreter that may write no file past `limit` bytes."""

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    command = [sys.executable, "-c", "from prose.cli.main import main; main()", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300,
                          preexec_fn=limited)


def _rounds_project(folder: Path, rounds: int) -> Path:
    (folder / "rounds.prose.md").write_text(ROUNDS_PATTERN, encoding="utf-8")
    replies = [f"reply {i} " + "x" * 600 for i in range(rounds)]
    (folder / "s.yaml").write_text(json.dumps({"slots": {"worker": replies}}), encoding="utf-8")
    return folder


def test_a_trace_that_fills_the_disk_mid_run_is_exit_2_whole_and_sealed(tmp_path: Path) -> None:
    project = _rounds_project(tmp_path, 60)
    trace = project / "r.jsonl"
    done = _prose_with_file_limit(
        24_000, "run", "rounds.prose.md", "--script", "s.yaml", "--input", "task=t",
        "--config", "rounds=60", "--trace", "r.jsonl", "-q", cwd=project)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "cannot write the trace r.jsonl: File too large" in done.stderr
    data = trace.read_bytes()
    assert 0 < len(data) <= 24_000 and data.endswith(b"\n")  # whole lines only
    lines = data.decode("utf-8").splitlines()
    assert f"keeps its first {len(lines)} line(s), whole, sealed" in done.stderr
    calls = [json.loads(line) for line in lines if json.loads(line)["type"] == "call"]
    assert 5 < len(calls) < 60
    # The seal holds and the chain is intact: nothing in it is damage.
    assert seal_path(trace).is_file()
    assert check_trace(trace).damage is None
    assert not list(project.glob(".*.part"))  # the room kept for the seal was used
    findings = audit_trace(trace).findings
    assert all("run_end" in finding.message for finding in findings), findings
    # With room again, the printed advice works: --resume replays every recorded call.
    resumed = run_prose_in_process("run", "rounds.prose.md", "--script", "s.yaml", "--input",
                                   "task=t", "--config", "rounds=60", "--resume", "r.jsonl",
                                   "--trace", "again.jsonl", "--json", cwd=project)
    assert resumed.code == 0, resumed.output
    end = json.loads((project / "again.jsonl").read_text().splitlines()[-1])
    assert end["type"] == "run_end" and end["totals"]["cache_hits"] == len(calls)


def test_a_results_file_that_fills_the_disk_keeps_its_whole_rows(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    """`prose batch` lost every row silently (exit 1, an empty results file, nothing on
    stderr) when its results could not be written: the failed write killed the row's task."""
    project = write_project(tmp_path, server, rows=[{"task": f"t{i}"} for i in range(150)])
    done = _prose_with_file_limit(16_000, "batch", "echo.prose.md", "--inputs", "rows.jsonl",
                                  "--out", "out.jsonl", "-q", cwd=project)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    data = (project / "out.jsonl").read_bytes()
    assert data.endswith(b"\n")
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    assert 0 < len(rows) < 150
    assert [row["row"] for row in rows] == list(range(len(rows)))
    assert (f"cannot write the results out.jsonl: File too large; the batch stopped, and "
            f"out.jsonl keeps its first {len(rows)} row(s), whole") in done.stderr
    resumed = run_prose_in_process("batch", "echo.prose.md", "--inputs", "rows.jsonl", "--out",
                                   "out.jsonl", "--resume", "-q", cwd=project)
    assert resumed.code == 0, resumed.output
    again = (project / "out.jsonl").read_text().splitlines()
    assert [json.loads(line)["row"] for line in again] == list(range(150))


def _trace(folder: Path) -> Path:
    _rounds_project(folder, 3)
    done = run_prose_in_process("run", "rounds.prose.md", "--script", "s.yaml", "--input",
                                "task=t", "--trace", "t.jsonl", "-q", cwd=folder)
    assert done.code == 0, done.output
    return folder / "t.jsonl"


@pytest.mark.parametrize("command", [["lint", "patterns/", "--format", "json"],
                                     ["stats", "TRACE", "--json"], ["audit", "TRACE"]])
def test_output_to_a_full_device_is_exit_2_not_a_bug(tmp_path: Path, command: list[str]) -> None:
    """`prose ... > /dev/full`: exit 70 ("internal error") on main."""
    trace = _trace(tmp_path)
    args = [str(trace) if arg == "TRACE" else arg for arg in command]
    root = Path(__file__).resolve().parent.parent
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-c", "from prose.cli.main import main; main()",
                               *args], cwd=root, stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=300)
    assert done.returncode == 2, done.stderr
    assert "cannot write" in done.stderr and "internal error" not in done.stderr


def test_an_export_that_fills_the_disk_is_exit_2(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    done = _prose_with_file_limit(300, "export", str(trace), str(tmp_path / "ledger"),
                                  cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "cannot write" in done.stderr and "Traceback" not in done.stderr
