"""What information hiding costs per call on the map-reduce, against `Router.acompletion`.

The map-reduce of bench/pdl_compare.py (patterns/map-reduce.prose.md: 200 mapper calls
and a reducer against the loopback stub, 50 ms a call, 64 in flight) hides slots from
each other (`mapper` never sees `mapper`, `mapper` is unaware of `reducer`), so every
call pays for the labels and for the content check. A child process runs it RUNS times
after one warm-up run, sampled by py-spy at RATE Hz with its threads. Two inclusive
shares of the busy samples are compared, measured in the same samples so the machine's
load cancels out:

- *hiding*: a sample with a frame in the label algebra and the rules of who-sees-what
  (`prose/lang/flows.py`, `prose/lang/policy.py`, `prose/lang/content.py`), the content
  check at the message boundary (`prose/runtime/content.py`) or a relabelling of a value
  (`relabel` in `prose/runtime/values.py`, `Interpreter.bound`);
- *router*: a sample of the model call through LiteLLM: under `RouterClient._send`
  (which awaits `Router.acompletion`: LiteLLM, the OpenAI client, httpx) or in LiteLLM's
  own code elsewhere (its logging worker thread). Every peer pays this work.

The issue's budget: hiding under 5% of the router's own CPU per call.

Run: python bench/hiding_cost.py [RUNS]   (3 by default; needs py-spy: pip install py-spy)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import langgraph_compare as lg
from bench.profile_parallel import frames, sample
from bench.report import ROOT, load_average, stamp, write_section
from bench.stub import StubServer

RUNS = 3
RATE = 250
BUDGET = 0.05
HIDING_FILES = frozenset({"prose/lang/flows.py", "prose/lang/policy.py", "prose/lang/content.py",
                          "prose/runtime/content.py"})
HIDING_FUNCTIONS = frozenset({("relabel", "prose/runtime/values.py"),
                              ("Interpreter.bound", "prose/runtime/interpreter.py"),
                              ("bound", "prose/runtime/interpreter.py")})
SEND = "RouterClient._send"
CHILD = """
import asyncio, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench import langgraph_compare as lg
from bench.runtime import prose_run, stub_config
from prose.llm.loader import load_litellm
load_litellm()
config = stub_config(sys.argv[2], concurrency=lg.CAP)
inputs = {{"task_brief": lg.BRIEF, "chunks": lg.chunks()}}
with tempfile.TemporaryDirectory() as folder:
    def once():
        asyncio.run(prose_run(lg.PATTERN, config, Path(folder), inputs=inputs))
    once()  # imports and first-use costs stay out of the samples
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range({runs}):
        once()
"""


def record(api_base: str, runs: int, out: Path) -> None:
    """py-spy's raw samples of a child running the map-reduce `runs` times after a warm-up."""
    sample([sys.executable, "-c", CHILD.format(runs=runs), str(ROOT), api_base], out, RATE)


def hiding(stack: list[tuple[str, str]]) -> bool:
    return any(file in HIDING_FILES or (name, file) in HIDING_FUNCTIONS for name, file in stack)


def shares(raw: Path) -> tuple[int, int, int]:
    """Busy samples, those with hiding work in them, those of the model call (LiteLLM)."""
    busy = hidden = routed = 0
    for line in raw.read_text().splitlines():
        stack_text, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        stack = frames(stack_text)
        if not stack:
            continue
        name, file = stack[-1]
        if name == "_worker" and file.endswith("concurrent/futures/thread.py"):
            continue  # an idle pool thread waiting for work, not CPU
        samples = int(count)
        busy += samples
        hidden += samples * hiding(stack)
        routed += samples * any(name == SEND or file.startswith("litellm/") for name, file in stack)
    return busy, hidden, routed


def main() -> None:
    if {"-h", "--help"} & set(sys.argv[1:]):
        print(__doc__)
        return
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else RUNS
    before = load_average()
    with StubServer() as stub, tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "map-reduce.raw"
        record(stub.base_url(latency_ms=lg.LATENCY_MS, words=lg.WORDS), runs, raw)
        busy, hidden, routed = shares(raw)
    if not busy or not routed:
        raise SystemExit("no samples: is py-spy allowed to attach (ptrace)?")
    ratio = hidden / routed
    verdict = "within" if ratio < BUDGET else "over"
    body = f"""
## Information hiding per call, against `Router.acompletion`

{stamp()}
Load average {before:.2f} before, {load_average():.2f} after.

`python bench/hiding_cost.py {runs}`: py-spy at {RATE} Hz, all threads, over {runs} runs of
patterns/map-reduce.prose.md ({lg.ITEMS} mapper calls and a reducer, stub at
{lg.LATENCY_MS} ms, {lg.CAP} in flight) after a warm-up run. The pattern hides slots from
each other, so every call pays for its labels, the policy and the content check. Shares
are of the busy samples, inclusive, in the same samples (the machine's load cancels out).

| work | samples | share of busy samples |
|---|---|---|
| label algebra, policy, content check, relabelling | {hidden:,} | {hidden / busy:.1%} |
| the model call: `Router.acompletion` and below, LiteLLM's threads | {routed:,} | {routed / busy:.1%} |
| all busy samples | {busy:,} | 100% |

Information hiding costs **{ratio:.1%}** of `Router.acompletion`'s own CPU: {verdict} the
{BUDGET:.0%} budget of the soundness issue.
"""
    write_section("hiding-cost", body)
    print(body)


if __name__ == "__main__":
    main()
