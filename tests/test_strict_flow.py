"""Strict mode for implicit flows (docs/language.md 5.4): lint and run time, same rules.

Each program is linted and run with a scripted model, in normal and in strict
mode. Normal mode tracks copies only, so these programs are clean there; in
strict mode a value chosen because of the critic's output carries it, and
both the linter (PH604/PH607) and the run time (exit 5, the call not sent)
must say so.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from prose.check import lint_text
from prose.llm import Script
from prose.runtime import RunOptions, run_pattern

PATTERN = """---
name: implicit
kind: pattern
version: 0.1.0
{flow}---

# Implicit

Implicit flows.

### Slots

- `writer`
  - ensures: draft text
- `critic`
  - ensures: verdict text
- `other`
  - ensures: summary text

### Config

- None.

### Invariants

{invariants}

### Parameters

- `task_brief`: string -- the brief

### Returns

- `result`: anything

### Delegation

```prose
{program}
```
"""

NEVER = "- `writer` never sees `critic`"

PROGRAMS = {
    "bound-under-if": """
        let verdict = call critic
          task_brief: task_brief
        let tone = "neutral"
        if verdict is not empty:
          tone = "harsh"
        let w = call writer
          tone: tone
        return { result: w }
        """,
    "index-by-hidden-value": """
        let verdict = call critic
          task_brief: task_brief
        let table = { yes: "go", no: "stop" }
        let pick = table[verdict]
        let w = call writer
          pick: pick
        return { result: w }
        """,
    "loop-over-hidden-list": """
        let verdict = call critic
          task_brief: task_brief
        let count = []
        for word in [verdict]:
          record "one" in count
        let w = call writer
          count: count
        return { result: w }
        """,
    "race-won-after-a-hidden-failure": """
        let verdict = call critic
          task_brief: task_brief
        let pick = parallel for x in ["a", "b"] ("first", on-fail: "ignore"):
          if x == "a":
            if verdict is not empty:
              throw "no"
            let slow = call other
              text: x
          return x
        let w = call writer
          pick: pick
        return { result: w }
        """,
    "after-a-block-that-could-throw": """
        let verdict = call critic
          task_brief: task_brief
        block check(v):
          if v is empty:
            throw "bad"
          return "ok"
        let tone = "calm"
        try:
          do check(verdict)
          tone = "harsh"
        catch:
          tone = "caught"
        let w = call writer
          tone: tone
        return { result: w }
        """,
    "after-a-catch-that-leaves-the-loop": """
        let verdict = call critic
          task_brief: task_brief
        let seen = 0
        for step in [1, 2]:
          try:
            if verdict is empty:
              throw "bad"
          catch:
            break
          seen = step
        let w = call writer
          seen: seen
        return { result: w }
        """,
    "block-defined-under-a-condition": """
        let verdict = call critic
          task_brief: task_brief
        if verdict is not empty:
          block tone():
            return "harsh"
        else:
          block tone():
            return "calm"
        let chosen = do tone()
        let w = call writer
          tone: chosen
        return { result: w }
        """,
}


def _write(tmp_path: Path, program: str, invariants: str = NEVER, flow: str = "") -> Path:
    path = tmp_path / "implicit.prose.md"
    path.write_text(PATTERN.format(program=textwrap.dedent(program).strip(),
                                   invariants=invariants, flow=flow))
    return path


def _hiding_errors(path: Path, strict: bool) -> list[str]:
    result = lint_text(path.read_text(), str(path), strict_flow=strict)
    return [d.code for d in result.diagnostics
            if d.category == "information-hiding" and d.severity.value == "error"]


def _run(path: Path, strict: bool) -> int:
    script = Script.from_mapping({"slots": {name: [f"{name} says no"] * 5
                                            for name in ("writer", "critic", "other")}})
    result = asyncio.run(run_pattern(path, RunOptions(
        inputs={"task_brief": "b"}, script=script, trace_path=path.parent / "t.jsonl",
        strict_flow=strict)))
    return result.exit_code


def _only_strict_mode_stops_it(path: Path, code: str) -> None:
    """Clean in normal mode (lint and run); `code` from lint and exit 5 in strict mode."""
    assert _hiding_errors(path, strict=False) == []
    assert _run(path, strict=False) == 0
    assert _hiding_errors(path, strict=True) == [code]
    assert _run(path, strict=True) == 5


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_normal_mode_tracks_copies_only(name: str, tmp_path: Path) -> None:
    path = _write(tmp_path, PROGRAMS[name])
    assert _hiding_errors(path, strict=False) == []
    assert _run(path, strict=False) == 0


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_strict_mode_is_caught_by_lint_and_stopped_at_run_time(name: str, tmp_path: Path) -> None:
    path = _write(tmp_path, PROGRAMS[name])
    assert _hiding_errors(path, strict=True) == ["PH604"]
    assert _run(path, strict=True) == 5


def test_the_frontmatter_asks_for_strict_mode(tmp_path: Path) -> None:
    path = _write(tmp_path, PROGRAMS["bound-under-if"], flow="flow: strict\n")
    assert _hiding_errors(path, strict=False) == ["PH604"]
    assert _run(path, strict=False) == 5


def test_strict_independence_follows_a_summariser(tmp_path: Path) -> None:
    program = """
        let verdict = call critic
          task_brief: task_brief
        let digest = call other
          text: verdict
        let w = call writer
          digest: digest
        return { result: w }
        """
    path = _write(tmp_path, program, invariants="- `writer` and `critic` are independent")
    _only_strict_mode_stops_it(path, "PH607")


def test_a_branch_not_taken_is_caught_by_lint_only(tmp_path: Path) -> None:
    """The run time sees the branch that ran; a value left alone because a branch did not
    run still says something (the known limit of run-time checks): lint covers it."""
    program = PROGRAMS["bound-under-if"].replace("is not empty", "is empty")
    path = _write(tmp_path, program)
    assert _hiding_errors(path, strict=True) == ["PH604"]
    assert _run(path, strict=True) == 0


def test_a_call_under_a_condition_is_not_an_observation(tmp_path: Path) -> None:
    program = """
        let verdict = call critic
          task_brief: task_brief
        if verdict is not empty:
          let w = call writer
            task_brief: task_brief
        return { result: verdict }
        """
    path = _write(tmp_path, program)
    assert _hiding_errors(path, strict=True) == []
    assert _run(path, strict=True) == 0


def test_an_early_exit_under_a_condition_raises_the_rest_of_the_body(tmp_path: Path) -> None:
    """`if verdict is empty: break`: the statements after it run only because the critic's
    verdict was not empty, so what they bind carries the critic in strict mode."""
    program = """
        let verdict = call critic
          task_brief: task_brief
        let seen = 0
        for step in [1, 2]:
          if verdict is empty:
            break
          seen = step
        let w = call writer
          seen: seen
        return { result: w }
        """
    path = _write(tmp_path, program)
    _only_strict_mode_stops_it(path, "PH604")


def test_an_early_exit_raises_the_later_iterations(tmp_path: Path) -> None:
    """`if x == <the critic's>: break` as the last statement: nothing follows it in the
    body, but every later iteration runs only because no earlier one left, so what they
    append carries the critic (the list's length tells where the loop stopped)."""
    program = """
        let verdict = call critic
          task_brief: task_brief
        let xs = []
        for x in [1, 2, 3]:
          append x to xs
          if x == length(verdict) * 0 + 2:
            break
        let w = call writer
          seen: xs
        return { result: w }
        """
    path = _write(tmp_path, program)
    _only_strict_mode_stops_it(path, "PH604")


def test_an_index_error_carries_the_index_in_both_modes(tmp_path: Path) -> None:
    """`table[verdict.length]` out of range: the error's message quotes the index (a number
    the critic's output decided), so `catch as err` carries the critic in both modes."""
    program = """
        let verdict = call critic
          task_brief: task_brief
        let table = ["a", "b"]
        let note = "none"
        try:
          let pick = table[verdict.length]
        catch as err:
          note = err.message
        let w = call writer
          note: note
        return { result: w }
        """
    path = _write(tmp_path, program)
    for strict in (False, True):
        assert _hiding_errors(path, strict=strict) == ["PH604"]
        assert _run(path, strict=strict) == 5


def test_memory_kept_under_a_condition_carries_it(tmp_path: Path) -> None:
    """A `persist` agent remembers a session that ran only because the critic's verdict
    was not empty; `resume:` sends that memory, so in strict mode it carries the critic."""
    program = """
        agent other:
          persist: true
          prompt: "You keep notes."
        let verdict = call critic
          task_brief: task_brief
        if verdict is not empty:
          let noted = session: other
            prompt: "Note that a review happened."
        let recap = resume: other
          prompt: "What did you note?"
        return { result: recap }
        """
    path = _write(tmp_path, program, invariants="- `other` never sees `critic`")
    _only_strict_mode_stops_it(path, "PH604")
