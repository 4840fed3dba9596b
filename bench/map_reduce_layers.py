"""Where the map-reduce's CPU per call goes, layer by layer, against the loopback stub.

The map-reduce of bench/pdl_compare.py (200 mapper calls and a reducer, stub latency
50 ms, 64 in flight) made by six sides in one process, taking turns in a rotating order:

- `direct`: `Router.acompletion` under a semaphore (bench/langgraph_compare.direct_run),
  on asyncio's loop as a user's script runs it;
- `direct, prose's loop`: the same on the loop `prose run` gives its runs
  (`bench.runtime.as_prose_runs`: LiteLLM's request preparation inline, prose's
  collector thresholds);
- `RouterClient, prose's loop`: the same calls through prose's model client
  (`prose.llm.router_client`), no interpreter;
- `prose`: `prose run` of patterns/map-reduce.prose.md with its trace;
- `LangGraph`: the `Send` graph of bench/langgraph_compare.py, on asyncio's loop;
- `LangGraph, prose's loop`: the same graph on prose's loop.

Each side's figure is the median over rounds of its CPU per call minus that of
`direct, prose's loop` in the same round: what the layer adds over the floor on the same
loop. bench/pdl_compare.py compares the sides as their users run them; this tells the
loop's share from the orchestration's.

Run: python bench/map_reduce_layers.py [ROUNDS]   (30 by default; writes its section)
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import langgraph_compare as lg
from bench.report import load_average, stamp, write_section
from bench.runtime import (
    Sample,
    Side,
    as_prose_runs,
    call_count,
    chat_request,
    interleaved,
    prose_run,
    stub_config,
    timed,
)
from bench.stub import StubServer
from prose.llm.config import LLMConfig
from prose.llm.loader import load_litellm
from prose.llm.router_client import RouterClient

ROUNDS = 30
FLOOR = "direct, prose's loop"
CALLS = lg.ITEMS + 1


async def through_client(config: LLMConfig, items: list[str]) -> int:
    """The map-reduce's calls through `RouterClient.complete`, no interpreter."""
    client = RouterClient(config)
    semaphore = asyncio.Semaphore(lg.CAP)

    async def mapper(index: int, chunk: str) -> str:
        async with semaphore:
            state = lg._chunk_state(index, chunk, len(items))
            return (await client.complete(chat_request(lg.mapper_messages(state), config.timeout_s))).text

    results = await asyncio.gather(*(mapper(i, chunk) for i, chunk in enumerate(items)))
    await client.complete(chat_request(lg.reducer_messages(lg.BRIEF, list(results)), config.timeout_s))
    return len(items) + 1


def sides(config: LLMConfig, folder: Path) -> dict[str, Side]:
    items = lg.chunks()
    inputs: dict[str, Any] = {"task_brief": lg.BRIEF, "chunks": items}

    async def prose() -> int:
        return call_count(await prose_run(lg.PATTERN, config, folder, inputs=inputs))

    async def langgraph() -> int:
        state = await lg.langgraph_run(config, items)
        return len(state["mapper_results"]) + 1

    async def direct() -> int:
        return await lg.direct_run(config, items)

    async def client() -> int:
        return await through_client(config, items)

    return {
        "direct": direct,
        FLOOR: as_prose_runs(direct),
        "RouterClient, prose's loop": as_prose_runs(client),
        "prose": as_prose_runs(prose),
        "LangGraph": langgraph,
        "LangGraph, prose's loop": as_prose_runs(langgraph),
    }


async def measure(
    rounds: int, make: Callable[[LLMConfig, Path], dict[str, Side]] = sides
) -> dict[str, list[Sample]]:
    """`rounds` rounds of the sides `make` gives, against one stub set for the map-reduce."""
    load_litellm()
    with StubServer() as stub, tempfile.TemporaryDirectory() as tmp:
        config = stub_config(stub.base_url(latency_ms=lg.LATENCY_MS, words=lg.WORDS),
                             concurrency=lg.CAP)
        runs = make(config, Path(tmp))
        for side in runs.values():  # warm: imports, the stub's connections
            await timed(side, stub)
        return await interleaved(runs, rounds, stub, progress=True)


def render(samples: dict[str, list[Sample]], rounds: int, load: tuple[float, float]) -> str:
    floor = samples[FLOOR]

    def over(name: str) -> float:
        return statistics.median(
            (a.cpu_s - b.cpu_s) / CALLS * 1000 for a, b in zip(samples[name], floor, strict=True))

    def below(name: str) -> int:
        return sum(a.cpu_s < b.cpu_s for a, b in zip(samples[name], floor, strict=True))

    rows = "\n".join(
        f"| {name} | {statistics.median(s.cpu_s for s in runs) / CALLS * 1000:.2f} | "
        f"{over(name):+.2f} | {below(name)} of {rounds} |"
        for name, runs in samples.items())
    prose_vs = {name: sum(a.cpu_s < b.cpu_s for a, b in
                          zip(samples["prose"], samples[name], strict=True))
                for name in ("LangGraph", "LangGraph, prose's loop")}
    return f"""
## Map-reduce, layer by layer

{stamp()}
Load average {load[0]:.2f} before, {load[1]:.2f} after.

The map-reduce of the PDL and LangGraph comparison ({lg.ITEMS} mapper calls and a reducer,
stub latency {lg.LATENCY_MS} ms, {lg.CAP} in flight), {rounds} rounds of six sides taking
turns in a rotating order in one process. "Over the floor" is the median over rounds of
the side's CPU per call minus that of `{FLOOR}` in the same round: what the layer adds
on the same event loop. "prose's loop" is the loop `prose run` gives its runs (LiteLLM's
request preparation inline, prose's collector thresholds: `bench.runtime.as_prose_runs`).

| side | CPU ms/call | over the floor, ms/call | runs cheaper than the floor |
|---|---|---|---|
{rows}

prose's run cost less CPU than LangGraph's in {prose_vs["LangGraph"]} of {rounds} rounds, and
less than LangGraph's on prose's loop in {prose_vs["LangGraph, prose's loop"]} of {rounds}.

`python bench/map_reduce_layers.py {rounds}`
"""


Render = Callable[[dict[str, list[Sample]], int, tuple[float, float]], str]


def run(doc: str | None, section: str, default_rounds: int, render: Render,
        make: Callable[[LLMConfig, Path], dict[str, Side]]) -> None:
    """A map-reduce benchmark's command line: `[ROUNDS]` or `--help`; writes `section`."""
    if {"-h", "--help"} & set(sys.argv[1:]):
        print(doc)
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else default_rounds
    before = load_average()
    samples = asyncio.run(measure(rounds, make))
    body = render(samples, rounds, (before, load_average()))
    write_section(section, body)
    print(body)


def main() -> None:
    run(__doc__, "map-reduce-layers", ROUNDS, render, sides)


if __name__ == "__main__":
    main()
