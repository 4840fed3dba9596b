"""prose against LangGraph: a map-reduce over 200 items, and cold start.

Run: python bench/langgraph_compare.py   (writes the `langgraph` section of docs/benchmarks.md)
Needs LangGraph in the bench environment only (`pip install langgraph`; it is
not a dependency of prose); without it the script says so and writes nothing.
Targets (issue 7, point 6): map-reduce wall time and CPU per call, prose <=
LangGraph; cold `prose lint patterns/` <= 0.3 s against `import litellm`.

The map-reduce is `patterns/map-reduce.prose.md` run by `run_pattern` (trace
on, as `prose run` runs it) and an equivalent LangGraph graph: a `Send` per
chunk to a `map` node, then a `reduce` node, each node calling
`Router.acompletion` on a router built from the same `LLMConfig` with the
same messages prose sends. Both run in this one process against the same
loopback stub (fixed latency), under the same concurrency cap, taking turns.
"""

from __future__ import annotations

import asyncio
import json
import operator
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import ROOT, stamp, write_section
from bench.runtime import (
    MODEL,
    Sample,
    Side,
    UnroutedCaller,
    as_prose_runs,
    call_count,
    direct_router,
    interleaved,
    median,
    paired_difference,
    paired_ratio,
    prose_run,
    stub_config,
)
from bench.stub import StubServer
from prose.llm import LLMConfig

ITEMS = 200
LATENCY_MS = 50
CAP = 64
WORDS = 20  # each mapper's reply
REPEATS = 7
COLD_REPEATS = 5
DIRECT = "direct (no framework)"
PATTERN = ROOT / "patterns" / "map-reduce.prose.md"
BRIEF = "List the risks this part of the design document mentions."
REDUCE_PROMPT = (
    "Merge the partial results into one result for the task. Resolve overlaps explicitly "
    "and keep conflicting findings visible instead of silently picking one."
)
# LiteLLM's import downloads its price list unless told not to; prose sets both.
OFFLINE = {"LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "true"}


def langgraph_version() -> str | None:
    """The installed LangGraph's version, or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langgraph")
    except PackageNotFoundError:
        return None


def chunks() -> list[str]:
    return [f"Section {i}: the cache may serve stale prices after a deploy." for i in range(ITEMS)]


# The LangGraph side ------------------------------------------------------------------


class MapReduceState(TypedDict, total=False):
    task_brief: str
    chunks: list[str]
    mapper_results: Annotated[list[tuple[int, str]], operator.add]
    result: str


class ChunkState(TypedDict):
    task_brief: str
    chunk: str
    chunk_index: int
    chunk_count: int


def mapper_messages(state: ChunkState) -> list[dict[str, str]]:
    """The messages prose builds for a mapper call (same text, so both sides send the same)."""
    sections = ("task_brief", "chunk", "chunk_index", "chunk_count")
    fields: dict[str, Any] = dict(state)
    user = "\n\n".join(f"## {name}\n{fields[name]}" for name in sections)
    return [
        {"role": "system", "content": "Produce: partial result for the chunk"},
        {"role": "user", "content": user},
    ]


def reducer_messages(task_brief: str, results: list[str]) -> list[dict[str, str]]:
    listing = json.dumps(results, ensure_ascii=False, indent=2)
    user = f"{REDUCE_PROMPT}\n\n## task_brief\n{task_brief}\n\n## mapper_results\n{listing}"
    return [
        {"role": "system", "content": "Produce: merged result for the whole task"},
        {"role": "user", "content": user},
    ]


def build_graph(router: Any, timeout_s: float) -> Any:
    """Send-based fan-out to `map`, then `reduce`; both nodes call `router.acompletion`."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    async def map_node(state: ChunkState) -> dict[str, Any]:
        reply = await router.acompletion(
            model=MODEL, messages=mapper_messages(state), timeout=timeout_s
        )
        return {"mapper_results": [(state["chunk_index"], reply.choices[0].message.content)]}

    async def reduce_node(state: MapReduceState) -> dict[str, Any]:
        ordered = [text for _, text in sorted(state["mapper_results"])]
        reply = await router.acompletion(
            model=MODEL, messages=reducer_messages(state["task_brief"], ordered), timeout=timeout_s
        )
        return {"result": reply.choices[0].message.content}

    # Annotated `list[Any]`: LangGraph evaluates the hints, and `Send` is imported locally.
    def fan_out(state: MapReduceState) -> list[Any]:
        count = len(state["chunks"])
        return [
            Send("map", ChunkState(task_brief=state["task_brief"], chunk=chunk,
                                   chunk_index=index, chunk_count=count))
            for index, chunk in enumerate(state["chunks"])
        ]  # fmt: skip

    graph = StateGraph(MapReduceState)
    graph.add_node("map", map_node)
    graph.add_node("reduce", reduce_node)
    graph.add_conditional_edges(START, fan_out, ["map"])
    graph.add_edge("map", "reduce")
    graph.add_edge("reduce", END)
    return graph.compile()


async def langgraph_run(config: LLMConfig, items: list[str], *, routed: bool = True
                        ) -> dict[str, Any]:
    """Build the router and the graph (as prose builds its router and loads its pattern), run.
    `routed=False`: the nodes call `litellm.acompletion` with the deployment's parameters,
    as prose does for a model with nothing to route (`bench.runtime.UnroutedCaller`)."""
    caller = direct_router(config) if routed else UnroutedCaller(config)
    app = build_graph(caller, config.timeout_s)
    state: dict[str, Any] = await app.ainvoke(
        {"task_brief": BRIEF, "chunks": items, "mapper_results": []},
        config={"max_concurrency": CAP},
    )
    return state


async def direct_run(config: LLMConfig, items: list[str]) -> int:
    """The floor: the same calls with `asyncio.gather` under a semaphore, no framework."""
    router = direct_router(config)
    semaphore = asyncio.Semaphore(CAP)

    async def mapper(index: int, chunk: str) -> str:
        async with semaphore:
            messages = mapper_messages(_chunk_state(index, chunk, len(items)))
            reply = await router.acompletion(
                model=MODEL, messages=messages, timeout=config.timeout_s
            )
            return str(reply.choices[0].message.content)

    results = await asyncio.gather(*(mapper(i, chunk) for i, chunk in enumerate(items)))
    await router.acompletion(
        model=MODEL, messages=reducer_messages(BRIEF, list(results)), timeout=config.timeout_s
    )
    return len(items) + 1


# Measurements ----------------------------------------------------------------------------


async def map_reduce(stub: StubServer, folder: Path) -> dict[str, list[Sample]]:
    config = stub_config(stub.base_url(latency_ms=LATENCY_MS, words=WORDS), concurrency=CAP)
    items = chunks()
    inputs = {"task_brief": BRIEF, "chunks": items}

    async def through_prose() -> int:
        result = await prose_run(PATTERN, config, folder, inputs=inputs, concurrency=CAP)
        return call_count(result)

    async def through_langgraph() -> int:
        state = await langgraph_run(config, items)
        return len(state["mapper_results"]) + 1

    # Warm up both (imports on first use), and check that they send the same messages.
    warm = await prose_run(PATTERN, config, folder, inputs=inputs, concurrency=CAP)
    state = await langgraph_run(config, items)
    sent = sorted(json.dumps(e.messages) for e in warm.events if e.type == "call")
    ours = [mapper_messages(_chunk_state(i, c)) for i, c in enumerate(items)]
    ours.append(reducer_messages(BRIEF, warm.value["mapper_results"]))
    if len(state["mapper_results"]) != ITEMS or not state.get("result"):
        raise RuntimeError("the LangGraph run did not map every chunk and reduce")
    if sent != sorted(json.dumps(m) for m in ours):
        raise RuntimeError("the LangGraph nodes do not send the messages prose sends")
    sides: dict[str, Side] = {
        "prose": as_prose_runs(through_prose),
        "LangGraph": through_langgraph,
        DIRECT: lambda: direct_run(config, items),
    }
    return await interleaved(sides, REPEATS, stub)


def _chunk_state(index: int, chunk: str, count: int = ITEMS) -> ChunkState:
    return ChunkState(task_brief=BRIEF, chunk=chunk, chunk_index=index, chunk_count=count)


def cold_starts() -> dict[str, list[float]]:
    """Seconds of each cold start, the commands taking turns."""
    python = sys.executable
    commands = {
        "`prose lint patterns/`": [
            python, "-c", "from prose.cli.main import main; main()", "lint", "patterns/",
        ],
        "`python -c 'import litellm'`": [python, "-c", "import litellm"],
        "`python -c 'import langgraph.graph'`": [python, "-c", "import langgraph.graph"],
    }  # fmt: skip
    environment = {**os.environ, **OFFLINE}
    timings: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(COLD_REPEATS):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, check=True)
            timings[name].append(time.perf_counter() - start)
    return timings


# Report ---------------------------------------------------------------------------------------


def render(
    runs: dict[str, list[Sample]],
    cold: dict[str, list[float]],
    version: str,
    load: tuple[float, float],
) -> str:
    prose, graph = runs["prose"], runs["LangGraph"]
    wall = paired_ratio(prose, graph, "wall_s")
    cpu = paired_ratio(prose, graph, "cpu_s")
    floor = runs[DIRECT]
    rows = "\n".join(
        f"| {name} | {median(s, 'wall_s'):.2f} | {median(s, 'cpu_ms_per_call'):.2f} "
        f"| {paired_difference(s, floor, 'cpu_ms_per_call'):.2f} "
        f"| {median(s, 'gc_s'):.2f} | {max(x.max_in_flight for x in s)} "
        f"| {', '.join(f'{x.wall_s:.2f}' for x in s)} |"
        for name, s in runs.items()
    )
    lint = statistics.median(cold["`prose lint patterns/`"])
    litellm = statistics.median(cold["`python -c 'import litellm'`"])
    cold_rows = "\n".join(
        f"| {name} | {statistics.median(t):.3f} | {', '.join(f'{x:.2f}' for x in t)} |"
        for name, t in cold.items()
    )

    def verdict(ratio: float) -> str:
        return f"{ratio:.2f}x ({'meets' if ratio <= 1 else 'misses'} prose <= LangGraph)"

    files = len(list((ROOT / "patterns").glob("*.prose.md")))
    return f"""## prose and LangGraph

{stamp()}
LangGraph {version}. Load average {load[0]:.2f} before, {load[1]:.2f} after (the machine
was shared with other work; compare the medians).

### Map-reduce over {ITEMS} items, stub latency {LATENCY_MS} ms, cap {CAP}

prose runs `patterns/map-reduce.prose.md` (`parallel for` over the chunks,
then one reducer call) with `run_pattern` as `prose run` runs it, the trace
written to a file. LangGraph runs an equivalent graph: a `Send` per chunk to
a `map` node, whose results are gathered by an `operator.add` reducer in the
state, then a `reduce` node; `max_concurrency={CAP}`, no checkpointer. Both
nodes call `litellm.Router.acompletion` on a router built from the same
`LLMConfig` as prose's, with the same messages prose sends (checked before
timing), so the difference is orchestration alone. Each run builds its
router, and prose loads its pattern while LangGraph builds and compiles its
graph. Both sides ran in the same process run, against the same loopback
stub (`bench/stub.py`, a child process), taking turns, {REPEATS} runs each;
figures are medians, and a ratio is the median of the ratios of the runs
made one after the other; CPU per call is the process's `time.process_time()`
over the {ITEMS + 1} calls. "{DIRECT}" is the floor both stand on: the
same calls made with `asyncio.gather` under an `asyncio.Semaphore({CAP})`; "over
direct" is the median of the paired differences, the orchestration's own
cost per call.

| side | wall s | CPU ms/call | CPU ms/call over direct | GC s | most in flight | wall s of each run |
|---|---|---|---|---|---|---|
{rows}

prose/LangGraph: wall {verdict(wall)}, CPU per call {cpu:.2f}x.

### Cold start

Median of {COLD_REPEATS} runs of each command in a new process, the commands
taking turns; `import litellm` with `LITELLM_LOCAL_MODEL_COST_MAP=true` and
`LITELLM_OFFLINE_MODE=true` (as prose imports it; without them the import
tries to download a price list).

| command | median s | each run, s |
|---|---|---|
{cold_rows}

`prose lint patterns/` ({files} files) takes {lint:.3f} s
({"meets" if lint <= 0.3 else "misses"} <= 0.3 s), {litellm / lint:.0f}x less than importing LiteLLM alone
({litellm:.2f} s): the lint path never imports LiteLLM.
"""


async def measure() -> dict[str, list[Sample]]:
    with StubServer() as stub, tempfile.TemporaryDirectory() as directory:
        return await map_reduce(stub, Path(directory))


def main() -> None:
    version = langgraph_version()
    if version is None:
        print(
            "skipped: LangGraph is not installed. It is a bench-only dependency: "
            "pip install langgraph (not a dependency of prose), then run again."
        )
        return
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        os.environ.pop(name, None)  # no tracing to a remote service
    load_before = os.getloadavg()[0]
    runs = asyncio.run(measure())
    cold = cold_starts()
    body = render(runs, cold, version, (load_before, os.getloadavg()[0]))
    write_section("langgraph", body)
    print(body)


if __name__ == "__main__":
    main()
