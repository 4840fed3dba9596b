"""Spec loading: `load_spec` on a typical pattern file, and on every file in patterns/.

Run: python bench/spec_load.py   (writes the `spec` section of docs/benchmarks.md)
Target: a typical spec loads in well under 5 ms (median), the bound a unit test
asserted until it moved here, where a busy machine cannot fail the test suite.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import ROOT, load_average, stamp, write_section
from prose.spec import load_spec

TYPICAL = ROOT / "tests" / "fixtures" / "spec" / "review-board.prose.md"
REPEAT = 200
TARGET_S = 0.005


def timings(text: str, name: str, repeat: int) -> list[float]:
    """Wall-clock seconds of `repeat` loads of `text`, after one warm-up load."""
    load_spec(text, name)
    found = []
    for _ in range(repeat):
        start = time.perf_counter()
        load_spec(text, name)
        found.append(time.perf_counter() - start)
    return found


def main() -> None:
    load_before = load_average()
    text = TYPICAL.read_text(encoding="utf-8")
    typical = timings(text, TYPICAL.name, REPEAT)
    files = sorted((ROOT / "patterns").glob("*.prose.md"))
    library = [statistics.median(timings(path.read_text(encoding="utf-8"), path.name, 20))
               for path in files]
    median = statistics.median(typical)
    verdict = "meets" if median < TARGET_S else "misses"
    body = f"""## Spec loading

{stamp()}
Load average {load_before:.2f} before, {load_average():.2f} after.

| measure | value | target |
|---|---|---|
| `load_spec` of `{TYPICAL.relative_to(ROOT)}` ({text.count(chr(10))} lines), median of {REPEAT} | {median * 1000:.2f} ms | < 5 ms ({verdict}) |
| the same, fastest | {min(typical) * 1000:.2f} ms | |
| the same, 95th percentile | {statistics.quantiles(typical, n=20)[-1] * 1000:.2f} ms | |
| a file of `patterns/` ({len(files)} files), median of the per-file medians | {statistics.median(library) * 1000:.2f} ms | |
| the slowest file of `patterns/` (median of 20) | {max(library) * 1000:.2f} ms | |

In process, after one warm-up load per file.
"""
    write_section("spec", body)
    print(body)


if __name__ == "__main__":
    main()
