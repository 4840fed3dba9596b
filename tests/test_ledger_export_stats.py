"""`prose export` (a ledger folder verifiable with sha256sum) and `prose stats`.

Traces are made in-process by the pattern-test runner (`--trace-dir`), from
the fixtures in tests/fixtures/ledger/ and from the `prose new` skeleton.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, run_prose

from prose.ledger import load_trace
from prose.ledger.stats import (
    loop_segments,
    merge_stats,
    percentile,
    render_run,
    run_title,
    trace_stats,
    verdict_issues,
)
from prose.scaffold import plan_new, write_plan
from prose.testing import find_test_files, run_test_files

LEDGER = FIXTURES / "ledger"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> trace of every passing fixture test, plus the `prose new` skeleton's test."""
    folder = tmp_path_factory.mktemp("ledger")
    write_plan(plan_new("draft", folder / "patterns", folder / "examples"))
    files = [*find_test_files([LEDGER / "pass", LEDGER / "judged"]),
             folder / "examples" / "draft.test.yaml"]
    outcomes = run_test_files(files, trace_dir=folder / "traces")
    assert all(outcome.passed for outcome in outcomes), [o.reasons for o in outcomes]
    return {outcome.name: outcome.trace for outcome in outcomes if outcome.trace is not None}


def test_export_writes_a_folder_that_sha256sum_verifies(traces: dict[str, Path], tmp_path: Path) -> None:
    trace = traces["proposer-adversary"]
    out = tmp_path / "ledger"
    result = run_prose("export", str(trace), str(out))
    assert result.code == 0, result.output
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == ["README.md", "calls/adversary/002-c2.md", "calls/proposer/001-c1.md",
                       "judgements.md", "manifest.sha256", "trace.jsonl"]
    manifest = (out / "manifest.sha256").read_text(encoding="utf-8").splitlines()
    assert len(manifest) == 5
    for entry in manifest:
        digest, name = entry.split("  ", 1)
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    if shutil.which("sha256sum"):
        check = subprocess.run(["sha256sum", "-c", "manifest.sha256"], cwd=out, capture_output=True,
                               text=True, check=False)
        assert check.returncode == 0, check.stdout + check.stderr
        (out / "calls" / "proposer" / "001-c1.md").write_text("edited", encoding="utf-8")
        check = subprocess.run(["sha256sum", "-c", "manifest.sha256"], cwd=out, capture_output=True,
                               text=True, check=False)
        assert check.returncode == 1
        assert "calls/proposer/001-c1.md: FAILED" in check.stdout
    assert (out / "trace.jsonl").read_bytes() == trace.read_bytes()


def test_a_call_file_holds_messages_output_usage_and_provenance(traces: dict[str, Path],
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "ledger"
    assert run_prose("export", str(traces["proposer-adversary"]), str(out)).code == 0
    attack = (out / "calls" / "adversary" / "002-c2.md").read_text(encoding="utf-8")
    assert attack.startswith("# Call c2: `adversary`\n")
    assert "| provenance | `proposer` |" in attack
    assert "### 1. system\n\n```text\nYou look for the ways a design fails." in attack
    assert "## proposal\nUse a token bucket per API key" in attack
    assert '"severity": "major"' in attack
    assert "| tokens | " in attack and "| latency | " in attack
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "| status | ok (exit code 0) |" in readme
    assert "| hash chain | intact |" in readme
    assert "[c2](calls/adversary/002-c2.md)" in readme


def test_judgements_are_exported(traces: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "ledger"
    assert run_prose("export", str(traces["judged stops when the judge is satisfied"]), str(out)).code == 0
    judgements = (out / "judgements.md").read_text(encoding="utf-8")
    assert judgements.count("## j") == 3
    assert "Text: `draft is good enough`" in judgements
    assert "Decision: `true`" in judgements and "Decision: `false`" in judgements


def test_export_refuses_a_folder_that_is_not_empty(traces: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    result = run_prose("export", str(traces["proposer-adversary"]), str(tmp_path))
    assert result.code == 2
    assert "exists and is not an empty folder" in result.stderr
    assert run_prose("export", str(tmp_path / "missing.jsonl"), str(tmp_path / "new")).code == 2


def test_export_of_a_broken_chain_says_so(traces: dict[str, Path], tmp_path: Path) -> None:
    lines = traces["proposer-adversary"].read_text(encoding="utf-8").splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(lines[0] + lines[1].replace("token bucket", "token bucker") + "".join(lines[2:]),
                      encoding="utf-8")
    result = run_prose("export", str(broken), str(tmp_path / "out"))
    assert result.code == 0
    assert "the hash chain is broken" in result.stderr
    assert "| hash chain | BROKEN at line 3:" in (tmp_path / "out" / "README.md").read_text(encoding="utf-8")


# --- stats ---------------------------------------------------------------------------


def test_stats_per_slot_and_rounds_from_loop_paths(traces: dict[str, Path]) -> None:
    stats = trace_stats(load_trace(traces["dialectic: two rounds by default, every round recorded"]))
    data = stats.to_dict()
    assert [(s["slot"], s["calls"], s["rounds"]) for s in data["slots"]] == [("thesis", 2, 2),
                                                                              ("antithesis", 2, 2)]
    assert data["rounds"] == 2
    (loop,) = data["loops"]
    assert loop["site"].startswith("repeat@") and loop["iterations"] == 2 and not loop["reached_max"]
    assert data["totals"]["calls"] == 4
    tokens = sum(s["total_tokens"] for s in data["slots"])
    assert data["totals"]["total_tokens"] == tokens > 0
    assert data["critics"] == []


def test_critic_metrics_issues_per_round_empty_share_convergence(traces: dict[str, Path]) -> None:
    stats = trace_stats(load_trace(traces["draft converges in two rounds"]))
    critic = stats.to_dict()["critics"]
    assert critic == [{"slot": "critic", "verdicts": 2, "issues": 1,
                       "issues_per_round": [{"round": 1, "issues": 1}, {"round": 2, "issues": 0}],
                       "issues_per_turn": 0.5, "empty_verdict_share": 0.5, "severities": {},
                       "convergence": 2, "converged_runs": 1, "runs": 1}]
    judged = trace_stats(load_trace(traces["judged stops when the judge is satisfied"])).to_dict()
    assert judged["judgements"] == {"total": 3, "true": 1, "false": 2, "failed": 0}
    assert judged["critics"][0]["severities"] == {"major": 1, "minor": 1}
    assert [r["issues"] for r in judged["critics"][0]["issues_per_round"]] == [2, 0]


def test_a_critic_that_never_converges(traces: dict[str, Path]) -> None:
    stats = trace_stats(load_trace(traces["proposer-adversary"])).to_dict()
    (critic,) = stats["critics"]
    assert critic["slot"] == "adversary" and critic["convergence"] is None
    assert critic["issues_per_round"] == [{"round": 1, "issues": 2}]
    assert critic["empty_verdict_share"] == 0.0


def test_stats_cli_table_and_json_over_several_traces(traces: dict[str, Path]) -> None:
    paths = [str(traces["draft converges in two rounds"]), str(traces["dialectic: one round when configured"])]
    table = run_prose("stats", *paths)
    assert table.code == 0, table.output
    assert table.stdout.count("\nslot ") == 3  # two runs and the `all runs` section
    assert "all runs (2 traces)" in table.stdout
    assert "critic findings:" in table.stdout and "round 2" in table.stdout
    assert "r1=1 r2=0" in table.stdout
    assert "\x1b[" not in table.stdout  # plain text, no colour codes
    data = json.loads(run_prose("stats", *paths, "--json").stdout)
    assert [run["pattern"] for run in data["runs"]] == ["draft", "dialectic"]
    assert data["overall"]["totals"]["calls"] == 6
    assert {slot["slot"] for slot in data["overall"]["slots"]} == {"worker", "critic", "thesis",
                                                                   "antithesis"}


def test_stats_on_a_budget_stop_counts_what_ran(traces: dict[str, Path]) -> None:
    stats = trace_stats(load_trace(traces["dialectic: a budget stop ends the run with exit code 3"]))
    assert stats.status == "budget"
    assert {slot.slot: slot.calls for slot in stats.slots.values()} == {"thesis": 2, "antithesis": 1}
    assert "status budget" in run_title(stats)
    assert "judgements: 0" in render_run(stats, run_title(stats))


def test_stats_unreadable_trace_exits_2(tmp_path: Path) -> None:
    result = run_prose("stats", str(tmp_path / "none.jsonl"))
    assert result.code == 2 and "cannot read" in result.stderr


def test_merged_stats_sum_slots_and_average_convergence(traces: dict[str, Path]) -> None:
    loaded = [load_trace(traces["draft converges in two rounds"])] * 2
    merged = merge_stats(loaded).to_dict()
    assert merged["critics"][0]["convergence"] == 2.0
    assert merged["critics"][0]["converged_runs"] == 2
    assert merged["totals"]["calls"] == 8


def test_what_counts_as_a_verdict() -> None:
    assert verdict_issues({"issues": ["a"], "no_issues_found": False}) == ["a"]
    assert verdict_issues({"verdict": "FAIL", "findings": ["b", "c"]}) == ["b", "c"]
    assert verdict_issues({"no_issues_found": True}) == []
    assert verdict_issues({"issues": "none"}) is None
    assert verdict_issues("no issues") is None and verdict_issues(["a"]) is None


def test_helpers() -> None:
    assert percentile([], 0.95) is None
    assert percentile([5.0, 1.0, 3.0], 0.95) == 5.0
    assert percentile(list(map(float, range(1, 21))), 0.95) == 19.0
    assert loop_segments("/repeat@64:1#0/parallel@70:3#1/loop@71:5#2") == [("repeat@64:1", 0),
                                                                           ("loop@71:5", 2)]
    assert loop_segments("review>/for@3:1#4") == [("for@3:1", 4)]
