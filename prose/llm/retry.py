"""The one retry policy for model calls.

LiteLLM's and the openai SDK's own retries are switched off (the router and
every deployment get `num_retries=0`, `max_retries=0`), so every attempt goes
through here and is counted. Retryable errors (rate limits, timeouts, 5xx and
connection errors) are retried with exponential backoff; a rate limit's
Retry-After is honoured (we never wait less than the provider asked). Auth
errors, bad requests, context-window and schema errors fail at once. `sleep`
and `clock` are injectable so tests assert the exact schedule without waiting.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

from prose.llm.errors import LLMError, RateLimitError

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]

log = logging.getLogger("prose.llm")


async def no_sleep(seconds: float) -> None:
    """A `sleep` that does not wait (scripted runs and tests)."""
    del seconds


@dataclass(frozen=True)
class RetryPolicy:
    """When to retry a failed attempt and how long to wait first.

    The wait before retry n (1-based) is `base_delay_s * multiplier**(n-1)`,
    capped at `max_delay_s`, and at least the Retry-After a rate limit gave.
    A Retry-After above `max_retry_after_s` is not waited for: the error is
    raised, its message saying how long the provider asked to wait and the
    limit (`refuse_long_retry_after`). With `max_elapsed_s`, no retry starts whose wait would end past
    that many seconds after the first attempt began (measured with `clock`).
    """

    base_delay_s: float = 1.0
    multiplier: float = 2.0
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0
    max_elapsed_s: float | None = None
    sleep: Sleep = asyncio.sleep
    clock: Clock = time.monotonic

    def backoff(self, retry: int) -> float:
        """The exponential wait before retry number `retry` (1-based)."""
        return min(self.max_delay_s, self.base_delay_s * self.multiplier ** (retry - 1))

    def delay_for(self, error: LLMError, retry: int) -> float | None:
        """How long to wait before retry `retry` after `error`; None: do not retry."""
        if not error.retryable:
            return None
        delay = self.backoff(retry)
        if isinstance(error, RateLimitError) and error.retry_after is not None:
            if error.retry_after > self.max_retry_after_s:
                return None
            delay = max(delay, error.retry_after)
        return delay

    async def run(self, attempt: Callable[[int], Awaitable[T]], *, retries: int) -> T:
        """Await `attempt(n)` for n = 1, 2, ... until it succeeds or may not be retried.

        At most `retries` retries follow the first attempt. The last error is
        raised with `attempts` set to the number of attempts made.
        """
        started = self.clock()
        number = 1
        while True:
            try:
                return await attempt(number)
            except LLMError as error:
                error.attempts = number
                refuse_long_retry_after(error, self.max_retry_after_s)
                delay = self.delay_for(error, number) if number <= retries else None
                if delay is None:
                    raise
                if (
                    self.max_elapsed_s is not None
                    and self.clock() - started + delay > self.max_elapsed_s
                ):
                    raise
                log.debug(
                    "attempt %d on %s failed (%s: %s); retrying in %.3gs",
                    number,
                    error.model,
                    error.kind,
                    error.message,
                    delay,
                )
                await self.sleep(delay)
                number += 1


def refuse_long_retry_after(error: LLMError, limit_s: float) -> bool:
    """Whether `error` asks for a wait longer than `limit_s`; if so it is made final.

    Such an error is not retried (`retryable` becomes False), and its message
    says why, once: "(the provider asked to wait 100000 s before a retry, more
    than the limit of 120 s)". Without that note a call with retries left
    would fail at once with the provider's bare "rate limited".
    """
    wait = error.retry_after if isinstance(error, RateLimitError) else None
    if wait is None or wait <= limit_s:
        return False
    note = (
        f"(the provider asked to wait {wait:g} s before a retry,"
        f" more than the limit of {limit_s:g} s)"
    )
    if note not in error.message:
        error.message = f"{error.message} {note}"
        error.args = (error.message,)
    error.retryable = False
    return True


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date.

    `now` is the current Unix time (defaults to the wall clock). None when the
    value is missing or unreadable; never negative.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
