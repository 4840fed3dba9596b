"""Budgets: calls, tokens, cost, wall-clock time and steps for one run.

The check happens before a call is sent: when the next call would exceed a
budget (a call budget already spent, or tokens, cost or time already at their
limit) the run stops with `BudgetExceeded` (exit 3), keeping everything done so
far. Calls answered from the cache or a resumed trace cost nothing and do not
count; judge calls count like slot calls. Several calls may start at once
under `parallel`, so a call reserves its place in the call budget when it is
admitted, not when it returns.

Steps bound a run that makes no calls: every statement the interpreter runs is
a step (`step`), `max_steps` (default `DEFAULT_MAX_STEPS`) stops it, and every
`TIME_CHECK_EVERY` steps the time budget is checked too, so `--timeout` stops a
loop that never waits for a model.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prose.runtime.errors import BudgetExceeded
from prose.source import Span

# Statements one run may execute: far above any real pattern (the 1,000-item
# parallel fan-out of the benchmarks runs some 5,000), low enough to stop a
# runaway loop within seconds.
DEFAULT_MAX_STEPS = 1_000_000
TIME_CHECK_EVERY = 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of a run; None means unlimited. `timeout` is in seconds."""

    max_calls: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    timeout: float | None = None
    max_steps: int | None = DEFAULT_MAX_STEPS

    def __post_init__(self) -> None:
        for name in ("max_cost", "timeout"):
            limit = getattr(self, name)
            if limit is not None and math.isnan(limit):  # it would never stop anything
                raise ValueError(f"`{name}` must be a number, not NaN")

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_calls": self.max_calls,
            "max_tokens": self.max_tokens,
            "max_cost": self.max_cost,
            "timeout": self.timeout,
            "max_steps": self.max_steps,
        }


class Budget:
    """What a run has spent, against its `Limits`; `clock` is injectable for tests."""

    def __init__(
        self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or Limits()
        self.clock = clock
        self.started = clock()
        self.calls = 0  # admitted (sent) calls, judges included
        self.cache_hits = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost_usd = 0.0
        self.steps = 0
        self.requests = 0  # requests the providers were sent (a call may take several)
        self.stopped: str | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def elapsed(self) -> float:
        return self.clock() - self.started

    def remaining_time(self) -> float | None:
        if self.limits.timeout is None:
            return None
        return max(self.limits.timeout - self.elapsed(), 0.0)

    def admit(self, what: str, span: Span | None = None) -> None:
        """Reserve one call, or raise BudgetExceeded naming the budget that would be exceeded."""
        limits = self.limits
        reason: tuple[str, str] | None = None
        if limits.max_calls is not None and self.calls >= limits.max_calls:
            reason = ("calls", f"the call budget of {limits.max_calls} is spent")
        elif limits.max_tokens is not None and self.tokens >= limits.max_tokens:
            reason = (
                "tokens",
                f"the token budget of {limits.max_tokens} is spent ({self.tokens} used)",
            )
        elif limits.max_cost is not None and self.cost_usd >= limits.max_cost:
            reason = (
                "cost",
                f"the cost budget of ${limits.max_cost:g} is spent (${self.cost_usd:.6f} used)",
            )
        elif limits.timeout is not None and self.elapsed() >= limits.timeout:
            reason = ("timeout", f"the time budget of {limits.timeout:g}s is spent")
        if reason is not None:
            raise self.stop(reason[0], f"budget stop before {what}: {reason[1]}", span)
        self.calls += 1

    def step(self, count: int = 1, span: Span | None = None) -> None:
        """Count `count` statements (or iterations about to be made) against the step budget."""
        before = self.steps
        self.steps += count
        limits = self.limits
        if limits.max_steps is not None and self.steps > limits.max_steps:
            raise self.stop("steps", f"budget stop: the step budget of {limits.max_steps:,} "
                            "statements is spent (raise it with --max-steps)", span)
        if (limits.timeout is not None and before // TIME_CHECK_EVERY != self.steps // TIME_CHECK_EVERY
                and self.elapsed() >= limits.timeout):
            raise self.stop("timeout", f"budget stop: the time budget of {limits.timeout:g}s "
                            "is spent", span)

    def stop(self, budget: str, message: str, span: Span | None = None) -> BudgetExceeded:
        self.stopped = budget
        return BudgetExceeded(message, span, budget=budget)

    def record(self, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cost_usd += cost_usd

    def totals(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.tokens,
            "cost_usd": round(self.cost_usd, 8),
            "seconds": round(self.elapsed(), 3),
            "steps": self.steps,
            "requests": self.requests,
            "stopped_by": self.stopped,
        }
