"""The retry schedule, asserted with an injected sleep and clock (never by timing)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from prose.llm import (
    AuthError,
    BadRequestError,
    LLMError,
    ModelTimeoutError,
    ProviderError,
    RateLimitError,
    RetryPolicy,
)
from prose.llm.retry import parse_retry_after


class FakeTime:
    """A clock that only moves when the policy sleeps."""

    def __init__(self) -> None:
        self.now = 100.0
        self.delays: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)
        self.now += seconds


def failing(*errors: LLMError, then: str = "ok") -> tuple[Callable[[int], object], list[int]]:
    """An attempt function raising `errors` in turn, then returning `then`."""
    seen: list[int] = []

    async def attempt(number: int) -> str:
        seen.append(number)
        if number <= len(errors):
            raise errors[number - 1]
        return then

    return attempt, seen


def run(policy: RetryPolicy, errors: list[LLMError], retries: int) -> str:
    attempt, _ = failing(*errors)
    return asyncio.run(policy.run(attempt, retries=retries))  # type: ignore[arg-type]


def test_exponential_backoff_schedule() -> None:
    time = FakeTime()
    policy = RetryPolicy(sleep=time.sleep, clock=time.clock)
    errors: list[LLMError] = [ProviderError("down")] * 4
    assert run(policy, errors, retries=4) == "ok"
    assert time.delays == [1.0, 2.0, 4.0, 8.0]


def test_backoff_is_capped() -> None:
    time = FakeTime()
    policy = RetryPolicy(base_delay_s=0.5, multiplier=3, max_delay_s=5, sleep=time.sleep)
    run(policy, [ModelTimeoutError("slow")] * 4, retries=4)
    assert time.delays == [0.5, 1.5, 4.5, 5.0]


def test_retry_after_is_honoured_but_never_shortens_the_backoff() -> None:
    time = FakeTime()
    policy = RetryPolicy(sleep=time.sleep)
    errors: list[LLMError] = [
        RateLimitError("slow down", retry_after=10.0),
        RateLimitError("slow down", retry_after=0.5),
        RateLimitError("slow down"),
    ]
    run(policy, errors, retries=3)
    assert time.delays == [10.0, 2.0, 4.0]


def test_retry_after_too_long_is_not_waited_for() -> None:
    time = FakeTime()
    policy = RetryPolicy(max_retry_after_s=60, sleep=time.sleep)
    attempt, seen = failing(RateLimitError("quota", retry_after=3600.0))
    with pytest.raises(RateLimitError) as caught:
        asyncio.run(policy.run(attempt, retries=5))  # type: ignore[arg-type]
    assert time.delays == []
    assert seen == [1]
    assert caught.value.attempts == 1


@pytest.mark.parametrize(
    "error",
    [AuthError("no"), BadRequestError("bad"), ProviderError("odd", retryable=False)],
)
def test_non_retryable_errors_fail_fast(error: LLMError) -> None:
    time = FakeTime()
    attempt, seen = failing(error)
    with pytest.raises(type(error)):
        asyncio.run(RetryPolicy(sleep=time.sleep).run(attempt, retries=5))  # type: ignore[arg-type]
    assert seen == [1]
    assert time.delays == []


def test_no_retries_means_one_attempt() -> None:
    time = FakeTime()
    attempt, seen = failing(ProviderError("down"))
    with pytest.raises(ProviderError) as caught:
        asyncio.run(RetryPolicy(sleep=time.sleep).run(attempt, retries=0))  # type: ignore[arg-type]
    assert (seen, time.delays, caught.value.attempts) == ([1], [], 1)


def test_last_error_carries_the_attempt_count() -> None:
    time = FakeTime()
    attempt, seen = failing(ProviderError("a"), ProviderError("b"), ProviderError("c"))
    with pytest.raises(ProviderError) as caught:
        asyncio.run(RetryPolicy(sleep=time.sleep).run(attempt, retries=2))  # type: ignore[arg-type]
    assert (caught.value.message, caught.value.attempts) == ("c", 3)
    assert seen == [1, 2, 3]
    assert time.delays == [1.0, 2.0]


def test_elapsed_budget_stops_retrying() -> None:
    time = FakeTime()
    policy = RetryPolicy(max_elapsed_s=5.0, sleep=time.sleep, clock=time.clock)
    attempt, seen = failing(*[ProviderError("down")] * 5)
    with pytest.raises(ProviderError):
        asyncio.run(policy.run(attempt, retries=5))  # type: ignore[arg-type]
    # 1 + 2 = 3 s spent; waiting 4 more would end 7 s after the start.
    assert time.delays == [1.0, 2.0]
    assert seen == [1, 2, 3]


def test_delay_for() -> None:
    policy = RetryPolicy()
    assert policy.delay_for(ProviderError("x"), 3) == 4.0
    assert policy.delay_for(AuthError("x"), 1) is None
    assert policy.delay_for(RateLimitError("x", retry_after=121.0), 1) is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("3", 3.0), (" 0.25 ", 0.25), ("-4", 0.0), ("", None), (None, None), ("soon", None)],
)
def test_parse_retry_after(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value) == seconds


def test_parse_retry_after_http_date() -> None:
    now = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2030, 1, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert parse_retry_after(later, now=now.timestamp()) == 30.0
    assert parse_retry_after(later, now=now.timestamp() + 60) == 0.0
