"""Interpreter overhead against LiteLLM alone, on a loopback stub; dialectic prompt size.

Run: python bench/runtime.py   (writes the `runtime` section of docs/benchmarks.md)
Targets (issue 5, point 12):
- N sequential calls through `prose` within 1.05x of the same N calls made by
  `Router.acompletion` directly (the interpreter adds well under 1 ms per call);
- a `parallel for` over 1,000 items at 50 ms stub latency with a cap of 64
  within 1.2x of the same calls under an `asyncio.Semaphore(64)`;
- dialectic prompt tokens per call flat as rounds grow.

Both sides of each comparison run in this one process, against the same stub
(`bench/stub.py`, a child process, so its work is not counted as ours), with
a router built from the same `LLMConfig` as `prose run` builds it. The sides
take turns, in a rotating order, and the medians are reported.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import ROOT, stamp, write_section
from bench.stub import StubServer
from prose.llm import ChatRequest, ChatResponse, LLMConfig, Message, RouterClient, Usage, collector
from prose.llm.direct import direct_params
from prose.llm.event_loop import PrepInline
from prose.llm.loader import load_litellm
from prose.llm.pricing import with_zero_prices
from prose.runtime import RunOptions, RunResult, run_pattern

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MODEL = "stub"
SEQUENTIAL_CALLS = 100
SEQUENTIAL_REPEATS = 11
PARALLEL_ITEMS = 1000
PARALLEL_LATENCY_MS = 50
PARALLEL_REPEATS = 5
CAP = 64
ROUNDS = (1, 2, 4, 8)
ARGUMENT_WORDS = 80  # each dialectic reply
INTERPRETER = "interpreter alone (instant client)"
CLIENT = "RouterClient.complete"
DIRECT_PROSE_LOOP = "direct, prose's event loop"
BRIEF = "A small software team should keep all its services in one repository."


@dataclass(frozen=True)
class Sample:
    """One timed run of one side: wall, CPU and garbage-collection seconds, calls, most in flight."""

    wall_s: float
    cpu_s: float
    gc_s: float
    calls: int
    max_in_flight: int = 0

    @property
    def wall_ms_per_call(self) -> float:
        return self.wall_s / self.calls * 1000

    @property
    def cpu_ms_per_call(self) -> float:
        return self.cpu_s / self.calls * 1000


Side = Callable[[], Awaitable[int]]  # runs its calls, returns how many it made

# Every side runs with the process settings its program would have: asyncio's default
# executor and Python's collector thresholds for the bare Router (as a user's
# `asyncio.run` gives it) and the peers; for prose, what `prose run` gives it
# (prose.llm.event_loop.run): the `PrepInline` executor and prose.llm.collector's thresholds.
ASYNCIO_EXECUTOR = concurrent.futures.ThreadPoolExecutor()
PROSE_EXECUTOR = PrepInline()


def as_prose_runs(side: Side) -> Side:
    """`side` in the settings `prose run` gives its loop: `PrepInline` as the default
    executor and the collector's thresholds of `prose.llm.collector` (restored after)."""

    async def run() -> int:
        asyncio.get_running_loop().set_default_executor(PROSE_EXECUTOR)
        with collector.tuned():
            return await side()

    return run


def stub_config(api_base: str, *, concurrency: int = CAP) -> LLMConfig:
    """The config a user would write for an OpenAI-compatible server at `api_base`."""
    return LLMConfig(
        model_list=[
            {
                "model_name": MODEL,
                "litellm_params": {
                    "model": f"openai/{MODEL}",
                    "api_base": api_base,
                    "api_key": "sk-bench-not-a-key",
                },
            }
        ],
        default_model=MODEL,
        retries=0,
        timeout_s=60,
        concurrency=concurrency,
    )


def direct_router(config: LLMConfig) -> Any:
    """A `litellm.Router` built as `RouterClient` builds it (same deployments and settings)."""
    litellm = load_litellm()
    deployments = with_zero_prices(config.deployments(), litellm)
    return litellm.Router(model_list=deployments, **config.router_kwargs())


class UnroutedCaller:
    """`acompletion` as a router offers it, made with `litellm.acompletion` and the model's
    deployment parameters: what `RouterClient` does for a model with nothing to route
    (`prose.llm.direct`), for a peer to do the same."""

    def __init__(self, config: LLMConfig) -> None:
        self._litellm = load_litellm()
        self._config = config
        self._deployments = with_zero_prices(config.deployments(), self._litellm)
        self._params: dict[str, dict[str, Any]] = {}

    async def acompletion(self, *, model: str, **arguments: Any) -> Any:
        params = self._params.get(model)
        if params is None:
            found = direct_params(self._config, model, self._deployments, self._litellm)
            if found is None:
                raise ValueError(f"`{model}` has something to route: use the router")
            params = self._params[model] = found
        return await self._litellm.acompletion(**{**params, **arguments})


async def direct_calls(
    config: LLMConfig, messages: Sequence[list[dict[str, str]]], cap: int | None = None
) -> int:
    """Send `messages` with `Router.acompletion`: one after the other, or `cap` at a time."""
    router = direct_router(config)
    if cap is None:
        for item in messages:
            await router.acompletion(model=MODEL, messages=item, timeout=config.timeout_s)
        return len(messages)
    semaphore = asyncio.Semaphore(cap)

    async def one(item: list[dict[str, str]]) -> None:
        async with semaphore:
            await router.acompletion(model=MODEL, messages=item, timeout=config.timeout_s)

    await asyncio.gather(*(one(item) for item in messages))
    return len(messages)


class InstantClient:
    """A client that answers at once without LiteLLM: the interpreter's own cost alone."""

    def __init__(self, latency_s: float = 0.0) -> None:
        self._latency_s = latency_s

    async def complete(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(self._latency_s)
        return ChatResponse("ok", None, Usage(11, 1, 12), 0.0, 0.0, request.model, 1)


def chat_request(messages: list[dict[str, str]], timeout_s: float) -> ChatRequest:
    """The `RouterClient` request for `messages` as the other sides send them (dicts)."""
    chat = [Message(m["role"], m["content"]) for m in messages]  # type: ignore[arg-type]
    return ChatRequest(MODEL, chat, timeout_s=timeout_s)


async def client_calls(config: LLMConfig, messages: Sequence[list[dict[str, str]]]) -> int:
    """Send `messages` one after the other through prose's `RouterClient`, no interpreter."""
    client = RouterClient(config)
    for item in messages:
        await client.complete(chat_request(item, config.timeout_s))
    return len(messages)


async def prose_run(
    pattern: Path,
    config: LLMConfig,
    folder: Path,
    *,
    inputs: dict[str, Any],
    settings: dict[str, Any] | None = None,
    trace: bool = True,
    concurrency: int = CAP,
    client: InstantClient | None = None,
) -> RunResult:
    """`run_pattern` as `prose run` calls it with a config file, the trace on by default."""
    result = await run_pattern(
        pattern,
        RunOptions(
            inputs=inputs,
            config=settings or {},
            client=client,
            llm_config=config,
            default_model=MODEL,
            concurrency=concurrency,
            trace_path=folder / "trace.jsonl",
            write_trace=trace,
            project_dir=folder,
        ),
    )
    if result.exit_code != 0:
        detail = result.error.format() if result.error else result.status
        raise RuntimeError(f"{pattern.name} failed: {detail}")
    return result


def sent_messages(result: RunResult) -> list[list[dict[str, str]]]:
    """The messages of every call of a run, as sent (from its trace events)."""
    return [list(e.messages) for e in result.events if e.type == "call"]


def call_count(result: RunResult) -> int:
    return sum(1 for e in result.events if e.type == "call")


class CollectorClock:
    """The wall time spent in the garbage collector while installed (`gc.callbacks`)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started

    def __enter__(self) -> CollectorClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


async def timed(side: Side, stub: StubServer) -> Sample:
    """One run of `side`: asyncio's default executor and Python's collector thresholds,
    unless the side sets prose's (`as_prose_runs`)."""
    asyncio.get_running_loop().set_default_executor(ASYNCIO_EXECUTOR)
    gc.collect()
    stub.reset()
    with CollectorClock() as clock:
        wall, cpu = time.perf_counter(), time.process_time()
        calls = await side()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return Sample(wall, cpu, clock.seconds, calls, stub.stats()["max_in_flight"])


async def interleaved(
    sides: dict[str, Side], repeats: int, stub: StubServer, *, progress: bool = False
) -> dict[str, list[Sample]]:
    """Run every side `repeats` times, taking turns in a rotating order (`progress`: a line
    on stderr after each round)."""
    names = list(sides)
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    for repeat in range(repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(await timed(sides[name], stub))
        if progress:
            print(f"round {repeat + 1}/{repeats}", file=sys.stderr, flush=True)
    return samples


def median(samples: list[Sample], measure: str) -> float:
    return statistics.median(getattr(sample, measure) for sample in samples)


def paired_ratio(samples: list[Sample], base: list[Sample], measure: str) -> float:
    """The median over rounds of `samples[i] / base[i]`: runs of one round are adjacent
    in time, so a change of load on the shared machine affects both alike."""
    return statistics.median(
        getattr(a, measure) / getattr(b, measure) for a, b in zip(samples, base, strict=True)
    )


def median_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median of `values`: the order statistics
    x(k) and x(n+1-k), with k the largest rank for which P(Binomial(n, 1/2) < k) <= (1 -
    confidence) / 2. Its coverage is at least `confidence` whatever the distribution (for
    15 values: the 4th and the 12th, 96.5%). Fewer than 6 values give no such interval at
    95%: the smallest and largest are returned."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        raise ValueError("no values")
    tail, k, below = (1 - confidence) / 2, 0, 0.0
    while k < n // 2 and below + math.comb(n, k) / 2**n <= tail:
        below += math.comb(n, k) / 2**n
        k += 1
    k = max(k, 1)
    return ordered[k - 1], ordered[n - k]


def interval_name(rounds: int) -> str:
    """What `median_interval` of `rounds` values is: under 6, no two order statistics hold
    the median with 95% confidence, and it is the range."""
    return "95% interval" if rounds >= 6 else f"range over the {rounds} rounds"


def paired_ratio_interval(samples: list[Sample], base: list[Sample], measure: str
                          ) -> tuple[float, float]:
    """`median_interval` of the per-round ratios whose median `paired_ratio` gives."""
    return median_interval(
        [getattr(a, measure) / getattr(b, measure) for a, b in zip(samples, base, strict=True)])


def paired_difference(samples: list[Sample], base: list[Sample], measure: str) -> float:
    """The median over rounds of `samples[i] - base[i]`."""
    return statistics.median(
        getattr(a, measure) - getattr(b, measure) for a, b in zip(samples, base, strict=True)
    )


# The three measurements -------------------------------------------------------------


async def sequential(stub: StubServer, folder: Path) -> dict[str, list[Sample]]:
    config = stub_config(stub.base_url(latency_ms=0))
    pattern = FIXTURES / "sequential.prose.md"
    inputs = {"task": "Answer in one word: which planet is largest?"}
    settings = {"calls": SEQUENTIAL_CALLS}
    # Warm up both paths (LiteLLM imports parts of itself on first use) and
    # take the exact messages prose sends, so both sides send the same bytes.
    warm = await prose_run(pattern, config, folder, inputs=inputs, settings=settings)
    messages = sent_messages(warm)
    await direct_calls(config, messages)
    await client_calls(config, messages)

    async def through_prose(trace: bool = True, client: InstantClient | None = None) -> int:
        result = await prose_run(
            pattern, config, folder, inputs=inputs, settings=settings, trace=trace, client=client
        )
        return call_count(result)

    sides: dict[str, Side] = {
        "direct": lambda: direct_calls(config, messages),
        DIRECT_PROSE_LOOP: as_prose_runs(lambda: direct_calls(config, messages)),
        CLIENT: as_prose_runs(lambda: client_calls(config, messages)),
        "prose": as_prose_runs(through_prose),
        "prose, trace off": as_prose_runs(lambda: through_prose(trace=False)),
        INTERPRETER: as_prose_runs(lambda: through_prose(client=InstantClient())),
    }
    return await interleaved(sides, SEQUENTIAL_REPEATS, stub)


async def parallel(stub: StubServer, folder: Path) -> dict[str, list[Sample]]:
    config = stub_config(stub.base_url(latency_ms=PARALLEL_LATENCY_MS), concurrency=CAP)
    pattern = FIXTURES / "parallel.prose.md"
    items = [f"item {i}: name one use of a paperclip" for i in range(PARALLEL_ITEMS)]
    warm = await prose_run(pattern, config, folder, inputs={"items": items[:CAP]})
    template = sent_messages(warm)[0]
    messages = [
        [{**m, "content": m["content"].replace(items[0], item)} for m in template] for item in items
    ]

    async def through_prose(client: InstantClient | None = None) -> int:
        result = await prose_run(pattern, config, folder, inputs={"items": items}, client=client)
        return call_count(result)

    sides: dict[str, Side] = {
        "direct": lambda: direct_calls(config, messages, cap=CAP),
        DIRECT_PROSE_LOOP: as_prose_runs(lambda: direct_calls(config, messages, cap=CAP)),
        "prose": as_prose_runs(through_prose),
        INTERPRETER: as_prose_runs(
            lambda: through_prose(InstantClient(PARALLEL_LATENCY_MS / 1000))),
    }
    return await interleaved(sides, PARALLEL_REPEATS, stub)


@dataclass(frozen=True)
class PromptSizes:
    """Prompt tokens of every call of one run, in call order."""

    rounds: int
    tokens: list[int]

    @property
    def mean(self) -> float:
        return statistics.mean(self.tokens)

    @property
    def mean_after_first(self) -> float:
        return statistics.mean(self.tokens[1:])


async def dialectic_prompts(stub: StubServer, folder: Path, pattern: Path) -> list[PromptSizes]:
    """Prompt tokens per call of `pattern` at each round count (replies of ARGUMENT_WORDS words)."""
    config = stub_config(stub.base_url(latency_ms=0, words=ARGUMENT_WORDS))
    sizes = []
    for rounds in ROUNDS:
        result = await prose_run(
            pattern, config, folder, inputs={"task_brief": BRIEF}, settings={"rounds": rounds}
        )
        sizes.append(
            PromptSizes(rounds, [e.usage.prompt_tokens for e in result.events if e.type == "call"])
        )
    return sizes


# Report -------------------------------------------------------------------------------


def _verdict(ratio: float, target: float) -> str:
    return f"{ratio:.2f}x ({'meets' if ratio <= target else 'misses'} <= {target}x)"


def _ratio(samples: list[Sample], base: list[Sample], measure: str) -> str:
    return f"{paired_ratio(samples, base, measure):.2f}x"


def _sequential_rows(seq: dict[str, list[Sample]]) -> str:
    base = seq["direct"]
    rows = []
    for name, samples in seq.items():
        alone = name == INTERPRETER
        wall = "" if alone else _ratio(samples, base, "wall_s")
        cpu = "" if alone else _ratio(samples, base, "cpu_s")
        rows.append(
            f"| {name} | {median(samples, 'wall_ms_per_call'):.2f} "
            f"| {median(samples, 'cpu_ms_per_call'):.2f} "
            f"| {min(s.cpu_ms_per_call for s in samples):.2f} "
            f"| {median(samples, 'gc_s') / samples[0].calls * 1000:.2f} | {wall} | {cpu} |"
        )
    return "\n".join(rows)


def _parallel_rows(par: dict[str, list[Sample]]) -> str:
    base = par["direct"]
    rows = []
    for name, samples in par.items():
        ratio = "" if name == INTERPRETER else _ratio(samples, base, "wall_s")
        each = ", ".join(f"{s.wall_s:.2f}" for s in samples)
        rows.append(
            f"| {name} | {median(samples, 'wall_s'):.2f} | {ratio} "
            f"| {median(samples, 'cpu_ms_per_call'):.2f} | {median(samples, 'gc_s'):.2f} "
            f"| {max(s.max_in_flight for s in samples)} | {each} |"
        )
    return "\n".join(rows)


def _added(samples: list[Sample], base: list[Sample]) -> float:
    """CPU ms per call that `samples` spent beyond `base` (median of paired differences)."""
    return paired_difference(samples, base, "cpu_ms_per_call")


def render(
    seq: dict[str, list[Sample]],
    par: dict[str, list[Sample]],
    flat: list[PromptSizes],
    grow: list[PromptSizes],
    load: tuple[float, float],
) -> str:
    seq_ratio = paired_ratio(seq["prose"], seq["direct"], "wall_s")
    par_ratio = paired_ratio(par["prose"], par["direct"], "wall_s")
    prompt_rows = "\n".join(
        f"| {a.rounds} | {len(a.tokens)} | {a.mean:.0f} | {a.mean_after_first:.0f} "
        f"| {max(a.tokens)} | {b.mean:.0f} | {max(b.tokens)} |"
        for a, b in zip(flat, grow, strict=True)
    )
    steady = [token for sizes in flat for token in sizes.tokens[1:]]
    return f"""## Runtime

{stamp()}
Load average {load[0]:.2f} before, {load[1]:.2f} after (the machine was shared with
other work, so single runs vary; compare the medians).

Both sides of each comparison ran in the same process run, against the same
loopback OpenAI-compatible stub (`bench/stub.py`, a child process, so its
work is not in our CPU time), taking turns in a rotating order; figures are
medians unless marked, and a ratio is the median of the ratios of the runs
made one after the other in the same round (so a change of load affects
both alike). "direct" is `litellm.Router.acompletion` on a router
built from the same `LLMConfig` as `prose run` builds (`openai/{MODEL}` with an
`api_base`, LiteLLM retries off), sending the exact messages prose sent, with
asyncio's default executor and Python's collector thresholds (what `asyncio.run`
gives a user's loop); prose and its LLM layer run in the settings `prose run` gives
its loop (`prose.llm.event_loop.run`: LiteLLM's request preparation on the loop's
thread, and the collector thresholds of `prose.llm.collector`).
"prose" is `run_pattern` as `prose run` runs it, with the trace written to a
file; "trace off" is `write_trace=False` (events are still built, scrubbed
and hashed in memory, only the file is not written). "{CLIENT}"
sends the same messages through prose's LLM layer (`RouterClient`: error
mapping, retry policy, usage and cost) without the interpreter.
"{INTERPRETER}" runs the same pattern with a client that
answers at once without LiteLLM: the interpreter's own cost. CPU is
`time.process_time()` of the whole process; GC is the time spent in the
garbage collector (`gc.callbacks`).

### Interpreter overhead: {SEQUENTIAL_CALLS} sequential calls, stub latency 0

`bench/fixtures/sequential.prose.md` (`repeat calls as step: call worker`),
{SEQUENTIAL_REPEATS} runs per side.

| side | wall ms/call | CPU ms/call | CPU ms/call, best run | GC ms/call | wall ratio | CPU ratio |
|---|---|---|---|---|---|---|
{_sequential_rows(seq)}

Wall ratio prose/direct: {_verdict(seq_ratio, 1.05)}; against the same direct calls on
prose's event loop ("{DIRECT_PROSE_LOOP}": the same settings as `prose run`,
prose.llm.event_loop.run):
{_ratio(seq["prose"], seq[DIRECT_PROSE_LOOP], "wall_s")}; that loop alone gives the direct calls
{_ratio(seq[DIRECT_PROSE_LOOP], seq["direct"], "wall_s")} of their wall time and
{_ratio(seq[DIRECT_PROSE_LOOP], seq["direct"], "cpu_s")} of their CPU. LiteLLM alone costs
{median(seq["direct"], "cpu_ms_per_call"):.2f} ms of CPU per call here, so 1.05x leaves prose
{0.05 * median(seq["direct"], "cpu_ms_per_call"):.2f} ms per call. Where the added CPU per call goes
(medians of the paired differences): prose's LLM layer (`{CLIENT}` over
direct) {_added(seq[CLIENT], seq["direct"]):.2f} ms; the interpreter on top of it (prose over
`{CLIENT}`) {_added(seq["prose"], seq[CLIENT]):.2f} ms; in all {_added(seq["prose"], seq["direct"]):.2f} ms with the trace on,
{_added(seq["prose, trace off"], seq["direct"]):.2f} ms with it off. The interpreter measured alone costs
{median(seq[INTERPRETER], "cpu_ms_per_call"):.2f} ms per call, pattern loading and run setup included.

### `parallel for` over {PARALLEL_ITEMS:,} items, stub latency {PARALLEL_LATENCY_MS} ms, cap {CAP}

`bench/fixtures/parallel.prose.md` with `concurrency={CAP}` (run and client)
vs the same calls under `asyncio.Semaphore({CAP})`, {PARALLEL_REPEATS} runs per side.
"most in flight" is what the stub saw.

| side | wall s | wall ratio | CPU ms/call | GC s | most in flight | wall s of each run |
|---|---|---|---|---|---|---|
{_parallel_rows(par)}

Wall ratio prose/direct: {_verdict(par_ratio, 1.2)}
({_ratio(par["prose"], par[DIRECT_PROSE_LOOP], "wall_s")} against "{DIRECT_PROSE_LOOP}", whose own
ratio to direct is {_ratio(par[DIRECT_PROSE_LOOP], par["direct"], "wall_s")}); prose adds
{_added(par["prose"], par["direct"]):.2f} ms of CPU per call, of which the garbage collector
{paired_difference(par["prose"], par["direct"], "gc_s") / PARALLEL_ITEMS * 1000:.2f} ms. At {CAP} in flight the latency is hidden and
both sides are bound by CPU per call: LiteLLM's, plus ours.

### Dialectic prompt tokens per call as rounds grow

`patterns/dialectic.prose.md` against the stub, every reply {ARGUMENT_WORDS} words;
tokens are the stub's count of whitespace-separated words of all messages
(the scripted model's rule). The contrast is
`bench/fixtures/dialectic-full-history.prose.md`, where each side gets the
whole exchange so far.

| rounds | calls | dialectic: mean prompt tokens/call | mean without the first call | largest | full history: mean | largest |
|---|---|---|---|---|---|---|
{prompt_rows}

Flat: after the first call (the opening thesis, which has no prior argument
and so is smaller, pulling the mean down for short runs) every dialectic
call has {min(steady)} to {max(steady)} prompt tokens whatever the number of rounds, because each side receives only the task and the other side's
latest argument. With the full history the prompt grows linearly with the
rounds.
"""


async def measure() -> str:
    load_before = _load()
    with StubServer() as stub, tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        seq = await sequential(stub, folder)
        par = await parallel(stub, folder)
        flat = await dialectic_prompts(stub, folder, ROOT / "patterns" / "dialectic.prose.md")
        grow = await dialectic_prompts(stub, folder, FIXTURES / "dialectic-full-history.prose.md")
    return render(seq, par, flat, grow, (load_before, _load()))


def _load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    body = asyncio.run(measure())
    write_section("runtime", body)
    print(body)


if __name__ == "__main__":
    main()
