"""The run report with thousands of calls: how long it takes to write, and to open in Chromium.

Run: python bench/report_render.py   (writes the `report-render` section of docs/benchmarks.md)
A made-up two-reviewer-gate trace of 2,000 calls (prose.report.synthetic:
real hash chain, audit clean, parallel reviewers, retries, judges) is written,
`prose report` turns it into one HTML file, and headless Chromium (Debian's
package, through Playwright) opens it from disk, 5 times in a new browser
each. Target: rendered in under 2 s, from navigation until the page's script
has built the timeline, the visible rows and the first transcript.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import load_average, stamp, write_section
from prose.report import write_report
from prose.report.browser import opened
from prose.report.synthetic import write_synthetic_trace

CALLS = 2000
REPEAT = 5
TARGET_S = 2.0


def main() -> None:
    before = load_average()
    with tempfile.TemporaryDirectory() as folder:
        trace = write_synthetic_trace(Path(folder) / "trace.jsonl", CALLS)
        lines = sum(1 for _ in trace.open(encoding="utf-8"))
        started = time.perf_counter()
        page = write_report(trace)
        build_s = time.perf_counter() - started
        size = page.stat().st_size
        loads, scripts, rows = [], [], 0
        for _ in range(REPEAT):
            with opened(page) as report:
                loads.append(report.load_ms / 1000)
                scripts.append(report.script_ms / 1000)
                rows = report.page.locator("#steps .row").count()
    load = statistics.median(loads)
    verdict = "meets" if load < TARGET_S else "misses"
    write_section("report-render", f"""
## Run report (`prose report`) with {CALLS:,} calls

{stamp()} Load average {before:.2f} before, {load_average():.2f} after.

| measure | value | target |
|---|---|---|
| trace | {lines:,} lines ({CALLS:,}+ call attempts, retries and judges included) | |
| `write_report` (read, audit, stats, graph, HTML) | {build_s:.2f} s | |
| page size (one file, everything inlined) | {size / 1e6:.1f} MB | |
| rendered in headless Chromium, median of {REPEAT} | {load:.2f} s ({', '.join(f'{x:.2f}' for x in loads)}) | < {TARGET_S:.0f} s ({verdict}) |
| of which the page's clock at ready (`performance.now()`) | {statistics.median(scripts):.2f} s | |
| rows in the page at once (the list is virtualised) | {rows} | |

Rendered: from `page.goto(file://...)` until the page's script has parsed the
embedded JSON, drawn the lanes, built the rows in view and the first slot's
first page of transcript (`body[data-ready]`); a new Chromium each time
(`python bench/report_render.py`).
""")


if __name__ == "__main__":
    main()
