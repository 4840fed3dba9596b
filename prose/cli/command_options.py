"""The options of `prose run` and `prose batch`, typed: what click parsed, as one frozen
object per command instead of a `dict[str, Any]`.

Each field is a click parameter of its command, under the parameter's name; a test holds
the two lists equal (`tests/test_command_options.py`), so an option added to a command
without its field fails at once (`TypeError` from `from_click`), not as a `KeyError`
deep in the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Self


@dataclass(frozen=True, kw_only=True)
class CommandOptions:
    """What `prose run` and `prose batch` share: the target, its values, the model, the
    limits and how the command reports."""

    target: str
    inputs: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()
    binds: tuple[str, ...] = ()
    model: str | None = None
    judge_model: str | None = None
    allow_models: tuple[str, ...] = ()
    config_file: str | None = None
    cache: bool | None = None
    concurrency: int | None = None
    max_calls: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    timeout: float | None = None
    max_steps: int | None = None
    no_check: bool = False
    strict_flow: bool = False
    as_json: bool = False
    quiet: bool = False
    debug: bool = False

    @classmethod
    def from_click(cls, options: Mapping[str, Any]) -> Self:
        """The options click parsed (its keyword arguments to the command)."""
        return cls(**options)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(field.name for field in fields(cls))


@dataclass(frozen=True, kw_only=True)
class RunCommandOptions(CommandOptions):
    """`prose run`'s options (`prose run --help`)."""

    input_files: tuple[str, ...] = ()
    script: str | None = None
    trace_path: str | None = None
    resume: str | None = None  # a run id or a trace to continue
    force: bool = False
    answer_as: str | None = None
    no_ask: bool = False
    show_prompts: bool = False
    require_distinct_models: bool = False
    write_report: bool = False
    otel: bool = False
    require_sandbox: bool = False
    keep_workspaces: bool = False


@dataclass(frozen=True, kw_only=True)
class BatchCommandOptions(CommandOptions):
    """`prose batch`'s options (`prose batch --help`)."""

    rows_path: str
    out_path: str | None = None
    maps: tuple[str, ...] = ()
    executor: str = "local"
    address: str | None = None
    workers: int | None = None
    resume: bool = False  # continue the results file after a crash
    fail_fast: bool = False
    require_sandbox: bool = False


__all__ = ["BatchCommandOptions", "CommandOptions", "RunCommandOptions"]
