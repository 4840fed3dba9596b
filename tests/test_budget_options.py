"""Budget options refuse what is not a number: `--max-cost nan` passed click's range check
(every comparison with NaN is false) and then never stopped a run."""

from __future__ import annotations

import pytest

from prose.runtime.budget import Limits
from tests.conftest import ROOT, run_prose

PATTERN = str(ROOT / "patterns" / "dialectic.prose.md")


@pytest.mark.parametrize("option", ["--max-cost", "--timeout"])
@pytest.mark.parametrize("command", ["run", "batch"])
def test_a_nan_budget_is_a_usage_error(command: str, option: str) -> None:
    args = [command, PATTERN, option, "nan"]
    if command == "batch":
        args += ["--inputs", "rows.jsonl"]
    done = run_prose(*args)
    assert done.code == 2
    assert f"Invalid value for '{option}': 'nan' is not a number" in done.stderr


def test_limits_refuse_nan_and_keep_infinity() -> None:
    with pytest.raises(ValueError, match="max_cost"):
        Limits(max_cost=float("nan"))
    with pytest.raises(ValueError, match="timeout"):
        Limits(timeout=float("nan"))
    assert Limits(timeout=float("inf")).timeout == float("inf")  # no limit, as it says
