"""Running branches concurrently: `all`, `first`, `any` with `count`, and `on-fail`.

Each branch is an asyncio task. The concurrency cap is not here: it is the
run's one semaphore around every model call (so nested parallels cannot
deadlock waiting for permits their parents hold). Losers of `first`/`any`
and the rest after a fail-fast error are cancelled and awaited, so a
cancelled call still gets its `call` event before the statement returns.

Errors that end a run (an information-hiding violation, a budget stop, an
exhausted script) are never subject to `on-fail`: they cancel every branch
and propagate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from prose.lang import flows
from prose.lang.flows import CONCRETE
from prose.runtime import values as v
from prose.runtime.errors import ProseRuntimeError, TooFewSuccesses, ValueTypeError
from prose.runtime.values import Value, error_object

Mode = Literal["all", "first", "any"]
OnFail = Literal["fail-fast", "continue", "ignore"]
Branch = Callable[[], Awaitable[Value]]


@dataclass(frozen=True, slots=True)
class Modifiers:
    mode: Mode = "all"
    count: int | None = None
    on_fail: OnFail = "fail-fast"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a parallel statement produced: per-branch values (None: no value) and its value."""

    values: list[Value | None]
    value: Value
    finished: list[bool]


def parse_modifiers(positional: Sequence[str], keywords: dict[str, Value]) -> Modifiers:
    mode: Mode = "all"
    on_fail: OnFail = "fail-fast"
    for word in positional:
        if word in ("all", "first", "any"):
            mode = word  # type: ignore[assignment]
        elif word in ("fail-fast", "continue", "ignore"):
            on_fail = word  # type: ignore[assignment]
        else:
            raise ValueTypeError(
                f'unknown parallel modifier "{word}" (use "all", "first" or "any")'
            )
    count: int | None = None
    for key, value in keywords.items():
        if key == "count":
            if not isinstance(value.data, int) or isinstance(value.data, bool) or value.data < 1:
                raise ValueTypeError("`count` must be a positive integer")
            count = value.data
        elif key == "on-fail":
            if value.data not in ("fail-fast", "continue", "ignore"):
                raise ValueTypeError('`on-fail` is "fail-fast", "continue" or "ignore"')
            on_fail = value.data  # type: ignore[assignment]
        elif key == "mode" and value.data in ("all", "first", "any"):
            mode = value.data  # type: ignore[assignment]
        else:
            raise ValueTypeError(f"unknown parallel modifier `{key}`")
    if mode == "any" and count is None:
        count = 1
    return Modifiers(mode, count, on_fail)


def _fatal(error: BaseException) -> bool:
    return not isinstance(error, ProseRuntimeError) or not error.catchable


async def _cancel(tasks: Sequence[asyncio.Task[Value]]) -> None:
    for task in tasks:
        if not task.done():
            task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class _Arrivals:
    """The branches' tasks as they finish, each handed over once.

    Each task reports itself when done, so waiting for the next ones costs the
    same whether 2 or 2,000 are still running (`asyncio.wait` over the pending
    set costs a callback on every pending task at each wake-up: quadratic in a
    wide `parallel for` whose calls come back one by one).
    """

    def __init__(self, tasks: Sequence[asyncio.Task[Value]]) -> None:
        self.waiting = len(tasks)
        self._done: list[asyncio.Task[Value]] = []
        self._wake: asyncio.Future[None] | None = None
        for task in tasks:
            task.add_done_callback(self._arrived)

    def _arrived(self, task: asyncio.Task[Value]) -> None:
        self._done.append(task)
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def next(self) -> list[asyncio.Task[Value]]:
        """The tasks that finished since the last call; waits for at least one."""
        if not self._done:
            self._wake = asyncio.get_running_loop().create_future()
            try:
                await self._wake
            finally:
                self._wake = None
        done, self._done = self._done, []
        self.waiting -= len(done)
        return done


async def run_branches(
    branches: Sequence[Branch],
    modifiers: Modifiers,
    *,
    on_dropped: Callable[[int, ProseRuntimeError], None],
    strict: bool = False,
) -> Outcome:
    """Run `branches` concurrently under `modifiers`; see the module docstring."""
    tasks = [asyncio.ensure_future(branch()) for branch in branches]
    positions = {task: position for position, task in enumerate(tasks)}
    total = len(tasks)
    values: list[Value | None] = [None] * total
    finished = [False] * total
    successes: list[Value] = []
    wanted = {"all": total, "first": 1, "any": modifiers.count or 1}[modifiers.mode]
    if wanted > total:
        await _cancel(tasks)
        raise TooFewSuccesses(
            f'"any" wants {wanted} successful branches but there are only {total}'
        )
    arrivals = _Arrivals(tasks)
    failures: list[ProseRuntimeError] = []
    try:
        while arrivals.waiting and len(successes) < wanted:
            for task in sorted(await arrivals.next(), key=positions.__getitem__):
                position = positions[task]
                error = task.exception() if not task.cancelled() else asyncio.CancelledError()
                if error is None:
                    value = task.result()
                    values[position] = value
                    finished[position] = True
                    successes.append(value)
                    continue
                if _fatal(error) or modifiers.on_fail == "fail-fast":
                    raise error
                assert isinstance(error, ProseRuntimeError)
                failures.append(error)
                on_dropped(position, error)
                if modifiers.mode == "all" and modifiers.on_fail == "continue":
                    values[position] = error_object(
                        error.message,
                        error.kind,
                        error.slot,
                        line=error.span.line if error.span else None,
                        label=error.label,
                    )
                    finished[position] = True
    finally:
        await _cancel(tasks)
    # Strict mode: which branch won, or which values are kept, depends on the failures.
    failed = flows.raced(CONCRETE, CONCRETE.join(f.label for f in failures), strict)
    if modifiers.mode == "all":
        kept = [value for value in values if value is not None]
        return Outcome(values, v.relabel(v.collected(kept), failed, deep=True), finished)
    if len(successes) < wanted:
        last = f": {failures[-1].message}" if failures else ""
        raise TooFewSuccesses(
            f'"{modifiers.mode}" needed {wanted} successful branch(es), {len(successes)} succeeded{last}',
            label=CONCRETE.join(failure.label for failure in failures),
        )
    if modifiers.mode == "first":
        return Outcome(values, v.relabel(successes[0], failed, deep=True), finished)
    return Outcome(values, v.relabel(v.collected(successes[:wanted]), failed, deep=True), finished)
