"""One batch's settings (`BatchPlan`) and how one row runs (`run_row`), for every executor.

A row is an independent pattern run (`prose.runtime.run_pattern`) with its own
trace, `<traces>/<index // 1000>/row-<index>.jsonl`, sharing the executor's
`SharedResources` (one client, one cap on calls in flight, one cache, one
budget pool). Its trace is its journal: when a row runs again after a crash,
a trace that ended (`run_end`) is its result and nothing is sent; one that
did not is replayed (`--resume` of `prose run`), so no finished call is paid
twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.runtime.budget import Limits

if TYPE_CHECKING:
    from prose.llm.config import LLMConfig
    from prose.pattern_file import PatternFile
    from prose.runtime.context import BudgetPool, SharedResources
    from prose.runtime.integrity import CheckedTrace, Damage
    from prose.runtime.runner import RunOptions
    from prose.runtime.services import SlotBinding

# RunResult.status -> a row's status in the results file
ROW_STATUS = {"ok": "ok", "error": "error", "budget": "budget", "violation": "hiding-violation",
              "waiting": "waiting"}  # waiting for a person: --resume runs it again
FINISHED = frozenset({"ok", "error", "hiding-violation"})  # never run again by --resume
POOL_BUDGETS = frozenset({"calls", "tokens", "cost"})  # what the batch's pool limits


@dataclass(frozen=True)
class BatchPlan:
    """What every row of a batch runs with; picklable, so Ray workers get it whole."""

    pattern_path: str
    pattern_text: str
    traces_dir: Path
    bindings: Mapping[str, SlotBinding] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    llm_config: LLMConfig | None = None
    default_model: str | None = None
    judge_model: str | None = None
    concurrency: int = 8
    row_limits: Limits = field(default_factory=Limits)  # each row's own (steps, timeout)
    pool_limits: Limits = field(default_factory=lambda: Limits(max_steps=None))
    project_dir: Path = Path(".")
    cache_dir: Path | None = None
    strict_flow: bool = False
    debug: bool = False
    allow_models: tuple[str, ...] = ()
    # Agents (docs/agents.md): what implements the declared `cli:`/`mcp:` tools (from the
    # instance file; a Python tool's function travels to a Ray worker by reference, so its
    # module must be importable there), and whether commands need an OS sandbox.
    tools: Mapping[str, Any] = field(default_factory=dict)
    require_sandbox: bool = False

    def trace_path(self, index: int) -> Path:
        return self.traces_dir / f"{index // 1000:04d}" / f"row-{index:07d}.jsonl"

    def options(self, **overrides: Any) -> RunOptions:
        from prose.runtime.runner import RunOptions

        settings: dict[str, Any] = {
            "config": self.config,
            "bindings": self.bindings,
            "llm_config": self.llm_config,
            "default_model": self.default_model,
            "judge_model": self.judge_model,
            "concurrency": self.concurrency,
            "limits": self.row_limits,
            "project_dir": self.project_dir,
            "cache_dir": self.cache_dir,
            "strict_flow": self.strict_flow,
            "debug": self.debug,
            "allow_models": self.allow_models,
            "tools": self.tools,
            "require_sandbox": self.require_sandbox,
        }
        settings.update(overrides)
        return RunOptions(**settings)

    def pattern(self) -> PatternFile:
        """The pattern, parsed from the text the driver linted (a worker may not see the file)."""
        from prose.pattern_file import pattern_from_text

        return pattern_from_text(self.pattern_text, self.pattern_path)

    def resources(self, concurrency: int, pool: BudgetPool | None) -> SharedResources:
        """The client, cap, cache and files the rows of one process share."""
        from prose.pattern_file import PatternFiles
        from prose.runtime.runner import shared_resources

        return shared_resources(self.options(concurrency=concurrency, files=PatternFiles()), pool)


def has_pool_limits(limits: Limits) -> bool:
    return any(v is not None for v in (limits.max_calls, limits.max_tokens, limits.max_cost))


async def run_row(
    plan: BatchPlan,
    resources: SharedResources,
    pattern: PatternFile,
    index: int,
    inputs: Mapping[str, Any],
    progress: Callable[[str, Mapping[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run row `index` (or take its result from its finished trace) and return its record.

    The row's trace is not `fsync`ed when it closes: the driver's results file syncs the
    traces' file system before each of its own syncs (`prose.batch.output.ResultsFile`).
    """
    from prose.runtime.runner import run_pattern

    trace = plan.trace_path(index)
    resume: Path | None = None
    damage: Damage | None = None
    exists = trace.is_file()
    checked = _checked(trace) if exists else None
    # A trace that records other inputs is another row's journal (the inputs file changed
    # since): neither its result nor its calls are this row's, which runs anew over it.
    if exists and not (checked is not None and other_inputs(checked, inputs)):
        ended = ended_record(index, trace, checked)
        if ended is not None:
            return ended
        resume = trace
        damage = checked.damage if checked is not None else None
    result = await run_pattern(pattern, plan.options(
        inputs=inputs,
        resources=resources,
        trace_path=trace,
        run_id=f"row-{index}",
        resume_trace=resume,
        resume_force=True,  # our own journal: replay its intact prefix, whatever follows it
        progress=progress,
        sync_trace=False,
    ))
    error = result.error.to_dict() if result.error is not None else None
    line = record(index, ROW_STATUS.get(result.status, "error"), result.value, error,
                  result.trace_path, result.totals)
    if damage is not None:  # the driver says so even with -q (`prose.batch.driver`)
        line["damaged_trace"] = {"line": damage.line, "reason": damage.reason,
                                 "replayed": damage.trusted}
    return line


def record(
    index: int,
    status: str,
    value: Any,
    error: Mapping[str, Any] | None,
    trace: Path | None,
    totals: Mapping[str, Any],
) -> dict[str, Any]:
    """A row's line in the results file."""
    return {
        "row": index,
        "status": status,
        "result": value if status in ("ok", "budget") else None,
        "error": dict(error) if error is not None else None,
        "trace": str(trace) if trace is not None else None,
        "calls": int(totals.get("calls", 0)),
        "cache_hits": int(totals.get("cache_hits", 0)),
        "tokens": int(totals.get("total_tokens", 0)),
        "cost_usd": float(totals.get("cost_usd", 0.0)),
        "seconds": float(totals.get("seconds", 0.0)),
        "stopped_by": totals.get("stopped_by"),
    }


def _checked(trace: Path) -> CheckedTrace | None:
    """What the row's trace vouches for; None when it cannot be read."""
    from prose.runtime.integrity import check_trace

    try:
        return check_trace(trace)
    except (OSError, RecursionError):
        return None


def other_inputs(checked: CheckedTrace, inputs: Mapping[str, Any]) -> bool:
    """Whether the trace's intact `run_start` records inputs other than `inputs` (it may add
    the pattern's defaults): then the trace is not this row's journal, nor its result the
    row's. An input masked as a secret there counts as other: the row runs again."""
    start = next((e for e in checked.events if e.get("type") == "run_start"), None)
    recorded = start.get("inputs") if start is not None else None
    if not isinstance(recorded, dict):
        return False  # nothing recorded to compare: the damage rules decide what is replayed
    return any(key not in recorded or _canonical(recorded[key]) != _canonical(value)
               for key, value in inputs.items())


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def ended_record(index: int, trace: Path, checked: CheckedTrace | None) -> dict[str, Any] | None:
    """The record of a row whose trace says it finished (ok, error or a hiding violation);
    None when it did not (no intact `run_end`, or a budget stop or an interruption), or when
    the trace (`checked`) cannot be read or is damaged."""
    if checked is None or checked.damage is not None:
        return None
    end = next((e for e in reversed(checked.events) if e.get("type") == "run_end"), None)
    if end is None:
        return None
    status = ROW_STATUS.get(str(end.get("status")), "")
    if status not in FINISHED:
        return None
    return record(index, status, end.get("result"), end.get("error"), trace,
                  end.get("totals") or {})


def budget_record(index: int, reason: str) -> dict[str, Any]:
    """A row not run because the batch's budget was spent before it started."""
    error = {"code": "R011", "kind": "budget", "message": reason}
    return record(index, "budget", None, error, None, {"stopped_by": "batch"})
