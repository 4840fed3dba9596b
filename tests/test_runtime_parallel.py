"""`parallel` modifiers, cancellation, the run-wide concurrency cap, Python and nested services."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

from prose.llm import Script
from prose.runtime import RunOptions, RunResult, run_pattern
from prose.runtime.services import PatternService, PythonService
from prose.runtime.values import constant

HEADER = """---
name: par
kind: pattern
version: 0.1.0
---

# Parallel

Parallel tests.

### Slots

- `worker`
- `helpers` (list)

### Config

- None.

### Invariants

- none

### Parameters

- None.

### Returns

- `result`: anything

### Delegation

```prose
{program}
```
"""

# Python services used as slot bindings (what an instance file's `python:` names).
STATE: dict[str, Any] = {"active": 0, "peak": 0, "started": [], "finished": []}


async def slow_echo(item: Any = None, delay: float = 0.05, fail: bool = False) -> Any:
    STATE["active"] += 1
    STATE["peak"] = max(STATE["peak"], STATE["active"])
    STATE["started"].append(item)
    try:
        await asyncio.sleep(delay)
        if fail:
            raise ValueError(f"failed on {item}")
        STATE["finished"].append(item)
        return {"item": item}
    finally:
        STATE["active"] -= 1


def reset() -> None:
    STATE.update(active=0, peak=0, started=[], finished=[])


def run(
    tmp_path: Path, program: str, script: dict[str, Any] | None = None, **options: Any
) -> RunResult:
    path = tmp_path / "par.prose.md"
    path.write_text(HEADER.format(program=textwrap.dedent(program).strip()))
    reset()
    bindings = options.pop(
        "bindings", {"worker": PythonService("tests.test_runtime_parallel:slow_echo", slow_echo)}
    )
    opts = RunOptions(
        script=Script.from_mapping(script or {}),
        bindings=bindings,
        trace_path=tmp_path / "trace.jsonl",
        **options,
    )
    return asyncio.run(run_pattern(path, opts))


def value(result: RunResult) -> Any:
    assert result.error is None, result.error.format()
    return result.value["result"]


def test_all_returns_values_in_input_order(tmp_path: Path) -> None:
    assert value(
        run(
            tmp_path,
            """
        let xs = parallel for d in [0.06, 0.01, 0.03]:
          call worker
            item: d
            delay: d
        return { result: xs }
        """,
        )
    ) == [{"item": 0.06}, {"item": 0.01}, {"item": 0.03}]


def test_first_returns_the_first_success_and_cancels_the_rest(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let winner = parallel for d in [0.5, 0.01, 0.5] ("first"):
          call worker
            item: d
            delay: d
        return { result: winner }
        """,
    )
    assert value(result) == {"item": 0.01}
    assert STATE["finished"] == [0.01]
    events = [e for e in result.events if e.type == "call"]
    assert sorted((e.error or {}).get("kind", "ok") for e in events) == [
        "cancelled",
        "cancelled",
        "ok",
    ]


def test_any_with_count_returns_that_many_in_completion_order(tmp_path: Path) -> None:
    assert value(
        run(
            tmp_path,
            """
        let some = parallel for d in [2, 0.3, 0.01, 2] ("any", count: 2):
          call worker
            item: d
            delay: d
        return { result: some }
        """,
        )
    ) == [{"item": 0.01}, {"item": 0.3}]


def test_on_fail_continue_gives_the_error_object(tmp_path: Path) -> None:
    result = value(
        run(
            tmp_path,
            """
        let xs = parallel for f in [false, true, false] (on-fail: "continue"):
          call worker
            item: f
            fail: f
        return { result: xs }
        """,
        )
    )
    assert result[0] == {"item": False} and result[2] == {"item": False}
    assert result[1]["kind"] == "python" and "failed on True" in result[1]["message"]
    assert result[1]["slot"] == "worker"


def test_on_fail_ignore_drops_failed_branches_and_traces_them(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let xs = parallel for f in [false, true, false] (on-fail: "ignore"):
          call worker
            item: f
            fail: f
        return { result: xs }
        """,
    )
    assert value(result) == [{"item": False}, {"item": False}]
    notes = [e for e in result.events if e.type == "note" and e.what == "branch_failed"]
    assert len(notes) == 1 and notes[0].detail["branch"] == 1


def test_fail_fast_cancels_the_rest_and_propagates(tmp_path: Path) -> None:
    # The other branch would sleep 30 s: it ends only by being cancelled, which the
    # trace and the service's own record show (bench/cancel.py times how soon).
    result = run(
        tmp_path,
        """
        let xs = parallel for b in [{ fail: true, delay: 0.01 }, { fail: false, delay: 30 }]:
          call worker
            item: b.fail
            fail: b.fail
            delay: b.delay
        return { result: xs }
        """,
    )
    assert result.exit_code == 4 and result.error is not None and result.error.kind == "python"
    assert sorted(STATE["started"]) == [False, True] and STATE["finished"] == []
    kinds = sorted((e.error or {}).get("kind", "ok") for e in result.events if e.type == "call")
    assert kinds == ["cancelled", "python"]


def test_first_with_every_branch_failing_is_an_error(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let w = parallel for f in [true, true] ("first", on-fail: "ignore"):
          call worker
            fail: f
        return { result: w }
        """,
    )
    assert result.error is not None and result.error.code == "R014"


def test_one_concurrency_cap_for_the_whole_run(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let outer = parallel for i in [1, 2, 3, 4]:
          parallel for j in [1, 2, 3, 4]:
            call worker
              item: j
              delay: 0.02
        return { result: outer.length }
        """,
        concurrency=3,
    )
    assert value(result) == 4
    assert STATE["peak"] == 3


def test_parallel_block_first_binds_losers_to_null(tmp_path: Path) -> None:
    assert value(
        run(
            tmp_path,
            """
        parallel ("first"):
          let fast = call worker
            item: "fast"
            delay: 0.01
          let slow = call worker
            item: "slow"
            delay: 1
        return { result: [fast, slow] }
        """,
        )
    ) == [{"item": "fast"}, None]


def test_return_ends_only_its_branch_and_break_is_an_error(tmp_path: Path) -> None:
    assert value(
        run(
            tmp_path,
            """
        let xs = parallel repeat 3 as i:
          if i == 2:
            return "two"
          let y = i
        return { result: xs }
        """,
        )
    ) == [1, "two", 3]
    result = run(
        tmp_path,
        """
        parallel repeat 2:
          break
        return { result: 1 }
        """,
    )
    assert result.error is not None and result.error.code == "R015"


def test_list_valued_slot_gets_one_scripted_service_per_response_list(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let answers = parallel for h in helpers:
          call h
            q: "same question"
        return { result: answers }
        """,
        {"slots": {"helpers": [["first helper"], ["second helper"]]}},
        bindings={},
    )
    assert value(result) == ["first helper", "second helper"]
    events = sorted((e for e in result.events if e.type == "call"), key=lambda e: e.index)
    assert [(e.slot, e.index) for e in events] == [("helpers", 0), ("helpers", 1)]


def test_calling_a_list_valued_slot_directly_is_an_error(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "let r = call helpers\n  q: 1\nreturn { result: r }",
        {"slots": {"helpers": [["a"]]}},
        bindings={},
    )
    assert result.error is not None and result.error.code == "R004"


def test_nested_pattern_instance_runs_with_its_own_scope(tmp_path: Path) -> None:
    inner = tmp_path / "inner.prose.md"
    inner.write_text(
        HEADER.replace("name: par", "name: inner")
        .format(
            program=textwrap.dedent("""
        let doubled = call worker
          item: item
        return { result: doubled, seen: item }
        """).strip()
        )
        .replace("- None.\n\n### Returns", "- `item`: string -- what to echo\n\n### Returns")
    )
    result = run(
        tmp_path,
        """
        let r = call worker
          item: "outer"
        return { result: r }
        """,
        {"slots": {"worker.worker": ["from the nested worker"]}},
        bindings={"worker": PatternService(str(inner))},
    )
    assert value(result) == {"result": "from the nested worker", "seen": "outer"}
    calls = [e for e in result.events if e.type == "call"]
    assert [(e.slot, e.path) for e in calls] == [("worker", "worker>"), ("worker", "")]


def test_time_budget_cancels_calls_in_flight(tmp_path: Path) -> None:
    # The call would sleep 30 s: the run ends by the budget cancelling it
    # (bench/cancel.py times how soon after the budget runs out).
    from prose.runtime import Limits

    result = run(
        tmp_path,
        """
        let r = call worker
          item: 1
          delay: 30
        return { result: r }
        """,
        limits=Limits(timeout=0.3),
    )
    assert (
        result.exit_code == 3 and result.error is not None and "time budget" in result.error.message
    )
    assert STATE["started"] == [1] and STATE["finished"] == []
    cancelled = [e for e in result.events if e.type == "call"]
    assert cancelled and cancelled[0].error["kind"] == "cancelled"


def takes_prompt(item: Any = None, prompt: str | None = None) -> dict[str, Any]:
    return {"item": item, "prompt": prompt}


def test_python_callable_gets_inputs_and_prompt_as_keywords(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let r = call worker
          item: [1, 2]
          prompt: "do it"
        return { result: r }
        """,
        bindings={
            "worker": PythonService("tests.test_runtime_parallel:takes_prompt", takes_prompt)
        },
    )
    assert value(result) == {"item": [1, 2], "prompt": "do it"}


def test_use_alias_calls_another_pattern(tmp_path: Path) -> None:
    inner = tmp_path / "inner.prose.md"
    inner.write_text(
        HEADER.replace("name: par", "name: inner")
        .format(program="let r = call worker\n  item: item\nreturn { result: r }")
        .replace("- None.\n\n### Returns", "- `item`: string -- what to echo\n\n### Returns")
    )
    result = run(
        tmp_path,
        """
        use "inner.prose.md" as helper
        let r = call helper
          item: "x"
        return { result: r }
        """,
        {"slots": {"helper.worker": ["from the used pattern"]}},
        bindings={},
    )
    assert value(result) == {"result": "from the used pattern"}
    first = next(e for e in result.events if e.type == "call")
    assert first.path == "helper>" and first.provenance == []


# --- run_branches directly: each finished branch is handed over once, in order ----------


def _branches(delays: list[float]) -> list[Any]:
    from prose.runtime.values import Value

    def branch(position: int, delay: float) -> Any:
        async def run() -> Value:
            await asyncio.sleep(delay)
            return constant(position)

        return run

    return [branch(position, delay) for position, delay in enumerate(delays)]


def _gated(count: int, gate: asyncio.Event) -> list[Any]:
    """Branches that reach `gate` in reverse order of position, then all finish in one step
    of the loop once it opens: the last position's task is done first."""
    from prose.runtime.values import Value

    def branch(position: int) -> Any:
        async def run() -> Value:
            for _ in range(count - position):
                await asyncio.sleep(0)
            await gate.wait()
            return constant(position)

        return run

    return [branch(position) for position in range(count)]


def test_branches_that_finish_together_are_taken_in_position_order() -> None:
    from prose.runtime.parallel import Modifiers, run_branches

    async def main(mode: Modifiers) -> Any:
        gate = asyncio.Event()
        asyncio.get_running_loop().call_later(0.01, gate.set)
        return (await run_branches(_gated(4, gate), mode, on_dropped=lambda *_: None)).value

    # The four finish together, position 3 first: `first` still takes position 0, and
    # `any` with a count of 2 positions 0 and 1.
    assert asyncio.run(main(Modifiers("first"))).data == 0
    assert [item.data for item in asyncio.run(main(Modifiers("any", 2))).data] == [0, 1]


def test_many_branches_finishing_one_by_one_are_each_taken_once() -> None:
    from prose.runtime.parallel import Modifiers, run_branches

    delays = [(position * 7919 % 1000) / 20_000 for position in range(1000)]  # 0-50 ms, shuffled

    async def main() -> Any:
        return await run_branches(_branches(delays), Modifiers(), on_dropped=lambda *_: None)

    outcome = asyncio.run(main())
    assert [item.data for item in outcome.value.data] == list(range(1000))
    assert all(outcome.finished)
