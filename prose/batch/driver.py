"""The batch driver: feeds rows to an executor, writes their records in order, shows progress.

The driver is the only writer of the results file, whichever executor runs
the rows (`LocalExecutor` in this process, `RayExecutor` on a Ray cluster).
At most `window` rows are in flight or waiting to be written, so memory stays
flat however many rows there are. A failing row does not stop the others
(unless `fail_fast`); once the batch's own budget (`--max-calls`,
`--max-tokens`, `--max-cost`) stops a row, the rows after it are recorded as
`budget` without running.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from prose.batch.output import ResultsFile, ResultsUnwritable, Tally
from prose.batch.plan import POOL_BUDGETS, budget_record, record
from prose.batch.progress import BatchProgress, Snapshot
from prose.batch.rows import Row


class Executor(Protocol):
    """Runs one row and returns its record (`prose.batch.plan.record`)."""

    async def run(self, row: Row) -> dict[str, Any]: ...

    def in_flight(self) -> int | None:
        """Calls in flight now (None when the executor cannot tell)."""
        ...


@dataclass
class Outcome:
    """What one `drive` did: the rows it recorded and whether it stopped early."""

    tally: Tally
    seconds: float
    stopped: str | None = None  # "fail-fast" when a failing row stopped the batch
    damaged: list[int] = field(default_factory=list)  # rows whose trace was damaged


async def drive(
    rows: Iterator[Row],
    executor: Executor,
    results: ResultsFile,
    *,
    total: int,
    window: int,
    fail_fast: bool = False,
    progress: BatchProgress | None = None,
    done_before: Tally | None = None,
) -> Outcome:
    """Run `rows` through `executor`, writing each record to `results` in input order."""
    slots = asyncio.Semaphore(max(window, 1))
    tally = Tally()
    before = done_before or Tally()
    started = time.monotonic()
    spent: list[str] = []
    stop = asyncio.Event()
    tasks: set[asyncio.Task[None]] = set()
    damaged: list[int] = []

    def snapshot() -> Snapshot:
        return Snapshot(before.rows + tally.rows, total, before.failed + tally.failed,
                        executor.in_flight(), before.tokens + tally.tokens,
                        before.cost_usd + tally.cost_usd, time.monotonic() - started)

    results.written = lambda _record: slots.release()

    def finished(line: dict[str, Any], row: Row) -> None:
        line["inputs_sha256"] = row.digest()  # what `--resume` checks the inputs file against
        tally.add(line)
        damage = line.get("damaged_trace")
        if damage is not None:
            damaged.append(int(line["row"]))
            if progress is not None:
                progress.warn(damaged_text(line["row"], line.get("trace"), damage))
        if line["status"] == "budget" and line.get("stopped_by") in POOL_BUDGETS and not spent:
            spent.append(str((line.get("error") or {}).get("message") or "the budget is spent"))
        if fail_fast and line["status"] in ("error", "hiding-violation"):
            stop.set()
        try:
            results.put(line)
        except ResultsUnwritable:  # a full disk: stop; the file keeps its whole rows
            stop.set()
            slots.release()

    async def one(row: Row) -> None:
        try:
            line = await executor.run(row)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a worker that died, a bug: this row fails, not the batch
            line = record(row.index, "error", None, {
                "code": "R000", "kind": "internal", "message": f"{type(error).__name__}: {error}",
            }, None, {})
        finished(line, row)

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.2)
            if progress is not None:
                progress.show(snapshot())

    ticker = asyncio.create_task(tick())
    try:
        for row in rows:
            await slots.acquire()
            if stop.is_set():
                break
            if spent:
                finished(budget_record(row.index, f"not run: the batch's budget is spent ({spent[0]})"),
                         row)
                continue
            task = asyncio.create_task(one(row))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if stop.is_set():
            for task in tasks:
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        ticker.cancel()
        if progress is not None:
            progress.show(snapshot(), final=True)
    stopped = None if not stop.is_set() else (
        "results-unwritable" if results.failure is not None else "fail-fast")
    return Outcome(tally, time.monotonic() - started, stopped, sorted(damaged))


def damaged_text(row: Any, trace: Any, damage: Mapping[str, Any]) -> str:
    """The warning for a row whose trace was damaged when the batch took it up again."""
    trusted = int(damage.get("replayed") or 0)
    kept = "nothing was replayed" if trusted == 0 else (
        f"only its first {trusted} line(s) were replayed")
    return (f"row {row}: its trace {trace}:{damage.get('line')} was damaged "
            f"({damage.get('reason')}); {kept}, the rest of the row ran again")
