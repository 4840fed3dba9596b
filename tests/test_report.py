"""prose report without a browser: the page's content, its escaping, the graph's counts, the CLI.

The page in a real Chromium is tests/test_report_browser.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import ROOT, run_prose, run_prose_in_process

from prose.report import read_run, render_html
from prose.report.graph import explain_pattern, flow_graph
from prose.report.html import script_json
from prose.report.synthetic import write_synthetic_trace

EXAMPLE = ROOT / "examples" / "two-reviewer-gate.yaml"
SCRIPT = ROOT / "examples" / "two-reviewer-gate.script.yaml"
HOSTILE = '</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def gate_run(folder: Path, script: Path = SCRIPT) -> Path:
    """Run the two-reviewer gate with its script; the trace's path."""
    trace = folder / "trace.jsonl"
    done = run_prose_in_process("run", str(EXAMPLE), "--script", str(script), "--trace", str(trace),
                                "-q", "--json")
    assert done.code == 0, done.output
    return trace


def hostile_script(folder: Path) -> Path:
    """The gate's script with a worker that first writes a file of HTML that would run script
    (its value, the files it wrote, holds it)."""
    text = SCRIPT.read_text(encoding="utf-8")
    first = text.index("    - { tool: write")
    write = {"tool": "write", "args": {"path": "out/page.html", "content": HOSTILE}}
    script = folder / "hostile.script.yaml"
    script.write_text(text[:first] + f"    - {json.dumps(write)}\n" + text[first:], encoding="utf-8")
    return script


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gate_run(tmp_path_factory.mktemp("gate"))


def test_the_run_is_read_with_parallel_reviewers_on_lanes_of_their_own(gate: Path) -> None:
    report = read_run(gate)
    calls = [s for s in report.steps if s.kind == "call"]
    assert [s.slot for s in calls] == ["worker", "reviewer_a", "reviewer_b"] * 2
    assert report.integrity.chain_ok and not report.integrity.tampered
    assert report.integrity.summary == "hash chain intact; every call within the policy"
    assert report.lanes >= 1 and all(s.duration_ms >= 0 for s in calls)
    overlapping = [(a, b) for a in calls for b in calls if a is not b and a.start_ms < b.start_ms
                   < a.start_ms + a.duration_ms]
    assert all(a.lane != b.lane for a, b in overlapping)


def test_the_page_has_every_section_and_counts(gate: Path) -> None:
    page = render_html(read_run(gate))
    for anchor in ("integrity", "summary", "timeline", "transcripts", "flow", "policy", "budget",
                   "stats", "critics", "ledger", "result"):
        assert f'id="{anchor}"' in page, anchor
    assert 'data-calls="6"' in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" in page


def test_each_edge_counts_the_values_that_crossed_it(gate: Path) -> None:
    report = read_run(gate)
    assert report.pattern_file is not None and report.pattern_text == report.pattern_file.text
    explanation = explain_pattern(report.pattern_file)
    assert explanation is not None
    graph = flow_graph(explanation, (s.event for s in report.steps if s.kind == "call"))
    counts = {(e.source, e.target, e.name): e.count for e in graph.edges}
    assert counts[("worker", "reviewer_a", "candidate")] == 2
    assert counts[("worker", "reviewer_b", "candidate")] == 2
    assert counts[("inputs", "worker", "task_brief")] == 2
    # Version 2 of the worker was given reviewer B's findings, never reviewer A's (A passed).
    assert counts[("reviewer_b", "worker", "findings")] == 1
    assert graph.mermaid.startswith("flowchart LR")


def test_a_reply_holding_html_is_text_in_the_page(tmp_path: Path) -> None:
    trace = gate_run(tmp_path, hostile_script(tmp_path))
    page = render_html(read_run(trace))
    assert "window.pwned" in page  # the reply is there, as data
    assert "<script>window.pwned" not in page and "<img src=x" not in page
    data = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page, re.S)
    assert data is not None and "<" not in data.group(1)
    out = json.loads(data.group(1))["steps"][0]["out"]
    shown = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
    assert "</script><script>window.pwned = 1</script>" in shown


def test_script_json_cannot_close_its_element() -> None:
    text = script_json({"a": "</script><!-- & -->"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!-- & -->"}


def test_a_tampered_trace_says_so_at_the_top(gate: Path, tmp_path: Path) -> None:
    lines = gate.read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if '"DONE"' in line)
    lines[first] = lines[first].replace('"DONE"', '"FAIL"', 1)
    tampered = tmp_path / "trace.jsonl"
    tampered.write_text("".join(lines), encoding="utf-8")
    page = render_html(read_run(tampered))
    banner = page[page.index('<div class="banner'):]
    assert banner.startswith('<div class="banner bad" id="integrity" data-state="tampered">')
    assert f"BROKEN at line {first + 2}" in banner[:400]  # the next line's link
    assert page.index('id="integrity"') < page.index('id="title"')


def test_a_large_trace_builds_and_audits_clean(tmp_path: Path) -> None:
    trace = write_synthetic_trace(tmp_path / "trace.jsonl", 300)
    report = read_run(trace)
    assert report.integrity.summary == "hash chain intact; every call within the policy"
    calls = [s for s in report.steps if s.kind == "call"]
    assert len(calls) >= 300 and sum(s.retry for s in calls) == sum(s.failed for s in calls) > 0
    assert any(s.kind == "judge" for s in report.steps)
    assert report.lanes == 2


def test_prose_report_writes_beside_the_trace(gate: Path, tmp_path: Path) -> None:
    done = run_prose_in_process("report", str(gate))
    assert done.code == 0, done.output
    assert done.stdout.strip() == f"report: {gate.with_name('report.html')}"
    out = tmp_path / "x.html"
    done = run_prose_in_process("report", str(gate), "-o", str(out))
    assert done.code == 0 and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_prose_report_of_no_trace_exits_2_without_a_traceback(tmp_path: Path) -> None:
    done = run_prose("report", str(tmp_path / "missing.jsonl"))
    assert done.code == 2
    assert done.stderr.startswith("error: ") and "cannot read" in done.stderr
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    done = run_prose("report", str(tmp_path / "empty.jsonl"))
    assert done.code == 2 and "empty" in done.stderr


def test_prose_run_report_writes_the_page_beside_the_trace(tmp_path: Path) -> None:
    trace = tmp_path / "run" / "trace.jsonl"
    done = run_prose_in_process("run", str(EXAMPLE), "--script", str(SCRIPT), "--trace",
                                str(trace), "-q", "--report")
    assert done.code == 0, done.output
    page = trace.with_name("report.html")
    assert f"report: {page}" in done.stderr
    assert 'data-calls="6"' in page.read_text(encoding="utf-8")
