"""The benchmarks' interval for a median (bench/runtime.py), which the PDL report's verdicts use."""

from __future__ import annotations

import math
import random

import pytest

from bench.runtime import median_interval


def _coverage(n: int, k: int) -> float:
    """P(x(k) <= median <= x(n+1-k)) for n draws of any continuous distribution."""
    return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2**n


@pytest.mark.parametrize(("n", "ranks"), [(15, (4, 12)), (30, (10, 21)), (50, (18, 33))])
def test_the_interval_is_the_textbook_order_statistics(n: int, ranks: tuple[int, int]) -> None:
    values = random.Random(n).sample(range(1000), n)
    ordered = sorted(values)
    assert median_interval(values) == (ordered[ranks[0] - 1], ordered[ranks[1] - 1])


@pytest.mark.parametrize("n", range(6, 60))
def test_the_interval_covers_at_least_95_percent_and_no_narrower_one_would(n: int) -> None:
    low, _ = median_interval(list(range(n)))
    k = low + 1
    assert _coverage(n, k) >= 0.95
    assert _coverage(n, k + 1) < 0.95


def test_too_few_values_give_the_whole_range() -> None:
    assert median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)
    assert median_interval([5.0]) == (5.0, 5.0)
    with pytest.raises(ValueError):
        median_interval([])
