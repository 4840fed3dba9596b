"""Traces (hash chain, secrets), budgets, the response cache, prompts and refused nodes."""

from __future__ import annotations

import asyncio
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from prose.lang.policy import Policy
from prose.llm import LLMConfig, Script
from prose.runtime import Limits, RunOptions, RunResult, run_pattern, verify_chain
from prose.runtime.budget import Budget
from prose.runtime.errors import BudgetExceeded
from prose.runtime.trace import read_events

HEADER = """---
name: traced
kind: pattern
version: 0.1.0
---

# Traced

Trace tests.

### Slots

- `worker`
  - ensures: an answer

### Config

- `rounds` (integer, default: 3): how many

### Invariants

- none

### Parameters

- `task`: string -- the task

### Returns

- `result`: anything

### Delegation

```prose
{program}
```
"""

LOOP = """
let out = repeat rounds as i:
  call worker
    task: task
    round: i
return { result: out }
"""


def write(tmp_path: Path, program: str = LOOP) -> Path:
    path = tmp_path / "traced.prose.md"
    path.write_text(HEADER.format(program=textwrap.dedent(program).strip()))
    return path


def run(
    tmp_path: Path, program: str = LOOP, replies: list[Any] | None = None, **options: Any
) -> RunResult:
    script = Script.from_mapping(
        {"slots": {"worker": replies or ["one two", "three four", "five six"]}}
    )
    options.setdefault("trace_path", tmp_path / "trace.jsonl")
    return asyncio.run(
        run_pattern(
            write(tmp_path, program), RunOptions(inputs={"task": "t"}, script=script, **options)
        )
    )


# --- trace -------------------------------------------------------------------------------


def test_trace_events_and_hash_chain(tmp_path: Path) -> None:
    result = run(tmp_path)
    assert result.exit_code == 0
    events = list(read_events(tmp_path / "trace.jsonl"))
    assert [e["type"] for e in events] == ["run_start", "call", "call", "call", "run_end"]
    call = events[1]
    for key in (
        "id",
        "slot",
        "index",
        "service",
        "model",
        "line",
        "messages",
        "output",
        "error",
        "provenance",
        "usage",
        "cost_usd",
        "latency_ms",
        "cache_hit",
        "sha256",
    ):
        assert key in call
    assert call["usage"] == {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}
    assert events[0]["pattern_sha256"] and events[0]["inputs"] == {"task": "t"}
    assert events[-1]["result"] == {"result": ["one two", "three four", "five six"]}
    assert events[-1]["totals"]["calls"] == 3 and events[-1]["status"] == "ok"
    assert verify_chain(tmp_path / "trace.jsonl") == (True, None)


def test_a_finished_run_fsyncs_its_trace_seal_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush survives a kill -9; surviving a crash of the machine takes an fsync of the
    trace, of its seal and of the folder naming them."""
    real_fsync, synced = os.fsync, []

    def fsync(fd: int) -> None:
        status = os.fstat(fd)
        synced.append((status.st_dev, status.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    folder = tmp_path / "traces"
    assert run(tmp_path, trace_path=folder / "trace.jsonl").exit_code == 0

    def identity(path: Path) -> tuple[int, int]:
        status = path.stat()
        return status.st_dev, status.st_ino

    wanted = [identity(folder / name) for name in ("trace.jsonl", "trace.jsonl.sha256")]
    assert synced == [*wanted, identity(folder)]
    synced.clear()
    assert run(tmp_path, trace_path=folder / "unsynced.jsonl", sync_trace=False).exit_code == 0
    assert synced == []
    assert verify_chain(folder / "unsynced.jsonl") == (True, None)


def test_tampering_breaks_the_chain(tmp_path: Path) -> None:
    run(tmp_path)
    path = tmp_path / "trace.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace("three four", "three FOUR")
    path.write_text("\n".join(lines) + "\n")
    assert verify_chain(path) == (False, 4)


def test_no_api_key_in_a_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-DO-NOT-LEAK-1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    config = LLMConfig.from_mapping(
        {
            "model_list": [
                {
                    "model_name": "fast",
                    "litellm_params": {"model": "openai/gpt-4o-mini", "api_key": secret},
                }
            ]
        }
    )
    result = run(tmp_path, llm_config=config, replies=[f"the key is {secret}", "b", "c"])
    assert result.exit_code == 0
    text = (tmp_path / "trace.jsonl").read_text()
    assert secret not in text
    assert "fast" in text  # the model config itself is recorded, masked


def test_a_config_secret_not_in_the_environment_is_masked_too(tmp_path: Path) -> None:
    secret = "config-only-secret-9876543210"
    config = LLMConfig.from_mapping(
        {
            "model_list": [
                {"model_name": "m", "litellm_params": {"model": "openai/x", "api_key": secret}}
            ]
        }
    )
    result = run(tmp_path, llm_config=config, replies=[f"echo {secret}", "b", "c"])
    assert result.exit_code == 0
    assert secret not in (tmp_path / "trace.jsonl").read_text()


def test_a_line_holds_what_json_cannot_write_and_masks_inside_it(tmp_path: Path) -> None:
    import datetime

    from prose.runtime.integrity import output_problem, output_sha256
    from prose.runtime.trace import CallEvent, RunStart, Trace

    secret = "bytes-secret-0123456789"
    trace = Trace(tmp_path / "t.jsonl", "r1", secrets=[secret])
    trace.emit(RunStart(pattern="p", pattern_sha256="0" * 64, inputs={
        "day": datetime.date(2026, 12, 3), "at": datetime.datetime(2026, 12, 3, 4, 5, 6),
        "tags": {"only"}, "raw": f"key {secret}".encode(), "set": frozenset([secret])}))
    output = {"score": float("nan"), "high": float("inf"), "ok": 1.5}
    trace.emit(CallEvent(id="c1", slot="s", service="model:m", output=output,
                         sha256=output_sha256(output)))
    trace.close()
    start, call = read_events(tmp_path / "t.jsonl")
    assert start["inputs"] == {"day": "2026-12-03", "at": "2026-12-03T04:05:06",
                               "tags": ["only"], "raw": "key ***", "set": ["***"]}
    assert secret not in (tmp_path / "t.jsonl").read_text()
    # JSON has no NaN or infinity: both are null, and the digest vouches for that
    assert call["output"] == {"score": None, "high": None, "ok": 1.5}
    assert output_problem(call) is None
    assert list(call)[:6] == ["type", "time", "run_id", "prev", "id", "slot"]
    assert verify_chain(tmp_path / "t.jsonl") == (True, None)


# --- budgets -------------------------------------------------------------------------------


def test_max_calls_stops_exactly_before_the_next_call(tmp_path: Path) -> None:
    result = run(tmp_path, limits=Limits(max_calls=2))
    assert result.exit_code == 3 and isinstance(result.error, BudgetExceeded)
    assert result.error.budget == "calls" and result.error.span is not None
    assert len([e for e in result.events if e.type == "call"]) == 2
    assert (
        result.events[-1].status == "budget" and result.events[-1].totals["stopped_by"] == "calls"
    )


def test_a_budget_stop_returns_the_finished_outputs_marked_partial(tmp_path: Path) -> None:
    """Issue 14.13: not a null result but what the run had, marked partial."""
    result = run(tmp_path, limits=Limits(max_calls=2))
    assert result.exit_code == 3
    outputs = [e.output for e in result.events if e.type == "call"]
    assert result.value == {"partial": True, "stopped_by": "calls", "outputs": [
        {"slot": "worker", "index": None, "output": output} for output in outputs]}
    assert result.events[-1].result == result.value


def test_max_tokens_stops_once_spent(tmp_path: Path) -> None:
    result = run(tmp_path, limits=Limits(max_tokens=22))  # 11 tokens per call
    assert result.exit_code == 3
    assert len([e for e in result.events if e.type == "call"]) == 2


def test_timeout_uses_the_injected_clock(tmp_path: Path) -> None:
    ticks = iter([0.0, 0.0, 5.0, 11.0, 11.0, 11.0, 11.0])
    result = run(tmp_path, limits=Limits(timeout=10), clock=lambda: next(ticks, 11.0))
    assert result.exit_code == 3 and result.error is not None
    assert "time budget" in result.error.message


def test_budget_admit_and_cost() -> None:
    budget = Budget(Limits(max_cost=0.01), clock=lambda: 0.0)
    budget.admit("a call")
    budget.record(10, 5, 0.02)
    with pytest.raises(BudgetExceeded, match="cost budget"):
        budget.admit("the next call")
    assert budget.totals()["total_tokens"] == 15


def test_judge_calls_count_against_the_call_budget(tmp_path: Path) -> None:
    script = Script.from_mapping({"conditions": {"task is hard": [True, True]}})
    result = asyncio.run(
        run_pattern(
            write(
                tmp_path,
                """
        if task is hard:
          if task is hard:
            return { result: 1 }
        return { result: 0 }
        """,
            ),
            RunOptions(
                inputs={"task": "t"}, script=script, limits=Limits(max_calls=1), write_trace=False
            ),
        )
    )
    assert result.exit_code == 3
    assert [e.type for e in result.events].count("judge") == 1


# --- prompts and refusals -------------------------------------------------------------------


def test_show_prompts_collects_messages_without_a_model(tmp_path: Path) -> None:
    from prose.runtime.placeholder import PlaceholderClient

    result = asyncio.run(
        run_pattern(
            write(tmp_path),
            RunOptions(
                inputs={"task": "t"},
                client=PlaceholderClient(),
                default_model="placeholder",
                show_prompts=True,
                write_trace=False,
            ),
        )
    )
    assert result.exit_code == 0 and len(result.prompts) == 3
    assert result.prompts[0]["messages"][1]["content"] == "## task\nt\n\n## round\n1"


def test_project_templates_override_the_defaults(tmp_path: Path) -> None:
    templates = tmp_path / ".prose" / "templates"
    templates.mkdir(parents=True)
    (templates / "call_user.j2").write_text(
        "{% for item in inputs %}<{{ item.name }}>{{ item.text }}</{{ item.name }}>{% endfor %}"
    )
    result = run(tmp_path, project_dir=tmp_path)
    call = next(e for e in result.events if e.type == "call")
    assert call.messages[-1]["content"] == "<task>t</task><round>1</round>"


def test_templates_are_sandboxed_and_strict(tmp_path: Path) -> None:
    from prose.runtime.prompts import PromptBuilder, TemplateProblem

    templates = tmp_path / ".prose" / "templates"
    templates.mkdir(parents=True)
    (templates / "call_user.j2").write_text("{{ inputs.__class__.__mro__ }}")
    with pytest.raises(TemplateProblem, match=r"call_user\.j2"):
        PromptBuilder(tmp_path).call_messages(role=None, ensures=None, prompt=None, inputs={})
    (templates / "call_user.j2").write_text("{{ pattern_name }}")
    with pytest.raises(TemplateProblem, match="'pattern_name' is undefined"):
        PromptBuilder(tmp_path).call_messages(role=None, ensures=None, prompt=None, inputs={})
    (templates / "call_user.j2").write_text("{% for %}")
    result = run(tmp_path, project_dir=tmp_path)
    assert result.exit_code == 1 and result.error is not None and "invalid" in result.error.message


def test_unknown_nodes_are_refused_with_a_code(tmp_path: Path) -> None:
    from dataclasses import dataclass

    from prose.runtime.context import RunContext
    from prose.runtime.interpreter import Interpreter
    from prose.runtime.scope import Scope
    from prose.source import Span
    from prose.syntax import nodes as n

    @dataclass(frozen=True)
    class Mystery(n.Node):
        pass

    from prose.runtime.budget import Budget
    from prose.runtime.cache import KeyMaker
    from prose.runtime.context import Shared
    from prose.runtime.prompts import PromptBuilder
    from prose.runtime.trace import Trace

    span = Span("x.prose", 3, 1, 3, 8)
    program = n.Program(body=(Mystery(span=span),))  # type: ignore[arg-type]
    shared = Shared(client=None, trace=Trace(None, "r"), budget=Budget(),  # type: ignore[arg-type]
                    semaphore=asyncio.Semaphore(1), keys=KeyMaker(), prompts=PromptBuilder(tmp_path))
    ctx = RunContext(
        shared=shared,
        program=program,
        spec=None,
        source="",
        filename="x.prose",  # type: ignore[arg-type]
        bindings={},
        policy=Policy("x"),
    )  # type: ignore[arg-type]
    with pytest.raises(Exception) as caught:
        asyncio.run(Interpreter(ctx).run(Scope()))
    assert getattr(caught.value, "code", None) == "R001" and "Mystery" in str(caught.value)
    assert caught.value.span == span  # type: ignore[attr-defined]


def test_orphan_else_is_refused(tmp_path: Path) -> None:
    result = run(tmp_path, "else:\n  let x = 1\nreturn { result: 1 }")
    assert result.exit_code == 1 and result.error is not None and result.error.code == "R001"


def test_inputs_are_validated_before_anything_runs(tmp_path: Path) -> None:
    path = write(tmp_path)
    missing = asyncio.run(run_pattern(path, RunOptions(script=Script(), write_trace=False)))
    assert missing.exit_code == 1 and "`task`" in missing.error.message  # type: ignore[union-attr]
    wrong = asyncio.run(
        run_pattern(
            path,
            RunOptions(
                inputs={"task": "t"}, config={"rounds": "many"}, script=Script(), write_trace=False
            ),
        )
    )
    assert wrong.exit_code == 1 and "not `integer`" in wrong.error.message  # type: ignore[union-attr]
    unknown = asyncio.run(
        run_pattern(
            path, RunOptions(inputs={"task": "t", "nope": 1}, script=Script(), write_trace=False)
        )
    )
    assert unknown.exit_code == 1 and "`nope`" in unknown.error.message  # type: ignore[union-attr]
    assert missing.events == [] and json.dumps(missing.totals) == "{}"


def test_progress_lines_plain_and_live() -> None:
    import io

    from prose.runtime.progress import Progress

    start = {"id": "c1", "slot": "critic", "index": 1, "model": "fast", "line": 7}
    end = {**start, "usage": {"prompt_tokens": 12, "completion_tokens": 5}, "latency_ms": 840}
    plain_stream = io.StringIO()
    plain_progress = Progress(stream=plain_stream, live=False)
    plain_progress("start", start)
    plain_progress("end", end)
    plain_progress("end", {**start, "error": {"kind": "timeout", "message": "no reply"}})
    assert plain_stream.getvalue().splitlines() == [
        "  ... critic[1] (fast) line 7",
        "  ok  critic[1] (fast) 12+5 tokens 0.84s",
        "  xx  critic[1] line 7: timeout: no reply",
    ]
    live_stream = io.StringIO()
    live = Progress(stream=live_stream, live=True)
    live("start", start)
    assert live.in_flight == {"c1": "critic[1]"}
    live("end", end)
    live.close()
    assert (
        live.in_flight == {} and "ok  critic[1] (fast) 12+5 tokens 0.84s" in live_stream.getvalue()
    )
