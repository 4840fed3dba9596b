"""`prose batch` throughput and memory against the loopback stub (bench/stub.py), 20 ms a call.

- local executor: `prose batch` of a one-call pattern over ROWS rows (a real process, as a
  user runs it), calls/s in the steady state (between 10% and 90% of the rows, from the
  --json progress lines) and end to end (the summary, LiteLLM's import included);
- the same calls made by a bare `Router.acompletion` loop under a semaphore of the same size;
- `--executor ray --workers 2` on the same machine;
- peak RSS of the local batch process for ROWS and 10 x ROWS rows.

Run: python bench/batch.py [ROWS] [--rounds=N] [--rss=SMALL,LARGE]   (writes its section of docs/benchmarks.md)
     python bench/batch.py --memory[=SMALL,LARGE]        (the `batch-memory` section only)

`--memory`: peak RSS for SMALL and LARGE rows (default 10,000 and 100,000) with the slot bound
to a Python function, so no row calls LiteLLM and 100,000 rows take minutes, not the hours
that 100,000 calls to the stub take at LiteLLM's CPU per call: it measures whether prose
streams its rows (the results file, the traces, the progress), which is what the row count
could grow; the main run's RSS check routes every row through LiteLLM at smaller counts.

ROWS defaults to 10,000; the memory check runs SMALL and LARGE rows (default ROWS and
10 x ROWS). The bare loop (on asyncio's loop and on prose's), the local executor and the Ray
executor take turns in a rotating order, ROUNDS times (3, `--rounds=N`); the figures are
medians and each ratio is the median of the rounds' ratios, so a drift of the machine's speed
weighs on every side alike.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import load_average, stamp, write_section
from bench.stub import StubServer
from prose.llm import event_loop

LATENCY_MS = 20
CONCURRENCY = 32
ROUNDS = 3  # turns of every side (`--rounds=N`)
SIDES = ["bare", "bare, prose's loop", "local", "ray"]
PATTERN = """---
name: one-call
kind: pattern
version: 0.1.0
---

# One call

### Slots

- `worker`
  - ensures: an answer

### Invariants

- none

### Parameters

- `task`: string -- the task

### Returns

- `answer`: the answer

### Delegation

```prose
let a = call worker
  task: task
return { answer: a }
```
"""


def setup(folder: Path, api_base: str, rows: int) -> None:
    (folder / "one.prose.md").write_text(PATTERN)
    (folder / "prose.yaml").write_text(
        "model_list:\n  - model_name: stub\n    litellm_params: {model: openai/stub, "
        f'api_base: "{api_base}", api_key: sk-bench}}\ndefault_model: stub\nretries: 0\n'
        f"concurrency: {CONCURRENCY}\n")
    with (folder / "rows.jsonl").open("w") as handle:
        for index in range(rows):
            handle.write(json.dumps({"task": f"row {index}"}) + "\n")


def run_batch(folder: Path, out: str, *extra: str) -> dict[str, Any]:
    """One `prose batch` process: its summary, steady-state calls/s and peak RSS."""
    command = [sys.executable, "-c", "from prose.cli.main import main; main()", "batch",
               "one.prose.md", "--inputs", "rows.jsonl", "--out", out, "--json",
               "--concurrency", str(CONCURRENCY), *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        raise SystemExit(f"prose batch failed ({done.returncode}): {done.stderr[-2000:]}")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    ticks = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    rows = summary["rows"]
    inside = [t for t in ticks if 0.1 * rows <= t["rows_done"] <= 0.9 * rows]
    steady = 0.0
    if len(inside) >= 2:
        first, last = inside[0], inside[-1]
        steady = (last["rows_done"] - first["rows_done"]) / (last["seconds"] - first["seconds"])
    return {"summary": summary, "steady": steady,
            "peak_mb": peak_kb / 1024 if peak_kb > before else None}


async def bare_loop(api_base: str, rows: int) -> float:
    """calls/s of `Router.acompletion` for `rows` messages, `CONCURRENCY` at a time."""
    from bench.runtime import direct_router, stub_config

    config = stub_config(api_base, concurrency=CONCURRENCY)
    router = direct_router(config)
    semaphore = asyncio.Semaphore(CONCURRENCY)
    await router.acompletion(model="stub", messages=[{"role": "user", "content": "warm"}])

    async def one(index: int) -> None:
        async with semaphore:
            await router.acompletion(model="stub", messages=[
                {"role": "system", "content": "Produce: an answer"},
                {"role": "user", "content": f"## task\nrow {index}"}], timeout=60)

    started = time.perf_counter()
    await asyncio.gather(*(one(index) for index in range(rows)))
    return rows / (time.perf_counter() - started)


ANSWER = "def answer(**inputs):\n    return 'ok: ' + str(inputs.get('task'))\n"


def peak_rss(folder: Path, api_base: str, rows: int, python: bool = False) -> float:
    """Peak RSS (MB) of a `prose batch` process over `rows` rows, measured in a child.

    `python`: the slot is bound to a Python function instead of the stub (no LiteLLM call),
    so that 100,000 rows take minutes: what grows with the rows is then prose's alone."""
    sub = folder / f"rss-{rows}{'-python' if python else ''}"
    sub.mkdir()
    setup(sub, api_base, rows)
    bind: list[str] = []
    if python:
        (sub / "bench_answer.py").write_text(ANSWER)
        bind = ["--bind", "worker=python:bench_answer:answer"]
    code = ("import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:], check=True, capture_output=True)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    command = [sys.executable, "-c", code, sys.executable, "-c",
               "from prose.cli.main import main; main()", "batch", "one.prose.md", "--inputs",
               "rows.jsonl", "--out", "out.jsonl", "-q", "--concurrency", str(CONCURRENCY), *bind]
    done = subprocess.run(command, cwd=sub, capture_output=True, text=True, check=True)
    return int(done.stdout.strip()) / 1024


def memory(small: int, large: int) -> None:
    """The `batch-memory` section: peak RSS of Python-bound rows, SMALL against LARGE."""
    load_before = load_average()
    with StubServer() as stub, tempfile.TemporaryDirectory() as tmp:
        api_base = stub.base_url(latency_ms=LATENCY_MS, words=5)
        started = time.perf_counter()
        rss_small = peak_rss(Path(tmp), api_base, small, python=True)
        rss_large = peak_rss(Path(tmp), api_base, large, python=True)
        seconds = time.perf_counter() - started
    ratio = rss_large / rss_small
    body = f"""
## Batch memory

{stamp()}
Load average {load_before:.2f} before, {load_average():.2f} after; {seconds:.0f} s in all.

Peak RSS of a `prose batch` process (the local executor, `--concurrency {CONCURRENCY}`) whose one
slot is bound to a Python function (`--bind worker=python:...`), so that no row calls LiteLLM:
what could grow with the number of rows is then prose's own (rows read, results written in
order, one trace per row, progress). Every row still runs the whole pattern, writes its sealed
trace and its fsynced line of results.

| rows | peak RSS | ratio | target |
|---|---|---|---|
| {small:,} | {rss_small:.0f} MB | | |
| {large:,} | {rss_large:.0f} MB | {ratio:.2f}x | <= 1.2x ({"meets" if ratio <= 1.2 else "misses"}) |

`python bench/batch.py --memory={small},{large}`
"""
    write_section("batch-memory", body)
    print(body)


def _rounds(argv: list[str]) -> int:
    for arg in argv:
        if arg.startswith("--rounds="):
            return max(1, int(arg.split("=", 1)[1]))
    return ROUNDS


KNOWN = ("--rounds=", "--rss=", "--memory")


def main() -> None:
    if {"-h", "--help"} & set(sys.argv[1:]):
        print(__doc__)
        return
    for arg in sys.argv[1:]:
        if arg.startswith("-") and not arg.startswith(KNOWN):
            raise SystemExit(f"bench/batch.py: unknown option {arg} (see --help)")
    for arg in sys.argv[1:]:
        if arg.startswith("--memory"):
            small, large = (arg.split("=", 1)[1].split(",") if "=" in arg
                            else ("10000", "100000"))
            memory(int(small), int(large))
            return
    args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    rows = int(args[0]) if args else 10_000
    rounds = _rounds(sys.argv[1:])
    rss_rows = (rows, rows * 10)
    for arg in sys.argv[1:]:
        if arg.startswith("--rss"):
            small, large = arg.split("=", 1)[1].split(",")
            rss_rows = (int(small), int(large))
    load_before = load_average()
    rates: dict[str, list[float]] = {side: [] for side in SIDES}
    ends: dict[str, list[dict[str, Any]]] = {"local": [], "ray": []}
    # The stub's CPU seconds per call made, and its share of one core, while each side ran:
    # the stub shares the 2 cores, so a side that makes the stub busier leaves less for itself.
    stub_cpu: dict[str, list[float]] = {side: [] for side in SIDES}
    stub_busy: dict[str, list[float]] = {side: [] for side in SIDES}
    with StubServer() as stub, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        api_base = stub.base_url(latency_ms=LATENCY_MS, words=5)
        setup(folder, api_base, rows)
        # The sides take turns, in a rotating order, `rounds` times: the machine's speed
        # drifts over minutes (a third between two runs of the same command, seen here), and
        # a ratio of runs made far apart would carry that drift.
        for turn in range(rounds):
            order = SIDES[turn % len(SIDES):] + SIDES[:turn % len(SIDES)]
            for side in order:
                cpu_before, wall_before = stub.cpu_seconds(), time.perf_counter()
                if side == "bare":
                    rates[side].append(asyncio.run(bare_loop(api_base, rows)))
                elif side == "bare, prose's loop":
                    rates[side].append(event_loop.run(bare_loop(api_base, rows)))
                else:
                    extra = ("--executor", "ray", "--workers", "2") if side == "ray" else ()
                    done = run_batch(folder, f"{side}-{turn}.jsonl", *extra)
                    rates[side].append(done["steady"])
                    ends[side].append(done["summary"])
                cpu = stub.cpu_seconds() - cpu_before
                stub_cpu[side].append(cpu / rows)
                stub_busy[side].append(cpu / (time.perf_counter() - wall_before))
                print(f"round {turn + 1}/{rounds}, {side}: {rates[side][-1]:,.0f} calls/s",
                      file=sys.stderr, flush=True)
        rss_small = peak_rss(folder, api_base, rss_rows[0])
        rss_large = peak_rss(folder, api_base, rss_rows[1])
    load_after = load_average()
    local_rate, ray_rate = median(rates["local"]), median(rates["ray"])
    bare, inline = median(rates["bare"]), median(rates["bare, prose's loop"])
    bare_ratio = median([b / loc for b, loc in zip(rates["bare"], rates["local"], strict=True)])
    inline_ratio = median([b / loc for b, loc in
                           zip(rates["bare, prose's loop"], rates["local"], strict=True)])
    ray_ratio = median([r / loc for r, loc in zip(rates["ray"], rates["local"], strict=True)])
    ray_end_ratio = median([r["calls_per_s"] / loc["calls_per_s"]
                            for r, loc in zip(ends["ray"], ends["local"], strict=True)])

    def stub_row(side: str) -> str:
        return (f"{median(stub_cpu[side]) * 1000:.2f} ms a call, "
                f"{median(stub_busy[side]):.1%} of a core")

    def each(side: str) -> str:
        return ", ".join(f"{rate:,.0f}" for rate in rates[side])

    def end_to_end(side: str) -> str:
        summary = min(ends[side], key=lambda s: s["seconds"])
        return f"{summary['calls_per_s']:,.0f} calls/s ({summary['seconds']:.1f} s, the fastest run)"

    rows_text = f"{rows:,}"
    body = f"""
## Batch

{stamp()}
Load average {load_before:.2f} before, {load_after:.2f} after.

`prose batch` of a one-call pattern over {rows_text} rows against the stub at {LATENCY_MS} ms a
call, `--concurrency {CONCURRENCY}`, each row writing its trace and its line of results
(fsync). Steady state: calls/s between 10% and 90% of the rows (from the `--json` progress
lines); end to end: the summary's, from the first row (LiteLLM's import and, for Ray, the
workers' start included). The four sides took turns in a rotating order, {rounds} rounds;
rates are medians, ratios the medians of each round's ratio.

| measure | value | target |
|---|---|---|
| local executor, steady state | {local_rate:,.0f} calls/s ({each("local")}) | >= 150 calls/s ({"meets" if local_rate >= 150 else "misses"}) |
| local executor, end to end | {end_to_end("local")} | |
| bare `Router.acompletion` loop, same semaphore | {bare:,.0f} calls/s ({each("bare")}) | |
| bare loop / local executor | {bare_ratio:.2f}x | <= 1.1x ({"meets" if bare_ratio <= 1.1 else "misses"}) |
| the bare loop on prose's event loop | {inline:,.0f} calls/s ({each("bare, prose's loop")}) | |
| bare loop on prose's event loop / local executor | {inline_ratio:.2f}x | |
| `--executor ray --workers 2`, steady state | {ray_rate:,.0f} calls/s ({each("ray")}) | |
| ray / local | {ray_ratio:.2f}x | >= 1.6x ({"meets" if ray_ratio >= 1.6 else "misses"}) |
| ray, end to end | {end_to_end("ray")} | |
| ray / local, end to end (as a user's run sees it) | {ray_end_ratio:.2f}x | |
| the stub's CPU while the bare loop ran | {stub_row("bare")} | |
| the stub's CPU while the local executor ran | {stub_row("local")} | |
| the stub's CPU while the Ray executor ran | {stub_row("ray")} | |
| peak RSS, {rss_rows[0]:,} rows | {rss_small:.0f} MB | |
| peak RSS, {rss_rows[1]:,} rows | {rss_large:.0f} MB ({rss_large / rss_small:.2f}x) | <= 1.2x ({"meets" if rss_large / rss_small <= 1.2 else "misses"}) |

All in one run of `python bench/batch.py {" ".join(sys.argv[1:])}`; the stub is one asyncio
process (bench/stub.py), so it takes a share of the same 2 cores. Both the batch and the bare
loop build their router as prose does (`prose.llm.pricing`: the stub's model has no price, so
it gets an explicit zero, which spares LiteLLM a diagnosis of every zero-priced reply).
The stub's CPU is read from /proc for its process while each side runs: what it takes
from the 2 cores is not the side's, and a side that keeps it busier leaves itself less.
"The bare loop" runs under `asyncio.run`, as a user's script would; `prose batch` runs its
loop with `prose.llm.event_loop.run` (LiteLLM's request preparation on the loop's thread instead
of a pool thread, and the collector thresholds of `prose.llm.collector`), and the bare loop is
measured on that loop too, to tell the two apart.
"""
    write_section("batch", body)
    print(body)


if __name__ == "__main__":
    os.environ.setdefault("RAY_DISABLE_DOCKER_CPU_WARNING", "1")
    main()
