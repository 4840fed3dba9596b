"""The Ray executor: rows run on an actor pool, one actor per worker process, each with its router.

    executor = RayExecutor(plan, address="auto", workers=4)   # or None: a local Ray for the run

Every actor (`RowWorker`) builds its `SharedResources` once (its own LiteLLM
router, cache and semaphore) and runs many rows at a time on its event loop;
the driver sends rows to the least busy actor and awaits their records, so
results stream back to the driver, which alone writes the results file. Rows
that are ready in the same turn of the driver's loop travel together, up to
`CHUNK` in one actor call (one Ray round trip, whose CPU in the driver and in
the worker would otherwise be paid per row); a chunk's records come back
together. Each
row's trace is written by the worker that ran it (its path is in the record),
so with a multi-node cluster the traces directory must be shared storage for
`--resume` to find them.

Limits across workers:
- calls in flight: `--concurrency N` is split between the W actors
  (N // W each, at least 1), so the whole batch never has more than
  max(N, W) calls in flight;
- the budget (`--max-calls`, `--max-tokens`, `--max-cost`): one `BudgetKeeper`
  actor holds the counters; a worker asks it before every call (one round
  trip), and reports each call's usage after it.
A LiteLLM proxy's own limits (rpm, tpm, max_parallel_requests, budgets) hold
too when the model list points at one (docs/batch.md). Ray is imported only here.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from prose.batch.local import CallsInFlight
from prose.batch.plan import BatchPlan, has_pool_limits, run_row
from prose.batch.rows import Row
from prose.errors import ProseError
from prose.llm import collector, event_loop
from prose.runtime.budget import Budget, Limits
from prose.runtime.errors import BudgetExceeded

if TYPE_CHECKING:
    from prose.source import Span


# Rows per actor call at most: enough to spread a Ray round trip's CPU (about 2 ms in the
# driver and as much in the worker, on 2 cores) thin, few enough that a chunk's records,
# which come back together, do not wait long for its slowest row.
CHUNK = 8


class RayStartError(ProseError):
    """Ray is not installed, or cannot start or reach the cluster."""


class BudgetKeeper:
    """The batch's budget, in one actor that every worker asks (`ray.remote` of this class)."""

    def __init__(self, limits: Limits) -> None:
        self.budget = Budget(limits)

    def admit(self, what: str) -> tuple[str, str] | None:
        """None when the call may go; else (budget, message)."""
        try:
            self.budget.admit(what)
        except BudgetExceeded as error:
            return (error.budget or "calls", error.message)
        return None

    def record(self, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        self.budget.record(prompt_tokens, completion_tokens, cost_usd)

    def totals(self) -> dict[str, Any]:
        return self.budget.totals()


class KeeperPool:
    """A worker's `BudgetPool`: every admission is a round trip to the `BudgetKeeper` actor."""

    def __init__(self, keeper: Any) -> None:
        self.keeper = keeper

    def admit(self, what: str, span: Span | None = None) -> None:
        import ray

        refusal = ray.get(self.keeper.admit.remote(what))
        if refusal is not None:
            budget, message = refusal
            raise BudgetExceeded(message, span, budget=budget)

    def record(self, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        self.keeper.record.remote(prompt_tokens, completion_tokens, cost_usd)


class RowWorker:
    """One worker process's rows (`ray.remote` of this class: an async actor)."""

    def __init__(self, plan: BatchPlan, concurrency: int, keeper: Any) -> None:
        collector.apply()  # this worker process runs prose's rows alone
        self.plan = plan
        self.pattern = plan.pattern()
        self.resources = plan.resources(concurrency, KeeperPool(keeper) if keeper else None)
        self.calls = CallsInFlight()
        self.loop_ready = False

    async def run(self, index: int, inputs: dict[str, Any]) -> dict[str, Any]:
        if not self.loop_ready:  # Ray made this actor's loop; give it prose's executor
            event_loop.install()
            self.loop_ready = True
        return await run_row(self.plan, self.resources, self.pattern, index, inputs,
                             self.calls.hook(index))

    async def run_many(self, rows: Sequence[tuple[int, dict[str, Any]]]) -> list[Any]:
        """Each row's record, or the exception that stopped it (sent back to the driver)."""
        return list(await asyncio.gather(*(self.run(index, inputs) for index, inputs in rows),
                                         return_exceptions=True))

    async def in_flight(self) -> int:
        return len(self.calls.open)


class RayExecutor:
    """Runs rows on `workers` Ray actors (`prose.batch.driver.Executor`).

    `address`: an existing cluster (`auto`, `ray://HOST:10001`); None starts a local Ray
    with `workers` CPUs (default: this machine's), shut down by `close`.
    """

    def __init__(self, plan: BatchPlan, address: str | None = None,
                 workers: int | None = None) -> None:
        try:
            import ray as ray_module
        except ImportError:
            raise RayStartError("--executor ray needs Ray: pip install 'prose-patterns[ray]'") \
                from None
        ray: Any = ray_module  # Ray's annotations do not survive ray.remote; talk to it untyped
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            settings: dict[str, Any] = {"include_dashboard": False,
                                        "log_to_driver": plan.debug,
                                        "logging_level": "INFO" if plan.debug else "ERROR"}
            if address is None and workers is not None:
                settings["num_cpus"] = workers
            try:
                ray.init(address=address, **settings)
            except Exception as error:  # Ray raises many kinds: connection, timeout, runtime
                raise RayStartError(f"Ray could not start or reach the cluster "
                                    f"({address or 'a local one'}): {error}") from None
            self._started = address is None
        count = workers or max(int(ray.cluster_resources().get("CPU", 1)), 1)
        count = max(min(count, plan.concurrency), 1)
        # Workers may run elsewhere: no path may depend on the driver's working directory.
        self.plan = dataclasses.replace(
            plan,
            traces_dir=plan.traces_dir.resolve(),
            project_dir=plan.project_dir.resolve(),
            cache_dir=plan.cache_dir.resolve() if plan.cache_dir is not None else None,
        )
        keeper: Any = None
        if has_pool_limits(plan.pool_limits):
            keeper = ray.remote(BudgetKeeper).options(num_cpus=0).remote(plan.pool_limits)
        actor = ray.remote(RowWorker).options(num_cpus=0, max_concurrency=100_000)
        share = max(plan.concurrency // count, 1)
        self.actors: list[Any] = [actor.remote(self.plan, share, keeper) for _ in range(count)]
        self.keeper = keeper
        self.busy = [0] * count
        self.flying = [0] * count
        self._poller: asyncio.Task[None] | None = None
        self._waiting: list[tuple[Row, asyncio.Future[dict[str, Any]]]] = []
        self._flush_soon: asyncio.Handle | None = None
        self._chunks: set[asyncio.Task[None]] = set()

    async def run(self, row: Row) -> dict[str, Any]:
        if self._poller is None:
            self._poller = asyncio.create_task(self._poll())
        loop = asyncio.get_running_loop()
        record: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._waiting.append((row, record))
        if len(self._waiting) >= CHUNK:
            self._flush()
        elif self._flush_soon is None:  # the rows made ready in this turn of the loop
            self._flush_soon = loop.call_soon(self._flush)
        return await record

    def _flush(self) -> None:
        if self._flush_soon is not None:
            self._flush_soon.cancel()
            self._flush_soon = None
        while self._waiting:
            chunk, self._waiting = self._waiting[:CHUNK], self._waiting[CHUNK:]
            which = min(range(len(self.actors)), key=self.busy.__getitem__)
            task = asyncio.create_task(self._send(which, chunk))
            self._chunks.add(task)
            task.add_done_callback(self._chunks.discard)

    async def _send(self, which: int,
                    chunk: list[tuple[Row, asyncio.Future[dict[str, Any]]]]) -> None:
        """One actor call for `chunk`; each row's future gets its record or its error."""
        self.busy[which] += len(chunk)
        try:
            rows = [(row.index, row.inputs) for row, _ in chunk]
            outcomes: list[Any] = await self.actors[which].run_many.remote(rows)
        except asyncio.CancelledError:  # the batch stops
            for _, record in chunk:
                record.cancel()
            raise
        except Exception as error:  # the worker died: each of its rows fails with this
            for _, record in chunk:
                if not record.done():
                    record.set_exception(error)
            return
        finally:
            self.busy[which] -= len(chunk)
        for (_, record), outcome in zip(chunk, outcomes, strict=True):
            if record.done():  # the row's task was cancelled (fail-fast)
                continue
            if isinstance(outcome, asyncio.CancelledError):
                record.cancel()
            elif isinstance(outcome, BaseException):
                record.set_exception(outcome)
            else:
                record.set_result(outcome)

    async def _poll(self) -> None:
        """Keep the workers' calls in flight for the progress line."""
        while True:
            try:
                counts = await asyncio.gather(*(a.in_flight.remote() for a in self.actors))
                self.flying = [int(c) for c in counts]
            except Exception:  # a worker that died: its rows report it
                pass
            await asyncio.sleep(0.5)

    def in_flight(self) -> int | None:
        return sum(self.flying)

    def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
        for task in self._chunks:
            task.cancel()
        for actor in self.actors:
            self._ray.kill(actor)
        if self.keeper is not None:
            self._ray.kill(self.keeper)
        if self._started:
            self._ray.shutdown()
