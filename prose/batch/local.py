"""The local executor: every row in this process, on one event loop, sharing one router.

The rows share `SharedResources` built once (`prose.runtime.runner.shared_resources`):
one LiteLLM router, one semaphore of `--concurrency` calls in flight across
all rows, one response cache, and one `Budget` as the pool for the batch's
`--max-calls`, `--max-tokens` and `--max-cost`. A row's trace is not `fsync`ed when
the row ends: the results file syncs the traces' file system at once, with its own
`fsync` (`prose.batch.output`), where an `fsync` per row would hold every call in
flight back three times a row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prose.batch.plan import BatchPlan, run_row
from prose.batch.rows import Row
from prose.pattern_file import PatternFile
from prose.runtime.budget import Budget


class CallsInFlight:
    """A progress hook counting the calls sent and not yet answered, over every row."""

    def __init__(self) -> None:
        self.open: set[tuple[int, str]] = set()

    def hook(self, index: int) -> Any:
        def observe(phase: str, info: Mapping[str, Any]) -> None:
            key = (index, str(info.get("id")))
            if phase == "start":
                self.open.add(key)
            else:
                self.open.discard(key)

        return observe


class LocalExecutor:
    """Runs rows as tasks of the current event loop (`prose.batch.driver.Executor`)."""

    def __init__(self, plan: BatchPlan, pattern: PatternFile | None = None) -> None:
        self.plan = plan
        self.pattern = pattern if pattern is not None else plan.pattern()
        self.pool = Budget(plan.pool_limits)
        self.resources = plan.resources(plan.concurrency, self.pool)
        self.calls = CallsInFlight()

    async def run(self, row: Row) -> dict[str, Any]:
        return await run_row(self.plan, self.resources, self.pattern, row.index, row.inputs,
                             self.calls.hook(row.index))

    def in_flight(self) -> int | None:
        return len(self.calls.open)
