"""Outputs are never clobbered and a paid call is never lost (issue 35): `prose batch --out`
may not be an input or the pattern, `--resume` cuts only a results file, a second batch on
the same results file is refused while the first runs (exit 2), the response cache writes
atomically under names no other process uses and a cache that cannot be written costs no
call, and a report is never written through a symbolic link nor over another trace's.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from llm_server import FakeLLMServer, Held, Reply

from tests.conftest import ROOT, run_prose, run_prose_in_process
from tests.loopback import prose_process, wait_for_requests, write_project

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")


def _project(tmp_path: Path, server: FakeLLMServer, rows: int = 2) -> Path:
    return write_project(tmp_path, server, settings={"concurrency": 1},
                         rows=[{"task": f"t{n}"} for n in range(rows)])


@pytest.mark.parametrize("out", ["rows.jsonl", "echo.prose.md"])
@pytest.mark.parametrize("resume", [True, False])
def test_batch_out_may_not_be_its_inputs_or_its_pattern(
    tmp_path: Path, server: FakeLLMServer, out: str, resume: bool
) -> None:
    project = _project(tmp_path, server)
    before = (project / out).read_bytes()
    done = run_prose_in_process("batch", "echo.prose.md", "--inputs", "rows.jsonl", "--out", out,
                                *(["--resume"] if resume else []), "-q", cwd=project)
    assert done.code == 2, done.output
    assert f"--out {out} is the" in done.stderr
    assert (project / out).read_bytes() == before
    assert server.requests == []


def test_resume_cuts_only_a_results_file(tmp_path: Path, server: FakeLLMServer) -> None:
    project = _project(tmp_path, server)
    notes = project / "notes.txt"
    notes.write_text("my notes, not a results file\n", encoding="utf-8")
    done = run_prose_in_process("batch", "echo.prose.md", "--inputs", "rows.jsonl", "--out",
                                "notes.txt", "--resume", "-q", cwd=project)
    assert done.code == 2, done.output
    assert "not a results file" in done.stderr
    assert notes.read_text(encoding="utf-8") == "my notes, not a results file\n"
    # A results file is continued as before.
    first = run_prose_in_process("batch", "echo.prose.md", "--inputs", "rows.jsonl", "-q",
                                 cwd=project)
    assert first.code == 0, first.output
    again = run_prose_in_process("batch", "echo.prose.md", "--inputs", "rows.jsonl", "--resume",
                                 "-q", cwd=project)
    assert again.code == 0, again.output
    lines = (project / "rows.results.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["row"] for line in lines] == [0, 1]


def test_batch_out_under_a_file_is_a_usage_error(tmp_path: Path, server: FakeLLMServer) -> None:
    project = _project(tmp_path, server)
    (project / "plain").write_text("a file\n", encoding="utf-8")
    done = run_prose_in_process("batch", "echo.prose.md", "--inputs", "rows.jsonl", "--out",
                                "plain/results.jsonl", "-q", cwd=project)
    assert done.code == 2, done.output
    assert "plain/results.jsonl" in done.stderr and "cannot write" in done.stderr


def test_a_resume_while_the_batch_runs_is_refused_and_no_row_is_duplicated(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server, rows=4)
    release = threading.Event()  # the first batch's first call stays in flight until then
    server.enqueue("echo", Held(release, Reply("slow")), *[Reply("slow")] * 3)
    first = prose_process("batch", "echo.prose.md", "--inputs", "rows.jsonl", "-q",
                          cwd=project, env={"PYTHONPATH": str(ROOT)})
    try:
        wait_for_requests(server, 1)
        second = run_prose("batch", "echo.prose.md", "--inputs", "rows.jsonl", "--resume", "-q",
                           cwd=project)
        assert second.code == 2, second.output
        assert "being written by another prose batch" in second.stderr
    finally:
        release.set()
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, (out + err).decode("utf-8", "replace")
    lines = (project / "rows.results.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["row"] for line in lines] == [0, 1, 2, 3]
    assert len(server.requests) == 4


def test_processes_sharing_the_cache_do_not_race_on_its_temporary_file(tmp_path: Path) -> None:
    from prose.runtime.cache import CachedResponse, ResponseCache

    caches = [ResponseCache(tmp_path) for _ in range(8)]  # one per process sharing the folder
    failures: list[BaseException] = []

    def write(cache: ResponseCache, worker: int) -> None:
        try:
            for n in range(150):
                cache.put("ab" + "0" * 62, CachedResponse(f"answer {worker} {n}", None, "m"))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=write, args=(cache, n)) for n, cache in enumerate(caches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert all(not cache.unwritable for cache in caches)
    stored = caches[0].get("ab" + "0" * 62)
    assert stored is not None and stored.text.startswith("answer ")
    assert [p.name for p in (tmp_path / "ab").iterdir()] == ["ab" + "0" * 62 + ".json"]


def test_a_cache_that_cannot_be_written_loses_no_paid_call(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server)
    (project / ".prose").mkdir()
    (project / ".prose" / "cache").write_text("not a folder\n", encoding="utf-8")
    server.enqueue("echo", Reply("paid for"))
    done = run_prose("run", "echo.prose.md", "--cache", "--json", "-q", "--input", "task=hi",
                     cwd=project)
    assert done.code == 0, done.output
    assert json.loads(done.stdout) == {"result": "paid for"}
    assert "warning: the response cache cannot be written" in done.stderr
    (trace,) = (project / ".prose" / "runs").rglob("trace.jsonl")
    assert any(json.loads(line).get("output") == "paid for"
               for line in trace.read_text(encoding="utf-8").splitlines())
    audit = run_prose_in_process("audit", str(trace), cwd=project)
    assert audit.code == 0, audit.output


def test_report_is_not_written_through_a_symlink(tmp_path: Path, server: FakeLLMServer) -> None:
    project = _project(tmp_path, server)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    trace = project / "runs" / "trace.jsonl"
    trace.parent.mkdir()
    (trace.parent / "report.html").symlink_to(victim)
    done = run_prose_in_process("run", "echo.prose.md", "--trace", str(trace), "--report", "-q",
                                "--input", "task=hi", cwd=project)
    assert done.code == 0, done.output
    assert "warning: the report was not written" in done.stderr
    assert "symbolic link" in done.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"
    reported = run_prose_in_process("report", str(trace), cwd=project)
    assert reported.code == 2, reported.output
    assert "symbolic link" in reported.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_reports_of_traces_sharing_a_folder_do_not_overwrite_each_other(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server)
    for name in ("a", "b"):
        server.enqueue("echo", Reply(f"answer-{name}"))
        done = run_prose_in_process("run", "echo.prose.md", "--trace", f"{name}.jsonl",
                                    "--report", "-q", "--input", "task=hi", cwd=project)
        assert done.code == 0, done.output
        assert f"report: {name}.report.html" in done.stderr
    assert "answer-a" in (project / "a.report.html").read_text(encoding="utf-8")
    assert "answer-b" in (project / "b.report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_a_byte_order_mark_in_the_rows_is_accepted(
    tmp_path: Path, server: FakeLLMServer, suffix: str
) -> None:
    # Spreadsheets save CSV (and some tools JSONL) with a UTF-8 byte-order mark.
    project = _project(tmp_path, server)
    text = '{"task": "t0"}\n' if suffix == "jsonl" else "task\nt0\n"
    (project / f"bom.{suffix}").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    done = run_prose_in_process("batch", "echo.prose.md", "--inputs", f"bom.{suffix}", "-q",
                                cwd=project)
    assert done.code == 0, done.output
    (line,) = (project / "bom.results.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["status"] == "ok"
