"""prose against LangGraph on the map-reduce alone, many rounds: how far apart they are, and how sure.

bench/pdl_compare.py judges issue 20's targets on 15 rounds of five sides. For the
map-reduce against LangGraph its paired ratio has read from 0.98x to 1.04x on the same
code, and its 95% interval (about 0.94-1.05x) holds 1.00: 15 rounds cannot tell the two
apart. This runs only those two sides, taking turns (which goes first alternates), for
60 rounds by default (with a third side, LangGraph skipping the router as prose does), against the same loopback stub (200 mapper calls and a reducer,
stub latency 50 ms, 64 in flight), each as its users run it: `prose run`'s settings for
prose (`bench.runtime.as_prose_runs`), Python's defaults for LangGraph. The interval for
the median paired ratio is distribution-free (`bench.runtime.median_interval`); at 60
rounds it is about half as wide as at 15 (the width goes as one over the square root of the rounds).

Run: python bench/head_to_head.py [ROUNDS]   (60 by default, about 5 min; writes its section)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import langgraph_compare as lg
from bench import map_reduce_layers as layers
from bench.report import stamp
from bench.runtime import (
    Sample,
    Side,
    interval_name,
    median,
    paired_ratio,
    paired_ratio_interval,
)
from prose.llm.config import LLMConfig

ROUNDS = 60
CALLS = lg.ITEMS + 1


UNROUTED = "LangGraph, unrouted"


def sides(config: LLMConfig, folder: Path) -> dict[str, Side]:
    """prose and LangGraph, as map_reduce_layers makes them (prose in `prose run`'s settings),
    and LangGraph whose nodes skip the router as prose does for a model with nothing to
    route (`prose.llm.direct`)."""
    both = layers.sides(config, folder)
    items = lg.chunks()

    async def unrouted() -> int:
        state = await lg.langgraph_run(config, items, routed=False)
        return len(state["mapper_results"]) + 1

    return {"prose": both["prose"], "LangGraph": both["LangGraph"], UNROUTED: unrouted}


def rows_against(samples: dict[str, list[Sample]], peer: str, rounds: int) -> list[str]:
    prose, theirs = samples["prose"], samples[peer]
    rows = []
    for label, measure in (("CPU per call", "cpu_s"), ("wall", "wall_s")):
        ratio = paired_ratio(prose, theirs, measure)
        low, high = paired_ratio_interval(prose, theirs, measure)
        won = sum(getattr(a, measure) <= getattr(b, measure)
                  for a, b in zip(prose, theirs, strict=True))
        scale, unit = (1000 / CALLS, "ms a call") if measure == "cpu_s" else (1.0, "s a run")
        rows.append(f"| {label} | {peer} | {median(prose, measure) * scale:.2f} | "
                    f"{median(theirs, measure) * scale:.2f} | {unit} | {ratio:.3f}x | "
                    f"{low:.3f}-{high:.3f}x | {won} of {rounds} |")
    return rows


def render(samples: dict[str, list[Sample]], rounds: int, load: tuple[float, float]) -> str:
    table = "\n".join([*rows_against(samples, "LangGraph", rounds),
                       *rows_against(samples, UNROUTED, rounds)])
    return f"""
## prose and LangGraph head to head: the map-reduce

{stamp()}
Load average {load[0]:.2f} before, {load[1]:.2f} after.

The map-reduce of the PDL and LangGraph comparison ({lg.ITEMS} mapper calls and a reducer,
stub latency {lg.LATENCY_MS} ms, {lg.CAP} in flight), prose and LangGraph alone taking turns
for {rounds} rounds, each as its users run it (`prose run`'s loop settings for prose,
Python's defaults for LangGraph), LangGraph {lg.langgraph_version()}. The ratio is the median
over rounds of prose's run over the peer's in the same round; the interval is a
distribution-free 95% interval for that median (two order statistics of the rounds' ratios).

The peer as the earlier tables measure it, **LangGraph**, calls `Router.acompletion` from its
nodes. prose calls `litellm.acompletion` with the deployment's parameters for a model with
nothing to route (`prose/llm/direct.py`: one deployment, no fallbacks, no router
settings, as here), which is most of the difference; **{UNROUTED}** is the same graph
with its nodes doing the same (`bench.runtime.UnroutedCaller`), to show what is left
when both skip the router.

| measure | peer | prose | peer | unit | paired ratio | {interval_name(rounds)} | rounds prose was cheaper |
|---|---|---|---|---|---|---|---|
{table}

`python bench/head_to_head.py {rounds}`
"""


def main() -> None:
    layers.run(__doc__, "head-to-head", ROUNDS, render, sides)


if __name__ == "__main__":
    main()
