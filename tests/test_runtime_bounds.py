"""Every run is bounded (issue 14): loops iterate lazily, the step budget stops a run that
makes no calls, `--timeout` reaches a loop that never waits for a model, and nested
patterns cannot recurse without end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prose.runtime import Limits
from prose.runtime.budget import DEFAULT_MAX_STEPS
from tests.conftest import run_prose_in_process
from tests.test_runtime import run, write_pattern

# A safety net so a test whose bound failed ends (with the wrong reason) instead of hanging.
NET = 5_000_000


def _stopped_by(result: object) -> str | None:
    return result.totals.get("stopped_by")  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize(
    "program",
    [
        "repeat 1000000000:\n  let x = 1\nreturn { result: 1 }",
        "let n = 0\nloop until n > 5 (max: 1000000000):\n  n = 1\nreturn { result: n }",
        "for a in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]:\n"
        + "".join(f"{'  ' * depth}for {v} in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]:\n"
                  for depth, v in enumerate("bcdefgh", start=1))
        + "                let x = a\nreturn { result: 1 }",
    ],
    ids=["repeat-a-billion", "loop-max-a-billion", "eight-nested-fors"],
)
def test_the_step_budget_stops_a_run_without_calls(tmp_path: Path, program: str) -> None:
    result = run(tmp_path, program, limits=Limits(max_steps=20_000))
    assert result.exit_code == 3, result.error and result.error.format()
    assert _stopped_by(result) == "steps"
    assert result.error is not None and "step budget of 20,000" in result.error.message
    assert 20_000 <= result.totals["steps"] <= 20_001


def test_a_parallel_repeat_past_the_step_budget_is_refused_before_it_starts(
        tmp_path: Path) -> None:
    result = run(tmp_path, "parallel repeat 1000000000:\n  let x = 1\nreturn { result: 1 }")
    assert result.exit_code == 3 and _stopped_by(result) == "steps"
    assert result.totals["steps"] > DEFAULT_MAX_STEPS  # counted, not built


def test_the_time_budget_stops_a_loop_that_makes_no_calls(tmp_path: Path) -> None:
    result = run(tmp_path, "repeat 1000000000:\n  let x = 1\nreturn { result: 1 }",
                 limits=Limits(timeout=0.3, max_steps=NET))
    assert result.exit_code == 3, result.error and result.error.format()
    assert _stopped_by(result) == "timeout"


def test_the_time_budget_stops_parallel_branches_that_make_no_calls(tmp_path: Path) -> None:
    program = """\
        parallel:
          repeat 1000000000:
            let x = 1
          repeat 1000000000:
            let y = 2
        return { result: 1 }"""
    result = run(tmp_path, program, limits=Limits(timeout=0.3, max_steps=NET))
    assert result.exit_code == 3, result.error and result.error.format()
    assert _stopped_by(result) == "timeout"


def test_max_steps_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_pattern(tmp_path, "repeat 1000000000:\n  let x = 1\nreturn { result: 1 }")
    monkeypatch.chdir(tmp_path)
    done = run_prose_in_process("run", str(path), "--script", _empty_script(tmp_path),
                                "--max-steps", "500", "--no-check", "-q")
    assert done.code == 3, done.output
    assert "step budget of 500 statements is spent" in done.output
    helped = run_prose_in_process("run", "--help")
    assert f"{DEFAULT_MAX_STEPS:,}" in helped.output.replace("\n", " ")


def _empty_script(tmp_path: Path) -> str:
    script = tmp_path / "script.yaml"
    script.write_text(json.dumps({"slots": {}}), encoding="utf-8")
    return str(script)
