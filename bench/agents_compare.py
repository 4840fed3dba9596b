"""prose's CPU per agent turn against the OpenAI Agents SDK and LangGraph's ReAct agent.

Run: python bench/agents_compare.py   (writes the `agents` section of docs/benchmarks.md)
Needs the peers in the bench environment only (`pip install openai-agents langgraph
langchain-openai`, the `bench` extra); without them the script says so and writes
nothing. Target (issue 37): prose's CPU per agent turn at or below both.

A turn is one model request and, when the model asks for one, the tool call and its
result that the next request carries. Each side runs `AGENTS` agents at once (at most
`CAP` requests in flight), each asked one question; the loopback stub (bench/stub.py,
its own process, `tools=TURNS`) answers every agent's first `TURNS` requests with a call
of its one tool, `lookup(term)`, a Python function that returns a fixed text, and the
next with the answer. The sides:

- prose: `bench/fixtures/agent-turns.prose.md`, a `parallel for` over the questions
  calling an agent slot whose tool is `mcp:lookup`, bound to the Python function, run
  by `run_pattern` as `prose run` runs it (trace on, a sealed workspace per call, the
  policy before every tool call);
- the OpenAI Agents SDK: `Runner.run` of an `Agent` with the function as a
  `function_tool`, on `OpenAIChatCompletionsModel` (tracing off: it would send spans);
- LangGraph: `create_react_agent` with the function as a tool, on `ChatOpenAI`.

CPU is the process's (`time.process_time()`) over the whole side, divided by the model
requests the stub served; the sides take turns, `REPEATS` rounds, medians reported.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import load_average, stamp, write_section
from bench.runtime import FIXTURES, MODEL, Sample, as_prose_runs, interleaved, stub_config
from bench.stub import StubServer

AGENTS = 40
TURNS = 3  # tool turns before each agent's answer: TURNS + 1 requests an agent
CAP = 16
LATENCY_MS = 5
REPEATS = 7
PATTERN = FIXTURES / "agent-turns.prose.md"
ANSWER = "the term means what the glossary says it means"


def lookup(term: str) -> str:
    """Look a term up in the glossary."""
    return f"{term}: {ANSWER}"


def questions() -> list[str]:
    return [f"What does term number {i} mean?" for i in range(AGENTS)]


def prose_side(api_base: str, folder: Path) -> Callable[[], Awaitable[int]]:
    from prose.runtime import RunOptions, run_pattern
    from prose.runtime.toolbox import PythonToolSpec

    config = stub_config(api_base, concurrency=CAP)
    tools = {"mcp:lookup": PythonToolSpec("bench.agents_compare:lookup", lookup,
                                          "Look a term up in the glossary.",
                                          {"term": "string"})}

    async def side() -> int:
        result = await run_pattern(PATTERN, RunOptions(
            inputs={"questions": questions()}, llm_config=config, default_model=MODEL,
            concurrency=CAP, tools=tools, trace_path=folder / "trace.jsonl",
            project_dir=folder))
        if result.exit_code != 0:
            raise RuntimeError(result.error.format() if result.error else result.status)
        return AGENTS

    return as_prose_runs(side)


def agents_sdk_side(api_base: str) -> Callable[[], Awaitable[int]]:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=api_base, api_key="sk-bench-not-a-key", max_retries=0)
    agent = Agent(name="glossary", instructions="Answer with the glossary's help.",
                  tools=[function_tool(lookup)],
                  model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client))
    limit = asyncio.Semaphore(CAP)

    async def one(question: str) -> str:
        async with limit:
            result = await Runner.run(agent, question, max_turns=TURNS + 2)
            return str(result.final_output)

    async def side() -> int:
        answers = await asyncio.gather(*(one(q) for q in questions()))
        assert all(answers)
        return AGENTS

    return side


def langgraph_side(api_base: str) -> Callable[[], Awaitable[int]]:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    model = ChatOpenAI(model=MODEL, base_url=api_base, api_key="sk-bench-not-a-key",
                       max_retries=0)
    graph = create_react_agent(model, [tool(lookup)],
                               prompt="Answer with the glossary's help.")
    limit = asyncio.Semaphore(CAP)

    async def one(question: str) -> str:
        async with limit:
            state = await graph.ainvoke({"messages": [("user", question)]})
            return str(state["messages"][-1].content)

    async def side() -> int:
        answers = await asyncio.gather(*(one(q) for q in questions()))
        assert all(answers)
        return AGENTS

    return side


def per_turn_ms(samples: list[Sample], turns: int) -> float:
    return statistics.median(s.cpu_s / turns * 1000 for s in samples)


async def measure(stub: StubServer, folder: Path) -> tuple[dict[str, list[Sample]], int]:
    api_base = stub.base_url(latency_ms=LATENCY_MS, words=8, tools=TURNS)
    sides: dict[str, Any] = {"prose": prose_side(api_base, folder),
                             "OpenAI Agents SDK": agents_sdk_side(api_base),
                             "LangGraph create_react_agent": langgraph_side(api_base)}
    for side in sides.values():  # warm: imports, connection pools, first-call caches
        await side()
    samples = await interleaved(sides, REPEATS, stub, progress=True)
    turns = AGENTS * (TURNS + 1)
    return samples, turns


def main() -> int:
    try:
        import agents  # noqa: F401
        import langchain_openai  # noqa: F401
        import langgraph  # noqa: F401
    except ImportError as error:
        print(f"agents_compare: a peer is missing ({error.name}); pip install openai-agents "
              "langgraph langchain-openai", file=sys.stderr)
        return 1
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    load_before = load_average()
    with StubServer() as stub, tempfile.TemporaryDirectory() as tmp:
        samples, turns = asyncio.run(measure(stub, Path(tmp)))
        # every side made exactly its requests: an agent that stopped early would be cheap
        served = stub.stats()["requests"]
    load_after = load_average()
    rows = []
    prose_ms = per_turn_ms(samples["prose"], turns)
    for name, taken in samples.items():
        ms = per_turn_ms(taken, turns)
        wall = statistics.median(s.wall_s for s in taken)
        rows.append(f"| {name} | {ms:.3f} | {ms / prose_ms:.2f}x | {wall:.2f} |")
    cheapest_peer = min(per_turn_ms(taken, turns) for name, taken in samples.items()
                        if name != "prose")
    verdict = ("met: prose's CPU per turn is at or below both peers'" if prose_ms <= cheapest_peer
               else f"not met: prose takes {prose_ms / cheapest_peer:.2f}x the CPU per turn of "
               "the cheaper peer")
    from importlib.metadata import version

    peers = (f"openai-agents {version('openai-agents')}, langgraph {version('langgraph')}, "
             f"langchain-openai {version('langchain-openai')}, openai {version('openai')}")
    body = f"""## Agents: CPU per agent turn (bench/agents_compare.py)

{stamp()} Peers: {peers}. Load average {load_before:.1f} before and {load_after:.1f}
after (the sides took turns, so each saw the same load; a loaded machine inflates the
absolute numbers).

{AGENTS} agents at once (at most {CAP} requests in flight), each taking {TURNS} tool turns
and answering: {turns} model requests and {AGENTS * TURNS} tool calls a run, against the
loopback stub ({LATENCY_MS} ms latency); the tool is one Python function for every side.
CPU of the whole process per model request (a turn: the request, its reply, the tool
call and its result), median of {REPEATS} interleaved rounds; the stub served {served}
requests in the last round's side.

| side | CPU ms per turn | vs prose | wall s per run |
|---|---|---|---|
{chr(10).join(rows)}

Goal (issue 37: at or below both): {verdict}. Where prose's CPU goes (py-spy of the
prose side, 2026-12-07): about 85% is LiteLLM's request path (`litellm.acompletion`:
parameter mapping, logging objects, cost), which prose uses for every model call and
the peers do not (both call the `openai` client directly); the stub's model has nothing
to route, so prose calls it without `litellm.Router` (`prose/llm/direct.py`), which
took about a fifth off each call. About 15% is prose's own. prose's
turn also includes what the peers do not do: the trace (hash chain, one `tool` event
per tool call with its output's digest), the sealed workspace of each agent call (laid
out, hashed before the answer is taken, removed) and the hiding policy asked before
every tool call.
"""
    write_section("agents", body)
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
