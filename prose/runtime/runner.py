"""`run_pattern`: load, bind, check, run and trace one pattern instance.

    result = await run_pattern("patterns/dialectic.prose.md",
                               RunOptions(inputs={"task_brief": "..."}, script=script))
    result.exit_code, result.value, result.trace_path

Everything that can be checked before a call is checked first (the pattern,
bindings, config, inputs, `--require-distinct-models`); then `run_start` is
written, the program runs, and `run_end` records the result, the totals and
the status, whatever happened.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prose.runtime.budget import Budget, Limits
from prose.runtime.cache import KeyMaker
from prose.runtime.context import DEFAULT_CONCURRENCY, Client, RunContext, Shared
from prose.runtime.errors import (
    EXIT_OK,
    CallFailed,
    InformationHidingViolation,
    InputError,
    ProseRuntimeError,
)
from prose.runtime.interpreter import Interpreter
from prose.runtime.loading import (
    LoadedPattern,
    config_values,
    declared_names,
    input_values,
    iterated_slots,
    load_pattern,
    uses,
)
from prose.runtime.scope import Kind, Scope
from prose.runtime.services import (
    ModelService,
    PatternService,
    SlotBinding,
    describe_bindings,
    scripted,
)
from prose.runtime.trace import ErrorEvent, NoteEvent, RunEnd, RunStart, Trace
from prose.runtime.values import Service, Value, plain, wrap
from prose.syntax import nodes as n

STATUS_BY_EXIT = {0: "ok", 1: "error", 3: "budget", 4: "error", 5: "violation"}


@dataclass
class RunOptions:
    """How to run a pattern. Every field has a default; see `prose run --help` for meanings."""

    inputs: Mapping[str, Any] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    bindings: Mapping[str, SlotBinding] = field(default_factory=dict)
    script: Any = None  # prose.llm.Script
    client: Client | None = None
    llm_config: Any = None  # prose.llm.LLMConfig
    default_model: str | None = None
    judge_model: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    limits: Limits = field(default_factory=Limits)
    trace_path: str | Path | None = None
    write_trace: bool = True
    run_id: str | None = None
    project_dir: str | Path = "."
    cache_dir: str | Path | None = None
    resume_trace: str | Path | None = None
    require_distinct_models: bool = False
    show_prompts: bool = False
    progress: Callable[[str, Mapping[str, Any]], None] | None = None
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    clock: Callable[[], float] = time.monotonic
    backoff_base_s: float = 1.0


@dataclass
class RunResult:
    """How a run ended: `exit_code` (0, 1, 3, 4, 5), the returned `value` as plain data."""

    run_id: str
    exit_code: int
    status: str
    value: Any = None
    error: ProseRuntimeError | None = None
    trace_path: Path | None = None
    totals: dict[str, Any] = field(default_factory=dict)
    events: list[Any] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def bind_slots(
    loaded: LoadedPattern, given: Mapping[str, SlotBinding], *, script: Any, default_model: str | None,
    key_prefix: str = "",
) -> tuple[dict[str, SlotBinding], frozenset[str]]:
    """Every slot's binding (scripted, given or the default model) and the list-valued slots."""
    spec = loaded.spec
    slots = set(spec.slot_names)
    list_slots = set(spec.list_valued_slots()) | iterated_slots(loaded.program, slots)
    list_slots |= {name for name, binding in given.items() if isinstance(binding, list)}
    unknown = [name for name in given if name not in slots and name not in uses(loaded.program)]
    if unknown:
        raise InputError(f"`{unknown[0]}` is not a slot of this pattern (slots: "
                         + ", ".join(f"`{s}`" for s in spec.slot_names) + ")")
    bindings: dict[str, SlotBinding] = {}
    remaining = script.remaining() if script is not None else {}
    for name in spec.slot_names:
        binding: SlotBinding | None = given.get(name)
        if script is not None:
            key = key_prefix + name
            lists = sum(1 for k in remaining if k.startswith(f"slot:{key}["))
            base: SlotBinding = binding if binding is not None else ModelService()
            if name in list_slots and not isinstance(base, list):
                base = [ModelService()] * max(lists, 1)
            binding = scripted(base, key, None)
        elif binding is None:
            if not default_model:
                raise InputError(f"the slot `{name}` is not bound: use `--bind {name}=MODEL`, "
                                 "`--model MODEL`, an instance file, or `--script`")
            binding = [ModelService()] if name in list_slots else ModelService()
        bindings[name] = binding
    for alias, path in uses(loaded.program).items():
        nested = given.get(alias)
        target = str(Path(loaded.path).parent / path)
        bindings[alias] = nested if isinstance(nested, PatternService) else PatternService(target)
    return bindings, frozenset(list_slots)


def globals_scope(ctx: RunContext, config: Mapping[str, Any], inputs: Mapping[str, Any]) -> Scope:
    """Slots, config keys, parameters and `use` aliases: the read-only outermost scope."""
    scope = Scope()
    for name, binding in ctx.bindings.items():
        kind = Kind.ALIAS if name in ctx.aliases else Kind.SLOT
        if isinstance(binding, list):
            services = tuple(Value(Service(name, i)) for i in range(len(binding)))
            scope.define(name, Value(services), kind)
        else:
            scope.define(name, Value(Service(name)), kind)
    for name, value in config.items():
        scope.define(name, wrap(value), Kind.CONFIG)
    for name, value in inputs.items():
        scope.define(name, wrap(value), Kind.PARAMETER)
    return scope


def _model_of(binding: SlotBinding, default: str) -> set[str]:
    items = binding if isinstance(binding, list) else [binding]
    return {item.model or default for item in items if isinstance(item, ModelService)}


def check_distinct_models(policy: Any, bindings: Mapping[str, SlotBinding], default: str) -> None:
    for a, b in policy.independent:
        shared = _model_of(bindings[a], default) & _model_of(bindings[b], default)
        if shared and a in bindings and b in bindings:
            raise InformationHidingViolation(
                f"`{a}` and `{b}` are independent but both route to `{sorted(shared)[0]}` "
                "(--require-distinct-models)"
            )


def _client(options: RunOptions) -> Client:
    if options.client is not None:
        return options.client
    if options.script is not None:
        from prose.llm import scripted_client

        return scripted_client(options.script, options.llm_config)
    from prose.llm import LLMConfig, RouterClient

    config = options.llm_config if options.llm_config is not None else LLMConfig()
    return RouterClient(config)


def _cache(options: RunOptions) -> Any:
    if options.resume_trace is not None:
        from prose.runtime.cache import ReplayCache

        return ReplayCache.from_trace(options.resume_trace)
    if options.cache_dir is not None and options.script is None:
        from prose.runtime.cache import ResponseCache

        return ResponseCache(options.cache_dir)
    return None


async def run_pattern(pattern: str | Path, options: RunOptions | None = None) -> RunResult:
    """Run a pattern file with `options`; never raises for a pattern, input or model problem."""
    options = options or RunOptions()
    run_id = options.run_id or new_run_id()
    trace_path: Path | None = None
    if options.write_trace:
        trace_path = Path(options.trace_path) if options.trace_path else (
            Path(options.project_dir) / ".prose" / "runs" / run_id / "trace.jsonl")
    try:
        loaded = load_pattern(pattern)
        default_model = options.default_model or _config_default(options, "default_model")
        judge_model = options.judge_model or _config_default(options, "judge_model") or default_model
        bindings, list_slots = bind_slots(loaded, options.bindings, script=options.script,
                                          default_model=default_model)
        config = config_values(loaded.spec, options.config, "config")
        inputs = input_values(loaded.spec, options.inputs, config)
        from prose.check.policy import compile_policy

        policy = compile_policy(loaded.spec)
        if options.require_distinct_models:
            check_distinct_models(policy, bindings, default_model or "")
    except ProseRuntimeError as error:
        return RunResult(run_id, error.exit_code, STATUS_BY_EXIT.get(error.exit_code, "error"), error=error)
    trace = Trace(trace_path, run_id)
    shared = Shared(
        client=_client(options), trace=trace, budget=Budget(options.limits, options.clock),
        semaphore=asyncio.Semaphore(max(options.concurrency, 1)),
        keys=KeyMaker(),
        prompts=_prompts(options), cache=_cache(options), default_model=default_model or "",
        judge_model=judge_model or "", scripted=options.script is not None,
        backoff_base_s=options.backoff_base_s, sleep=options.sleep, progress=options.progress,
        shown=[] if options.show_prompts else None,
    )
    ctx = RunContext(shared, loaded.program, loaded.spec, loaded.text, loaded.path, bindings, policy,
                     list_slots, declared_names(loaded.program), aliases=uses(loaded.program))
    trace.emit(RunStart(
        pattern=loaded.path, pattern_sha256=hashlib.sha256(loaded.text.encode()).hexdigest(),
        inputs=inputs, config=config, bindings=describe_bindings(bindings),
        models=_model_settings(options, default_model, judge_model), policy=policy.to_dict(),
        resumed_from=str(options.resume_trace) if options.resume_trace else None,
    ))
    value: Any = None
    error: ProseRuntimeError | None = None
    try:
        result = await _run_with_timeout(ctx, globals_scope(ctx, config, inputs))
        value = plain(result)
        _compare_returns(ctx, value)
    except ProseRuntimeError as failure:
        error = failure
    exit_code = error.exit_code if error is not None else EXIT_OK
    if error is not None and not (isinstance(error, CallFailed | InformationHidingViolation)):
        trace.emit(ErrorEvent(code=error.code, kind=error.kind, message=error.message, slot=error.slot,
                              file=error.span.file if error.span else None,
                              line=error.span.line if error.span else None,
                              column=error.span.column if error.span else None))
    totals = shared.budget.totals()
    trace.emit(RunEnd(status=STATUS_BY_EXIT.get(exit_code, "error"), exit_code=exit_code,  # type: ignore[arg-type]
                      result=value, error=error.to_dict() if error else None, totals=totals))
    trace.close()
    return RunResult(run_id, exit_code, STATUS_BY_EXIT.get(exit_code, "error"), value, error,
                     trace_path, totals, trace.events, shared.shown or [])


async def _run_with_timeout(ctx: RunContext, scope: Scope) -> Value:
    budget = ctx.shared.budget
    remaining = budget.remaining_time()
    interpreter = Interpreter(ctx)
    if remaining is None:
        return await interpreter.run(scope)
    try:
        async with asyncio.timeout(remaining):
            return await interpreter.run(scope)
    except TimeoutError:
        raise budget.stop("timeout", f"budget stop: the time budget of {budget.limits.timeout:g}s ran out "
                          "while calls were in flight") from None


def _config_default(options: RunOptions, name: str) -> str | None:
    config = options.llm_config
    value = getattr(config, name, None) if config is not None else None
    return str(value) if value else None


def _prompts(options: RunOptions) -> Any:
    from prose.runtime.prompts import PromptBuilder

    return PromptBuilder(options.project_dir)


def _model_settings(options: RunOptions, default_model: str | None, judge_model: str | None) -> dict[str, Any]:
    settings: dict[str, Any] = {"default_model": default_model, "judge_model": judge_model,
                                "concurrency": options.concurrency, "limits": options.limits.to_dict(),
                                "scripted": options.script is not None}
    config = options.llm_config
    if config is not None:
        from prose.llm.redact import mask_secrets

        settings["llm_config"] = mask_secrets(config.model_dump(mode="json"))
    return settings


def _compare_returns(ctx: RunContext, value: Any) -> None:
    """A note when the returned object's keys differ from `### Returns` (never an error)."""
    spec = ctx.spec
    if spec is None or not spec.returns or ctx.prefix:
        return
    declared = {key.name for key in spec.returns}
    actual = set(value) if isinstance(value, dict) else set()
    if declared != actual:
        ctx.shared.trace.emit(NoteEvent(
            what="returns_mismatch", file=ctx.filename,
            message=f"the result's keys {sorted(actual)} differ from ### Returns {sorted(declared)}"))


async def run_nested(
    parent: RunContext, service: PatternService, slot: str, inputs: dict[str, Any], node: n.Call
) -> Value:
    """Run a nested pattern instance as a call: its own scope, the parent's meters and trace."""
    try:
        loaded = load_pattern(service.path)
        scripted_script = parent.shared.client if parent.shared.scripted else None
        script = getattr(scripted_script, "script", None)
        bindings, list_slots = bind_slots(loaded, service.bindings, script=script,
                                          default_model=parent.shared.default_model,
                                          key_prefix=f"{slot}.")
        config = config_values(loaded.spec, service.config, f"nested pattern `{slot}`")
        values = input_values(loaded.spec, inputs, config)
        from prose.check.policy import compile_policy

        policy = compile_policy(loaded.spec)
    except InputError as error:
        raise error.at(node.span, parent.source) from None
    ctx = RunContext(parent.shared, loaded.program, loaded.spec, loaded.text, loaded.path, bindings,
                     policy, list_slots, declared_names(loaded.program),
                     prefix=f"{parent.prefix}{slot}>", aliases=uses(loaded.program))
    try:
        return await Interpreter(ctx).run(globals_scope(ctx, config, values))
    except ProseRuntimeError as error:
        if not error.catchable or isinstance(error, CallFailed):
            raise
        raise CallFailed(f"the nested pattern `{slot}` failed: {error.message}", node.span,
                         source=parent.source, slot=slot, kind=error.kind) from None
