"""The Ray executor: rows run on an actor pool, one actor per worker process, each with its router.

    executor = RayExecutor(plan, address="auto", workers=4)   # or None: a local Ray for the run

Every actor (`RowWorker`) builds its `SharedResources` once (its own LiteLLM
router, cache and semaphore) and runs many rows at a time on its event loop;
the driver sends each row to the least busy actor and awaits its record, so
results stream back to the driver, which alone writes the results file. Each
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
from typing import TYPE_CHECKING, Any

from prose.batch.local import CallsInFlight
from prose.batch.plan import BatchPlan, has_pool_limits, run_row
from prose.batch.rows import Row
from prose.errors import ProseError
from prose.llm import event_loop
from prose.runtime.budget import Budget, Limits
from prose.runtime.errors import BudgetExceeded

if TYPE_CHECKING:
    from prose.source import Span


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

    async def run(self, row: Row) -> dict[str, Any]:
        if self._poller is None:
            self._poller = asyncio.create_task(self._poll())
        which = min(range(len(self.actors)), key=self.busy.__getitem__)
        self.busy[which] += 1
        try:
            line: dict[str, Any] = await self.actors[which].run.remote(row.index, row.inputs)
            return line
        finally:
            self.busy[which] -= 1

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
        for actor in self.actors:
            self._ray.kill(actor)
        if self.keeper is not None:
            self._ray.kill(self.keeper)
        if self._started:
            self._ray.shutdown()
