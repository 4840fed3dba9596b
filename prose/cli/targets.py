"""What `prose run` and `prose batch` share: the target, its pattern read and checked once,
and a SIGTERM that stops a run as Ctrl-C does."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from prose.cli.inputs import EXIT_USAGE, fail, shown

if TYPE_CHECKING:
    from prose.pattern_file import PatternFile, PatternFiles
    from prose.spec.model import PatternSpec


def declared_type(spec: PatternSpec, name: str) -> str | None:
    item = spec.config_param(name) or spec.parameter(name)
    return getattr(item, "type", None) if item is not None else None


def resolve_target(
    target: str, files: PatternFiles
) -> tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], tuple[str, ...]]:
    """The pattern path and the instance's bindings, config, inputs and `allow_models` (empty
    for a pattern)."""
    if not target.endswith((".yaml", ".yml")):
        if not Path(target).is_file():
            from prose.resources import patterns_dir

            library = patterns_dir() / f"{target}.prose.md"
            if "/" in target or not library.is_file():
                fail(f"{target}: no such file (nor a library pattern of that name)", EXIT_USAGE)
            return str(library), {}, {}, {}, ()
        return target, {}, {}, {}, ()
    from prose.errors import InputReadError
    from prose.runtime.loading import from_instance_binding
    from prose.spec.instance_loader import load_instance_file

    try:
        loaded = load_instance_file(target, files.spec_result)
    except InputReadError as error:
        fail(str(error), EXIT_USAGE)
    instance = loaded.instance
    if instance is None or loaded.errors or instance.pattern_path is None:
        for diagnostic in loaded.errors or loaded.diagnostics:
            click.echo(shown(f"{diagnostic.span}: {diagnostic.code} {diagnostic.message}"), err=True)
        fail(f"{target}: the instance cannot be run", 1)
    assert instance is not None and instance.pattern_path is not None
    base = Path(target).parent
    bindings = {name: from_instance_binding(b.value, base, b.keys) for name, b in instance.bindings.items()}
    return (
        instance.pattern_path,
        bindings,
        dict(instance.config_values),
        dict(instance.input_values),
        tuple(instance.allow_models),
    )


def resolve_tools(target: str, files: PatternFiles) -> dict[str, Any]:
    """What implements the tools of an instance file's `tools:` (empty for a pattern file);
    the instance was checked by `resolve_target` already."""
    if not target.endswith((".yaml", ".yml")):
        return {}
    from prose.runtime.errors import InputError
    from prose.runtime.tool_setup import providers_from_instance
    from prose.spec.instance_loader import load_instance_file

    instance = load_instance_file(target, files.spec_result).instance
    if instance is None or not instance.tools:
        return {}
    try:
        return providers_from_instance(instance.tools, Path(target).parent)
    except InputError as error:
        fail(f"{target}: {error.message}", 1)


def separate_tools(tools: dict[str, Any]) -> frozenset[str]:
    """The external tools the instance binds `separate` (a server per slot): no channel
    between the slots using them (`prose.lang.tools.ToolUse.separate`)."""
    return frozenset(spelling for spelling, tool in tools.items()
                     if getattr(tool, "separate", False))


def checked_pattern(path: str, files: PatternFiles, no_check: bool, strict_flow: bool,
                    separate: frozenset[str] = frozenset()) -> PatternFile:
    """The pattern file, read once; unless --no-check, refuse one with lint errors (exit 1),
    judging the channels through tools with the instance's `separate` ones (`separate`)."""
    from prose.errors import InputReadError, ProseSyntaxError

    try:
        pattern = files.get(path)
    except InputReadError as error:
        fail(str(error), EXIT_USAGE)
    except ProseSyntaxError as error:
        click.echo(shown(error.format()), err=True)
        raise SystemExit(1) from None
    if pattern.spec is not None:
        refuse_standing(pattern.spec)
    if not no_check:
        from prose.check import lint_pattern
        from prose.diagnostics import Summary, render_full
        from prose.diagnostics.model import Severity

        result = lint_pattern(pattern, strict_flow=strict_flow, separate_tools=separate)
        errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
        if errors:
            summary = Summary.of(errors, files=1)
            click.echo(render_full(errors, {path: pattern.text}, summary, color=False), err=True)
            click.echo(
                "error: the pattern has lint errors; fix them or run with --no-check", err=True
            )
            raise SystemExit(1)
    if pattern.spec is None:
        for diagnostic in pattern.spec_errors:
            click.echo(shown(f"{diagnostic.span}: {diagnostic.code} {diagnostic.message}"), err=True)
        raise SystemExit(1)
    return pattern


def refuse_standing(spec: PatternSpec) -> None:
    """Exit 2 for a contract `prose run` does not run, saying what it is instead."""
    from prose.contracts import standing_description

    text = standing_description(spec)
    if text is not None:
        click.echo(text, err=True)
        raise SystemExit(EXIT_USAGE)


def use_cache(flag: bool | None, default_model: str | None) -> bool:
    """`--cache`/`--no-cache` as given; otherwise on only for the embedded local model (free)."""
    if flag is not None:
        return flag
    from prose.llm.local import LOCAL_PROVIDER

    return bool(default_model and default_model.startswith(LOCAL_PROVIDER + "/"))


def stop_on_sigterm(terminated: list[int]) -> Any:
    """SIGTERM stops a run as Ctrl-C does: the trace gets its `run_end` and its seal."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(number: int, frame: Any) -> None:
        terminated.append(number)
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, stop)


def restore_sigterm(previous: Any) -> None:
    import signal

    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
