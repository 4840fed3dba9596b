"""prose against IBM's PDL, LangGraph and the bare Router: chain, map-reduce, parallel for, dialectic.

Run: python bench/pdl_compare.py   (writes the `pdl` section of docs/benchmarks.md)
Needs the bench extra (`pip install -e '.[bench]'`: prompt-declaration-language
and langgraph, not dependencies of prose); without them the script says so and
exits with status 1.
Targets (issue 20, point 1): map-reduce over 200 items and the 1,000-item
parallel for, prose's CPU per call <= LangGraph's and <= PDL's, wall <= both;
the dialectic's prompt tokens per call flat in rounds for prose, and how PDL's grow.

Four workloads, each run by every side in the same benchmark run, against the
same loopback stub (`bench/stub.py`), the sides taking turns in a rotating
order; figures are medians, and a target is judged on the paired ratio (the median
over rounds of prose's run over the peer's run of the same round). prose is `run_pattern` as `prose run` runs it
(trace written). PDL runs `bench/pdl/*.pdl` with `pdl.pdl.exec_file` in a
worker process of its own (bench/pdl_side.py says why), which times itself.
LangGraph graphs (bench/peer_graphs.py, bench/langgraph_compare.py) and the
bare Router call `Router.acompletion` on a router built from the same
`LLMConfig` as prose's; PDL calls `litellm.acompletion` with the same model,
`api_base` and key, as a PDL program does, so PDL gets a floor of its own:
the same calls with `litellm.acompletion` in its worker, no PDL program. Before timing, every side's
messages are checked equal to prose's (except the PDL document dialectic,
whose growing messages are the point of measuring it).
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import langgraph_compare as lg
from bench.pdl_side import FLOOR, MISSING, PdlWorker, pdl_version
from bench.peer_graphs import (
    CHAIN_TASK,
    Messages,
    antithesis_messages,
    chain_graph,
    chain_messages,
    dialectic_graph,
    item_messages,
    items_graph,
    thesis_messages,
)
from bench.report import ROOT, write_section
from bench.runtime import (
    FIXTURES,
    MODEL,
    Sample,
    Side,
    as_prose_runs,
    call_count,
    direct_calls,
    direct_router,
    prose_run,
    sent_messages,
    stub_config,
    timed,
)
from bench.stub import StubServer
from prose.llm import LLMConfig

CAP = lg.CAP
LATENCY_MS = lg.LATENCY_MS
CHAIN_CALLS = 100
CHAIN_REPEATS = 7
MAP_REPEATS = 15  # its runs are short (2 s): more rounds steady the paired ratio
PARALLEL_ITEMS = 1000
PARALLEL_REPEATS = 3
ROUNDS = (2, 8)
DIALECTIC_REPEATS = 5
ARGUMENT_WORDS = 80
DIALECTIC = ROOT / "patterns" / "dialectic.prose.md"
DIRECT = "direct (no framework)"
PDL = "PDL"
PDL_DOCUMENT = "PDL, document (idiomatic)"
PDL_EXPLICIT = "PDL, explicit input"
PDL_FLOOR = "PDL's floor (litellm.acompletion)"


@dataclass(frozen=True)
class PdlJob:
    """A side run by the PDL worker: `bench/pdl/<program>.pdl` with `scope`."""

    program: str
    scope: dict[str, Any]


@dataclass
class Workload:
    """One workload's timed runs and tracemalloc peaks, per side."""

    samples: dict[str, list[Sample]]
    peaks: dict[str, int]
    tokens: dict[str, dict[int, list[int]]] = field(default_factory=dict)


Measured = Callable[[], Awaitable[Sample]]


class Bench:
    """The stub, the PDL worker and a scratch folder, shared by the workloads."""

    def __init__(self, stub: StubServer, worker: PdlWorker, folder: Path) -> None:
        self.stub, self.worker, self.folder = stub, worker, folder

    def llm(self, api_base: str) -> dict[str, Any]:
        """PDL's `parameters:` for the stub deployment prose's config names."""
        # PDL sends every call of a parallel for at once (no cap): on a loaded machine the
        # last of 1,000 waits its turn for LiteLLM's CPU far longer than a minute.
        return {"api_base": api_base, "api_key": "sk-bench-not-a-key", "timeout": 600}

    def pdl(self, job: PdlJob, *, memory: bool = False, record: bool = False) -> dict[str, Any]:
        return self.worker.run(job.program, job.scope, memory=memory, record=record)

    async def pdl_sample(self, job: PdlJob) -> Sample:
        self.stub.reset()
        reply = self.pdl(job)
        seen = self.stub.stats()
        if seen["requests"] != reply["calls"]:
            raise RuntimeError(f"{job.program}.pdl: {reply['calls']} calls, the stub saw {seen}")
        return Sample(
            reply["wall_s"], reply["cpu_s"], reply["gc_s"], reply["calls"], seen["max_in_flight"]
        )

    async def peak(self, side: Side | PdlJob) -> int:
        """The tracemalloc peak of one more, untimed run of `side` (Python allocations)."""
        if isinstance(side, PdlJob):
            return int(self.pdl(side, memory=True)["peak_bytes"])
        gc.collect()
        tracemalloc.start()
        try:
            await side()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    async def measure(self, sides: dict[str, Side | PdlJob], repeats: int) -> Workload:
        """Every side `repeats` times, taking turns in a rotating order (this process's sides
        next to each other); then each one's peak."""

        def measured(side: Side | PdlJob) -> Measured:
            if isinstance(side, PdlJob):
                return lambda: self.pdl_sample(side)
            return lambda: timed(side, self.stub)

        runs = {name: measured(side) for name, side in sides.items()}
        # The sides of this process first (prose, LangGraph, direct), PDL's after them: in
        # a rotation of that list, prose's run comes right before LangGraph's in all but one
        # round of every len(names), so their paired ratio compares runs made one after the
        # other. In the order of `sides`, PDL's run (seconds, in another process) came
        # between them in every round.
        names = sorted(runs, key=lambda name: isinstance(sides[name], PdlJob))
        samples: dict[str, list[Sample]] = {name: [] for name in sides}
        for repeat in range(repeats):
            shift = repeat % len(names)
            for name in names[shift:] + names[:shift]:
                samples[name].append(await runs[name]())
        peaks = {name: await self.peak(side) for name, side in sides.items()}
        return Workload(samples, peaks)


def _same(name: str, sent: list[Messages], expected: list[Messages], ordered: bool = True) -> None:
    if not ordered:
        sent, expected = sorted(sent, key=repr), sorted(expected, key=repr)
    if sent != expected:
        raise RuntimeError(f"{name} does not send the messages prose sends")


# The workloads -------------------------------------------------------------------------------


async def chain(bench: Bench) -> Workload:
    """CHAIN_CALLS calls one after the other, stub latency 0."""
    base = bench.stub.base_url(latency_ms=0)
    config = stub_config(base)
    pattern = FIXTURES / "sequential.prose.md"
    inputs, settings = {"task": CHAIN_TASK}, {"calls": CHAIN_CALLS}
    messages = [chain_messages(CHAIN_TASK, step) for step in range(1, CHAIN_CALLS + 1)]
    job = PdlJob("chain", {"llm": bench.llm(base), "task": CHAIN_TASK, "calls": CHAIN_CALLS})

    async def through_prose() -> int:
        result = await prose_run(pattern, config, bench.folder, inputs=inputs, settings=settings)
        return call_count(result)

    async def through_langgraph() -> int:
        app = chain_graph(direct_router(config), config.timeout_s, CHAIN_TASK, CHAIN_CALLS)
        state = await app.ainvoke(
            {"step": 0, "answers": []}, config={"recursion_limit": CHAIN_CALLS + 10}
        )
        return len(state["answers"])

    warm = await prose_run(pattern, config, bench.folder, inputs=inputs, settings=settings)
    _same("the Python builder", messages, sent_messages(warm))
    _same("chain.pdl", bench.pdl(job, record=True)["messages"], messages)
    await through_langgraph()
    sides: dict[str, Side | PdlJob] = {
        "prose": as_prose_runs(through_prose),
        PDL: job,
        "LangGraph": through_langgraph,
        DIRECT: lambda: direct_calls(config, messages),
        PDL_FLOOR: PdlJob(FLOOR, {"llm": bench.llm(base), "stages": [messages], "cap": None}),
    }
    return await bench.measure(sides, CHAIN_REPEATS)


async def map_reduce(bench: Bench) -> Workload:
    """bench/langgraph_compare.py's map-reduce over its 200 chunks, with PDL added."""
    base = bench.stub.base_url(latency_ms=LATENCY_MS, words=lg.WORDS)
    config = stub_config(base, concurrency=CAP)
    items = lg.chunks()
    inputs = {"task_brief": lg.BRIEF, "chunks": items}
    scope = {"chunks": items, "task_brief": lg.BRIEF, "reduce_prompt": lg.REDUCE_PROMPT}
    job = PdlJob("map_reduce", {"llm": bench.llm(base), **scope})

    async def through_prose() -> int:
        result = await prose_run(lg.PATTERN, config, bench.folder, inputs=inputs)
        return call_count(result)

    async def through_langgraph() -> int:
        state = await lg.langgraph_run(config, items)
        return len(state["mapper_results"]) + 1

    bench.stub.reset()
    warm = await prose_run(lg.PATTERN, config, bench.folder, inputs=inputs)
    ours = [
        lg.mapper_messages(lg.ChunkState(task_brief=lg.BRIEF, chunk=chunk, chunk_index=index,
                                         chunk_count=len(items)))
        for index, chunk in enumerate(items)
    ]  # fmt: skip
    ours.append(lg.reducer_messages(lg.BRIEF, warm.value["mapper_results"]))
    _same("the LangGraph nodes", ours, sent_messages(warm), ordered=False)
    bench.stub.reset()
    recorded = bench.pdl(job, record=True)["messages"]
    _same("map_reduce.pdl's mappers", recorded[:-1], ours[:-1], ordered=False)
    if recorded[-1][0] != ours[-1][0] or not recorded[-1][1]["content"].startswith(
        ours[-1][1]["content"].split("## mapper_results")[0]
    ):
        raise RuntimeError("map_reduce.pdl's reducer does not send the messages prose sends")
    await through_langgraph()
    sides: dict[str, Side | PdlJob] = {
        "prose": as_prose_runs(through_prose),
        PDL: job,
        "LangGraph": through_langgraph,
        DIRECT: lambda: lg.direct_run(config, items),
        PDL_FLOOR: PdlJob(
            FLOOR, {"llm": bench.llm(base), "stages": [ours[:-1], ours[-1:]], "cap": CAP}
        ),
    }
    return await bench.measure(sides, MAP_REPEATS)


async def parallel(bench: Bench) -> Workload:
    """bench/runtime.py's `parallel for` over 1,000 items at 50 ms, cap 64."""
    base = bench.stub.base_url(latency_ms=LATENCY_MS)
    config = stub_config(base, concurrency=CAP)
    pattern = FIXTURES / "parallel.prose.md"
    items = [f"item {i}: name one use of a paperclip" for i in range(PARALLEL_ITEMS)]
    messages = [item_messages(item, position) for position, item in enumerate(items)]
    job = PdlJob("parallel", {"llm": bench.llm(base), "items": items})

    async def through_prose(some: list[str] = items) -> int:
        result = await prose_run(pattern, config, bench.folder, inputs={"items": some})
        return call_count(result)

    async def through_langgraph(some: list[str] = items) -> int:
        app = items_graph(direct_router(config), config.timeout_s)
        state = await app.ainvoke(
            {"items": some, "answers": []},
            config={"max_concurrency": CAP, "recursion_limit": len(some) + 10},
        )
        return len(state["answers"])

    # Warm up on the first CAP items, and check the messages there.
    warm = await prose_run(pattern, config, bench.folder, inputs={"items": items[:CAP]})
    _same("the Python builder", messages[:CAP], sent_messages(warm), ordered=False)
    small = PdlJob("parallel", {**job.scope, "items": items[:CAP]})
    _same("parallel.pdl", bench.pdl(small, record=True)["messages"], messages[:CAP], ordered=False)
    await through_langgraph(items[:CAP])
    sides: dict[str, Side | PdlJob] = {
        "prose": as_prose_runs(through_prose),
        PDL: job,
        "LangGraph": through_langgraph,
        DIRECT: lambda: direct_calls(config, messages, cap=CAP),
        PDL_FLOOR: PdlJob(FLOOR, {"llm": bench.llm(base), "stages": [messages], "cap": CAP}),
    }
    return await bench.measure(sides, PARALLEL_REPEATS)


async def _direct_dialectic(config: LLMConfig, rounds: int) -> int:
    """The dialectic's calls with `Router.acompletion`, no framework."""
    router = direct_router(config)
    antithesis: str | None = None
    for _ in range(rounds):
        reply = await router.acompletion(
            model=MODEL, messages=thesis_messages(lg.BRIEF, antithesis), timeout=config.timeout_s
        )
        thesis = str(reply.choices[0].message.content)
        reply = await router.acompletion(
            model=MODEL, messages=antithesis_messages(lg.BRIEF, thesis), timeout=config.timeout_s
        )
        antithesis = str(reply.choices[0].message.content)
    return 2 * rounds


async def dialectic(bench: Bench) -> Workload:
    """patterns/dialectic.prose.md at 2 and 8 rounds: prompt tokens per call; timed at 8."""
    base = bench.stub.base_url(latency_ms=0, words=ARGUMENT_WORDS)
    config = stub_config(base)
    llm = bench.llm(base)
    tokens: dict[str, dict[int, list[int]]] = {"prose": {}, PDL_DOCUMENT: {}, PDL_EXPLICIT: {}}
    for rounds in ROUNDS:
        scope = {"llm": llm, "task_brief": lg.BRIEF, "rounds": rounds}
        bench.stub.reset()
        settings = {"rounds": rounds}
        ran = await prose_run(
            DIALECTIC, config, bench.folder, inputs={"task_brief": lg.BRIEF}, settings=settings
        )
        tokens["prose"][rounds] = [e.usage.prompt_tokens for e in ran.events if e.type == "call"]
        bench.stub.reset()
        explicit = bench.pdl(PdlJob("dialectic_explicit", scope), record=True)
        _same("dialectic_explicit.pdl", explicit["messages"], sent_messages(ran))
        tokens[PDL_EXPLICIT][rounds] = explicit["prompt_tokens"]
        document = bench.pdl(PdlJob("dialectic", scope), record=True)
        tokens[PDL_DOCUMENT][rounds] = document["prompt_tokens"]
    rounds = max(ROUNDS)
    scope = {"llm": llm, "task_brief": lg.BRIEF, "rounds": rounds}

    async def through_prose() -> int:
        result = await prose_run(
            DIALECTIC,
            config,
            bench.folder,
            inputs={"task_brief": lg.BRIEF},
            settings={"rounds": rounds},
        )
        return call_count(result)

    async def through_langgraph() -> int:
        app = dialectic_graph(direct_router(config), config.timeout_s, lg.BRIEF, rounds)
        state = await app.ainvoke({"round": 0}, config={"recursion_limit": 2 * rounds + 10})
        return 2 * len(state["exchange"])

    await through_langgraph()
    sides: dict[str, Side | PdlJob] = {
        "prose": as_prose_runs(through_prose),
        PDL_DOCUMENT: PdlJob("dialectic", scope),
        PDL_EXPLICIT: PdlJob("dialectic_explicit", scope),
        "LangGraph": through_langgraph,
        DIRECT: lambda: _direct_dialectic(config, rounds),
    }
    measured = await bench.measure(sides, DIALECTIC_REPEATS)
    measured.tokens = tokens
    return measured


async def measure_all() -> dict[str, Workload]:
    with (
        StubServer() as stub,
        PdlWorker() as worker,
        tempfile.TemporaryDirectory() as directory,
    ):
        bench = Bench(stub, worker, Path(directory))
        steps = {"chain": chain, "map_reduce": map_reduce, "parallel": parallel}
        workloads: dict[str, Workload] = {}
        for name, step in {**steps, "dialectic": dialectic}.items():
            print(f"pdl_compare: {name}", file=sys.stderr, flush=True)
            workloads[name] = await step(bench)
        return workloads


def main() -> None:
    from bench.pdl_report import render

    version, graph = pdl_version(), lg.langgraph_version()
    if version is None or graph is None:
        missing = MISSING if version is None else MISSING.replace("PDL", "LangGraph", 1)
        raise SystemExit(f"bench/pdl_compare.py: {missing}")
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        os.environ.pop(name, None)  # no tracing to a remote service
    load_before = os.getloadavg()[0]
    workloads = asyncio.run(measure_all())
    body = render(workloads, version, graph, (load_before, os.getloadavg()[0]))
    write_section("pdl", body)
    print(body)


if __name__ == "__main__":
    main()
