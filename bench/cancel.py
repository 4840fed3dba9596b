"""Cancellation: how soon a run ends once a `parallel` branch fails or the time budget runs out.

Run: python bench/cancel.py   (writes the `cancel` section of docs/benchmarks.md)
In both fixtures a Python service would sleep 30 s; the run ends only by
cancelling it. Targets, the bounds unit tests asserted until they moved here
(where a busy machine cannot fail the suite): a fail-fast run ends in under
5 s, a run with a 0.3 s time budget in under 10 s. The tests keep checking that
the call is cancelled (tests/test_runtime_parallel.py).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import load_average, stamp, write_section
from prose.llm import Script
from prose.runtime import Limits, RunOptions, run_pattern
from prose.runtime.services import PythonService

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPEAT = 7
BUDGET_S = 0.3


async def sleeper(item: Any = None, fail: bool = False, delay: float = 0.0) -> Any:
    """The service: sleeps `delay` seconds, then fails or returns the item."""
    await asyncio.sleep(delay)
    if fail:
        raise ValueError(f"failed on {item}")
    return {"item": item}


def timed_run(pattern: str, folder: Path, limits: Limits) -> tuple[float, int]:
    """Wall seconds of one run of `pattern`, and its exit code."""
    options = RunOptions(
        script=Script.from_mapping({}),
        bindings={"worker": PythonService("bench.cancel:sleeper", sleeper)},
        trace_path=folder / "trace.jsonl",
        limits=limits,
    )
    start = time.perf_counter()
    result = asyncio.run(run_pattern(FIXTURES / pattern, options))
    return time.perf_counter() - start, result.exit_code


def main() -> None:
    load_before = load_average()
    cases = [
        ("fail-fast.prose.md", "a `parallel for` branch fails after 0.01 s", Limits(), 4, 5.0),
        ("slow-call.prose.md", f"the time budget of {BUDGET_S:g} s runs out", Limits(timeout=BUDGET_S),
         3, 10.0),
    ]
    seconds: dict[str, list[float]] = {pattern: [] for pattern, *_ in cases}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(REPEAT):  # the cases take turns
            for pattern, _what, limits, code, _target in cases:
                wall, exit_code = timed_run(pattern, Path(folder), limits)
                if exit_code != code:
                    raise SystemExit(f"{pattern}: exit {exit_code}, expected {code}")
                seconds[pattern].append(wall)
    rows = []
    for pattern, what, _limits, code, target in cases:
        found = seconds[pattern]
        median = statistics.median(found)
        verdict = "meets" if max(found) < target else "misses"
        rows.append(f"| `bench/fixtures/{pattern}` | {what} | {code} | {median:.3f} | "
                    f"{max(found):.3f} | < {target:g} s ({verdict}) |")
    body = f"""## Cancellation

{stamp()}
Load average {load_before:.2f} before, {load_average():.2f} after.

`run_pattern` in process, {REPEAT} runs of each (taking turns), the trace written to a
file; the call still in flight would sleep 30 s, so every run ends by cancelling it.
Wall seconds from the start of `run_pattern` to its result (pattern loading included).

| pattern | what ends the run | exit code | median s | slowest s | target (slowest) |
|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
    write_section("cancel", body)
    print(body)


if __name__ == "__main__":
    main()
