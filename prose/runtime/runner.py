"""`run_pattern`: load, bind, check, run and trace one pattern instance.

    result = await run_pattern("patterns/dialectic.prose.md",
                               RunOptions(inputs={"task_brief": "..."}, script=script))
    result.exit_code, result.value, result.trace_path

Everything that can be checked before a call is checked first (the pattern,
bindings, config, inputs, `--require-distinct-models`); then `run_start` is
written, the program runs, and `run_end` records the result, the totals and
the status, whatever happened.

Several runs side by side (the rows of `prose batch`) share one client, one
cap on calls in flight, one cache and one budget pool: build them once with
`shared_resources(options)` and pass them in each run's `RunOptions.resources`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from prose.errors import InputReadError, ProseError, ProseSyntaxError
from prose.pattern_file import PatternFile, PatternFiles
from prose.runtime.binding import bind_slots, check_distinct_models, globals_scope
from prose.runtime.budget import Budget, Limits
from prose.runtime.cache import KeyMaker
from prose.runtime.context import (
    DEFAULT_CONCURRENCY,
    BudgetPool,
    Client,
    PooledBudget,
    RunContext,
    Shared,
    SharedResources,
)
from prose.runtime.errors import (
    EXIT_OK,
    BudgetExceeded,
    CallFailed,
    GateViolation,
    InformationHidingViolation,
    InputError,
    ModelNotGranted,
    ProseRuntimeError,
    ResultBroken,
    RunIOError,
    WaitingForPerson,
)
from prose.runtime.integrity import replayed_lines
from prose.runtime.interpreter import Interpreter
from prose.runtime.loading import (
    LoadedPattern,
    config_values,
    declared_names,
    input_values,
    load_pattern,
    uses,
)
from prose.runtime.mcp_client import McpServers, McpToolSpec
from prose.runtime.results import broken_results
from prose.runtime.scope import Scope
from prose.runtime.services import (
    ModelService,
    PatternService,
    SlotBinding,
    describe_bindings,
)
from prose.runtime.tool_setup import check_tools
from prose.runtime.toolbox import separate_providers
from prose.runtime.trace import (
    CallEvent,
    ErrorEvent,
    NoteEvent,
    RunEnd,
    RunStart,
    Trace,
    end_uninterrupted,
)
from prose.runtime.trace_writer import TraceUnwritable
from prose.runtime.values import Value, plain
from prose.source import Span
from prose.syntax import nodes as n
from prose.uses import MAX_NESTING, use_roots

if TYPE_CHECKING:
    from prose.lang.policy import Policy
    from prose.llm.config import LLMConfig
    from prose.llm.script import Script

T = TypeVar("T")
Status = Literal["ok", "error", "budget", "violation", "interrupted", "waiting"]
STATUS_BY_EXIT: dict[int, Status] = {0: "ok", 1: "error", 3: "budget", 4: "error", 5: "violation",
                                     6: "waiting"}


@dataclass
class RunOptions:
    """How to run a pattern. Every field has a default; see `prose run --help` for meanings."""

    inputs: Mapping[str, Any] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    bindings: Mapping[str, SlotBinding] = field(default_factory=dict)
    script: Script | None = None
    client: Client | None = None
    llm_config: LLMConfig | None = None
    default_model: str | None = None
    judge_model: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    limits: Limits = field(default_factory=Limits)
    trace_path: str | Path | None = None
    write_trace: bool = True
    # fsync the trace when the run ends; False when the caller makes many runs' traces
    # durable at once (the rows of `prose batch`)
    sync_trace: bool = True
    run_id: str | None = None
    project_dir: str | Path = "."
    cache_dir: str | Path | None = None
    resume_trace: str | Path | None = None
    # Replay a damaged trace's intact prefix instead of refusing it (`--resume --force`).
    resume_force: bool = False
    require_distinct_models: bool = False
    # Models a pattern may name (`--allow-model`, an instance's `allow_models:`); the run's
    # default and judge models and the models the bindings name are granted as well.
    allow_models: tuple[str, ...] = ()
    # Strict mode for implicit flows (`prose.lang.flows`), besides the pattern's `flow: strict`.
    strict_flow: bool = False
    show_prompts: bool = False
    progress: Callable[[str, Mapping[str, Any]], None] | None = None
    # Pattern files already read (`prose run` of an instance reads its patterns while loading it).
    files: PatternFiles | None = None
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    clock: Callable[[], float] = time.monotonic
    backoff_base_s: float = 1.0
    debug: bool = False
    # People (docs/people.md): who answers on this run's terminal (`--as`, else the OS
    # user), the terminal to ask on (None: questions wait, exit 6), and the command that
    # resumes the run, written with the waiting questions.
    answerer: str | None = None
    terminal: Any = None
    resume_hint: str | None = None
    # Agents (docs/agents.md): what implements the declared `cli:`/`mcp:` tools
    # (`prose.runtime.toolbox.Provider` by spelling), whether a run without an OS sandbox
    # is refused (`--require-sandbox`), and whether workspaces are kept (`--keep-workspaces`).
    tools: Mapping[str, Any] = field(default_factory=dict)
    require_sandbox: bool = False
    keep_workspaces: bool = False
    # Shared with other runs (`shared_resources`): then `client`, `script`'s client,
    # `concurrency`, `cache_dir` and `files` are theirs, and `limits` bound this run alone
    # while the pool's bound them all. `resume_trace` still replays this run's own calls.
    resources: SharedResources | None = None


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


def _client(options: RunOptions) -> Client:
    if options.client is not None:
        return options.client
    if options.script is not None:
        from prose.llm import scripted_client

        config = options.llm_config
        if config is not None:
            config = config.model_copy(update={"concurrency": max(options.concurrency, 1)})
        return scripted_client(options.script, config)
    from prose.llm import LLMConfig, RouterClient

    config = options.llm_config if options.llm_config is not None else LLMConfig()
    # The run's semaphore is the one cap on calls in flight (LANGUAGE.md:
    # shared by all branches); the client must not impose a lower one.
    config = config.model_copy(update={"concurrency": max(options.concurrency, 1)})
    return RouterClient(config, debug=options.debug)


def _cache(options: RunOptions) -> Any:
    if options.resume_trace is not None:
        from prose.runtime.cache import ReplayCache

        try:
            return ReplayCache.from_trace(options.resume_trace, force=options.resume_force)
        except OSError as error:
            raise RunIOError(
                f"cannot read the trace to resume {options.resume_trace}: {error.strerror or error}"
            ) from None
    if options.cache_dir is not None and options.script is None:
        from prose.runtime.cache import ResponseCache

        return ResponseCache(options.cache_dir, secrets=_config_secrets(options))
    return None


def _config_secrets(options: RunOptions) -> list[str]:
    return sorted(options.llm_config.secrets()) if options.llm_config is not None else []


def shared_resources(options: RunOptions, pool: BudgetPool | None = None) -> SharedResources:
    """Build once what several runs share: the client, the semaphore (`options.concurrency`
    calls in flight for them all), the response cache (`options.cache_dir`), the pattern
    files and prompt templates, and `pool`, the budget they draw on together (e.g. a
    `Budget`). Pass it in each run's `RunOptions.resources`."""
    cache = None
    if options.cache_dir is not None and options.script is None:
        from prose.runtime.cache import ResponseCache

        cache = ResponseCache(options.cache_dir, secrets=_config_secrets(options))
    return SharedResources(
        client=_client(options),
        semaphore=asyncio.Semaphore(max(options.concurrency, 1)),
        files=options.files if options.files is not None else PatternFiles(),
        prompts=_prompts(options),
        cache=cache,
        pool=pool,
    )


async def run_pattern(
    pattern: str | Path | PatternFile, options: RunOptions | None = None
) -> RunResult:
    """Run a pattern file (a path, or one already read by `prose.pattern_file`) with `options`.

    Never raises for a pattern, input or model problem.
    """
    options = options or RunOptions()
    run_id = options.run_id or new_run_id()
    trace_path: Path | None = None
    if options.write_trace:
        trace_path = (
            Path(options.trace_path)
            if options.trace_path
            else (Path(options.project_dir) / ".prose" / "runs" / run_id / "trace.jsonl")
        )
    default_model = options.default_model or _config_default(options, "default_model")
    judge_model = options.judge_model or _config_default(options, "judge_model") or default_model
    resources = options.resources
    if resources is not None:
        files = resources.files
    else:
        files = options.files if options.files is not None else PatternFiles()
    try:
        loaded = load_pattern(pattern, files)
        roots = memo(resources, ("roots", loaded.path, os.getcwd()),
                     lambda: use_roots(loaded.path))
        instance = _instance(
            loaded,
            options.bindings,
            options.config,
            options.inputs,
            script=options.script,
            default_model=default_model,
            strict=options.strict_flow or None,
            roots=roots,
            policies=resources.policies if resources is not None else None,
        )
        if options.require_distinct_models:
            check_distinct_models(instance.policy, instance.bindings, default_model or "")
        isolation = check_tools(loaded.spec, options.tools, loaded.text,
                                require_sandbox=options.require_sandbox)
        if options.script is None:
            _refuse_ungranted(loaded, options, default_model, judge_model)
        prompts = resources.prompts if resources is not None else _prompts(options)
        # Before the trace is opened: `--trace` may name the resumed file.
        cache = _cache(options) if resources is None or options.resume_trace else resources.cache
        desk = _desk(options)
        trace = _open_trace(options, trace_path, run_id, resources)
    except ProseRuntimeError as error:
        return RunResult(
            run_id, error.exit_code, STATUS_BY_EXIT.get(error.exit_code, "error"), error=error
        )
    budget = (
        PooledBudget(options.limits, options.clock, resources.pool)
        if resources is not None and resources.pool is not None
        else Budget(options.limits, options.clock)
    )
    shared = Shared(
        client=resources.client if resources is not None else _client(options),
        trace=trace,
        budget=budget,
        semaphore=resources.semaphore if resources is not None else asyncio.Semaphore(
            max(options.concurrency, 1)),
        keys=KeyMaker(),
        prompts=prompts,
        cache=cache,
        default_model=default_model or "",
        judge_model=judge_model or "",
        granted_models=granted_models(options, default_model, judge_model),
        scripted=options.script is not None,
        backoff_base_s=options.backoff_base_s,
        sleep=options.sleep,
        progress=options.progress,
        shown=[] if options.show_prompts else None,
        run_nested=run_nested,
        files=files,
        roots=roots,
        people=desk,
        tools=dict(options.tools),
        isolation=isolation,
        keep_workspaces=options.keep_workspaces,
        mcp=McpServers() if any(isinstance(p, McpToolSpec) for p in options.tools.values())
        else None,
    )
    ctx = instance.context(shared, loaded, ancestry=(Path(loaded.path).resolve(),))
    apart = separate_providers(options.tools)  # a server per slot (docs/agents.md)
    start = RunStart(
            pattern=loaded.path,
            pattern_sha256=hashlib.sha256(loaded.text.encode()).hexdigest(),
            inputs=instance.inputs,
            config=instance.config,
            bindings=describe_bindings(instance.bindings),
            models=memo(resources, ("models", default_model, judge_model, options.allow_models,
                                    options.concurrency,
                                    repr(options.limits), options.script is not None),
                        lambda: _model_settings(options, default_model, judge_model),
                        owner=options.llm_config),
            policy=memo(resources, ("policy",), instance.policy.to_dict,
                        owner=instance.policy),
            resumed_from=str(options.resume_trace) if options.resume_trace else None,
            tools=[{"slot": slot.name, "tool": tool.spelling, "writes": tool.writes,
                    **({"separate": True} if tool.spelling in apart else {})}
                   for slot in loaded.spec.slots for tool in slot.tools] or None,
        )
    try:  # written through to the file (a checkpoint) before anything is sent
        trace.emit(start)
        damage = getattr(cache, "damage", None)
        if damage is not None:  # `--resume --force` of a damaged trace
            trace.emit(NoteEvent(
                what="resume_prefix",
                message=f"the resumed trace is damaged at line {damage.line} ({damage.reason}); "
                f"{replayed_lines(damage)} were replayed",
                detail={"line": damage.line, "reason": damage.reason, "trusted": damage.trusted},
            ))
    except (OSError, TraceUnwritable) as failure:  # `--trace /dev/full`, a full disk: exit 2
        trace.abandon()
        cause = failure.error if isinstance(failure, TraceUnwritable) else failure
        unwritable = RunIOError(f"cannot write the trace {trace_path}: "
                                f"{cause.strerror or cause}; nothing was sent")
        return RunResult(run_id, unwritable.exit_code, "error", error=unwritable)
    try:
        return await _execute(ctx, instance.config, instance.inputs, run_id, trace_path,
                              options.resume_hint)
    finally:
        if shared.mcp is not None:
            await shared.mcp.close()


def _desk(options: RunOptions) -> Any:
    """The run's desk for people: the answers it resumes with, its terminal, who answers."""
    from prose.runtime.people import Desk, default_answerer, load_answers

    answers = {}
    if options.resume_trace is not None:
        try:
            answers = load_answers(options.resume_trace)
        except OSError as error:
            raise RunIOError(f"cannot read the answers of {options.resume_trace}: "
                             f"{error.strerror or error}") from None
    return Desk(answers=answers, terminal=options.terminal, script=options.script,
                answerer=options.answerer or default_answerer(),
                capacity=max(options.concurrency, 1))


@dataclass(frozen=True)
class _Instance:
    """A pattern instance ready to run: its bindings, config, inputs and policy."""

    bindings: dict[str, SlotBinding]
    list_slots: frozenset[str]
    config: dict[str, Any]
    inputs: dict[str, Any]
    policy: Policy

    def context(self, shared: Shared, loaded: LoadedPattern, prefix: str = "",
                ancestry: tuple[Path, ...] = ()) -> RunContext:
        return RunContext(
            shared,
            loaded.program,
            loaded.spec,
            loaded.text,
            loaded.path,
            self.bindings,
            self.policy,
            self.list_slots,
            declared_names(loaded.program),
            prefix=prefix,
            aliases=uses(loaded.program),
            ancestry=ancestry,
        )


def _instance(
    loaded: LoadedPattern,
    bindings: Mapping[str, SlotBinding],
    config: Mapping[str, Any],
    inputs: Mapping[str, Any],
    *,
    script: Script | None,
    default_model: str | None,
    strict: bool | None,
    roots: tuple[Path, ...],
    key_prefix: str = "",
    where: str = "config",
    policies: dict[tuple[str, bool | None], Policy] | None = None,
) -> _Instance:
    """Bind, check config and inputs, and compile the policy: the same for a run and a nested one.

    `policies` keeps each pattern's compiled policy for the next run that shares it.
    """
    from prose.lang.policy import compile_policy

    bound, list_slots = bind_slots(
        loaded, bindings, script=script, default_model=default_model, roots=roots,
        key_prefix=key_prefix,
    )
    config_checked = config_values(loaded.spec, config, where)
    inputs_checked = input_values(loaded.spec, inputs, config_checked)
    memo_key = (loaded.path, strict)
    policy = policies.get(memo_key) if policies is not None else None
    if policy is None:
        policy = compile_policy(loaded.spec, strict=strict)
        if policies is not None:
            policies[memo_key] = policy
    return _Instance(bound, list_slots, config_checked, inputs_checked, policy)


async def _execute(
    ctx: RunContext,
    config: dict[str, Any],
    inputs: dict[str, Any],
    run_id: str,
    trace_path: Path | None,
    resume_hint: str | None = None,
) -> RunResult:
    """Run the program and write `run_end` whatever happens (interruptions included)."""
    trace, budget = ctx.shared.trace, ctx.shared.budget
    value: Any = None
    failure: ProseRuntimeError | None = None
    try:
        _start_client(ctx)
        ctx.gate_history.run_values = {**config, **inputs}  # `its item of` reads them
        result = await _run_with_timeout(ctx, globals_scope(ctx, config, inputs))
        value = plain(result)
        _compare_returns(ctx, value)
        _judge_carries(ctx, result)
        _judge_order(ctx, value)
        await _judge_result(ctx, value, {**config, **inputs})
    except ProseRuntimeError as error:
        failure = error
    except ProseError as error:  # not a run-time error of the program: say whose it is
        failure = _outside_error(error)
    except (asyncio.CancelledError, KeyboardInterrupt):
        end_uninterrupted(trace, RunEnd(status="interrupted", exit_code=130,
                                        totals=budget.totals()))
        raise
    except TraceUnwritable:  # a full disk: stop, and keep what the file holds (below)
        failure = _unwritable_trace(trace)
    except Exception as error:  # a bug: keep the trace complete, then let it surface
        if trace.failure is not None:  # no bug: the disk filled (the error came back wrapped)
            failure = _unwritable_trace(trace)
        else:
            _end_with_a_bug(trace, budget, error)
            raise
    if isinstance(failure, BudgetExceeded):
        value = partial_result(trace.events, failure.budget)
    if isinstance(failure, WaitingForPerson):
        value = _write_questions(ctx, run_id, trace_path, resume_hint)
    elif trace_path is not None and ctx.shared.people is not None and ctx.shared.people.answers:
        from prose.runtime.questions import clear_pending

        clear_pending(trace_path)  # resumed in place (a batch row): it waits no more
    if trace.failure is not None and failure is None:  # a write failed, its raise was taken
        failure = _unwritable_trace(trace)
    exit_code = failure.exit_code if failure is not None else EXIT_OK
    if failure is not None and not isinstance(failure, CallFailed | InformationHidingViolation
                                                  | GateViolation):
        span = failure.span
        trace.emit(
            ErrorEvent(
                code=failure.code,
                kind=failure.kind,
                message=failure.message,
                slot=failure.slot,
                file=span.file if span else None,
                line=span.line if span else None,
                column=span.column if span else None,
            )
        )
    totals = budget.totals()
    if ctx.shared.client_start_s is not None:
        totals["client_start_s"] = ctx.shared.client_start_s
    status = STATUS_BY_EXIT.get(exit_code, "error")
    trace.emit(
        RunEnd(
            status=status,
            exit_code=exit_code,
            result=value,
            error=failure.to_dict() if failure else None,
            totals=totals,
        )
    )
    trace.close()
    if trace.failure is not None:  # the disk filled: say what the trace kept, exit 2
        failure = _unwritable_trace(trace, closed=True)
        exit_code = failure.exit_code
        status = "error"
    return RunResult(
        run_id,
        exit_code,
        status,
        value,
        failure,
        trace_path,
        totals,
        trace.events,
        ctx.shared.shown or [],
    )


def _end_with_a_bug(trace: Trace, budget: Any, error: Exception) -> None:
    """Keep the trace of a run that met a bug in prose complete: the error, `run_end`."""
    message = f"internal error: {type(error).__name__}: {error}"
    trace.emit(ErrorEvent(code="R000", kind="internal", message=message))
    trace.emit(RunEnd(status="error", exit_code=70, totals=budget.totals()))
    trace.close()


def _unwritable_trace(trace: Trace, closed: bool = False) -> RunIOError:
    """The error of a run whose trace could not be written (`trace.failure`): exit 2, and,
    once the trace is closed, what it kept and whether it is sealed."""
    assert trace.failure is not None
    message = f"cannot write the trace {trace.path}: {trace.failure.strerror or trace.failure}"
    if closed:
        kept = trace.lines_kept()
        sealed = "sealed" if trace.sealed else "not sealed (the seal could not be written)"
        message += (f"; the run stopped, and the trace keeps its first {kept} line(s), whole, "
                    f"{sealed}: every call recorded before the write failed is kept "
                    "(`--resume` replays them once there is room)")
    return RunIOError(message)


def _write_questions(ctx: RunContext, run_id: str, trace_path: Path | None,
                     resume_hint: str | None) -> dict[str, Any]:
    """Write the waiting questions beside the trace; what `run_end` records of them."""
    from prose.runtime.questions import questions_folder, write_pending

    questions = list(ctx.shared.people.pending)
    if trace_path is not None:
        try:
            write_pending(questions_folder(trace_path), run_id, questions, resume_hint,
                          str(trace_path), secrets=ctx.shared.trace.secrets)
        except OSError as error:
            ctx.shared.trace.emit(NoteEvent(
                what="questions_not_written",
                message=f"the waiting questions could not be written beside {trace_path}: "
                        f"{error.strerror or error}; the trace records them"))
    return {"waiting": [{"question": q.id, "slot": q.target, "person": q.person,
                         "may_answer": q.may_answer} for q in questions]}


def _start_client(ctx: RunContext) -> None:
    """Start the model client (LiteLLM's import, the router) before the program runs, when
    a slot is bound to a model, so that no call's latency carries it: `run_end` records the
    time in its totals (`client_start_s`). A client shared by several runs starts once."""
    start = getattr(ctx.shared.client, "start", None)
    if start is None or not any(
            isinstance(service, ModelService)
            for binding in ctx.bindings.values()
            for service in (binding if isinstance(binding, list) else [binding])):
        return
    seconds = start()
    if seconds is not None:
        ctx.shared.client_start_s = round(seconds, 3)


async def _run_with_timeout(ctx: RunContext, scope: Scope) -> Value:
    from prose.runtime.prompts import render_within

    budget = ctx.shared.budget
    render_within(budget)  # `--timeout` stops a prompt template's rendering too
    remaining = budget.remaining_time()
    interpreter = Interpreter(ctx)
    if remaining is None:
        return await interpreter.run(scope)
    try:
        async with asyncio.timeout(remaining):
            return await interpreter.run(scope)
    except TimeoutError:
        raise budget.stop(
            "timeout",
            f"budget stop: the time budget of {budget.limits.timeout:g}s ran out "
            "while calls were in flight",
        ) from None


def _outside_error(error: ProseError) -> ProseRuntimeError:
    """A problem met while running that is not the program's: a file that cannot be read
    (exit 2), a bad schema or LLM config (exit 1), else the model layer failing (exit 4)."""
    from prose.llm.errors import LLMConfigError, SchemaDefinitionError

    if isinstance(error, InputReadError):
        return RunIOError(str(error))
    if isinstance(error, LLMConfigError | SchemaDefinitionError | ProseSyntaxError):
        return InputError(str(error))
    return CallFailed(f"the model layer failed: {error}", kind="config")


def partial_result(events: list[Any], stopped_by: str | None) -> dict[str, Any]:
    """What a run stopped by a budget returns: every finished call's output, marked partial."""
    outputs = [
        {"slot": event.slot, "index": event.index, "output": event.output}
        for event in events
        if isinstance(event, CallEvent) and event.error is None
    ]
    return {"partial": True, "stopped_by": stopped_by, "outputs": outputs}


def _config_default(options: RunOptions, name: str) -> str | None:
    config = options.llm_config
    value = getattr(config, name, None) if config is not None else None
    return str(value) if value else None


def _prompts(options: RunOptions) -> Any:
    from prose.runtime.prompts import PromptBuilder

    return PromptBuilder.for_project(options.project_dir)


def memo(resources: SharedResources | None, key: tuple[Any, ...], make: Callable[[], T],
         owner: object = None) -> T:
    """`make()`, worked out once for all the runs sharing `resources` (every time without).

    Only for what cannot differ between those runs: `key` names everything it depends on,
    and `owner` the object it was made from, when that object is mutable (kept with the value,
    so a new object never takes a freed one's place).
    """
    if resources is None:
        return make()
    key = (*key, id(owner))
    found = resources.memo.get(key)
    if found is None or found[0] is not owner:
        found = resources.memo[key] = (owner, make())
    value: T = found[1]
    return value


def _open_trace(
    options: RunOptions, path: Path | None, run_id: str, resources: SharedResources | None
) -> Trace:
    def secrets() -> list[str]:
        from prose.llm.redact import run_secrets

        extra = options.llm_config.secrets() if options.llm_config is not None else set()
        return run_secrets(extra)

    try:
        return Trace(path, run_id, sync=options.sync_trace,
                     secrets=memo(resources, ("secrets",), secrets, owner=options.llm_config))
    except OSError as error:
        raise RunIOError(f"cannot write the trace {path}: {error.strerror or error}") from None


def _refuse_ungranted(loaded: LoadedPattern, options: RunOptions, default_model: str | None,
                      judge_model: str | None) -> None:
    """Before anything is sent: a model the pattern writes that the run was not given (R018)."""
    from prose.lang.model_choice import how_to_allow, refused_choices

    allowed = granted_models(options, default_model, judge_model)
    for choice in refused_choices(loaded.program.body, allowed, options.bindings):
        raise ModelNotGranted(
            f"{choice.where} asks for `{choice.model}`, a model the run was not given; "
            f"nothing was sent. A pattern file does not choose the model: "
            f"{how_to_allow(str(choice.model))}", choice.span, source=loaded.text)


def granted_models(options: RunOptions, default_model: str | None,
                   judge_model: str | None) -> frozenset[str]:
    """The models a pattern may ask for (`prose.lang.model_choice`): those allowed outright,
    the run's default and judge models, and those the run's bindings name."""
    chosen = {*options.allow_models, default_model or "", judge_model or ""}
    for binding in options.bindings.values():
        items = binding if isinstance(binding, list) else [binding]
        chosen.update(item.model for item in items
                      if isinstance(item, ModelService) and item.model and not item.requested)
    chosen.discard("")
    return frozenset(chosen)


def _model_settings(
    options: RunOptions, default_model: str | None, judge_model: str | None
) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "default_model": default_model,
        "judge_model": judge_model,
        "concurrency": options.concurrency,
        "limits": options.limits.to_dict(),
        "scripted": options.script is not None,
    }
    if options.allow_models:
        settings["allow_models"] = sorted(options.allow_models)
    config = options.llm_config
    if config is not None:
        from prose.llm.redact import mask_secrets

        settings["llm_config"] = _unmasked_part(mask_secrets(config.model_dump(mode="json")))
    return settings


def _unmasked_part(value: Any) -> Any:
    """`value` without the fields `mask_secrets` masked: `run_start` records the config's
    settings, not where its secrets were (and a record naming no secret-named field is
    written without walking it, `prose.llm.redact.JsonScrubber`)."""
    from prose.llm.redact import MASK

    if isinstance(value, dict):
        return {key: _unmasked_part(item) for key, item in value.items() if item != MASK}
    if isinstance(value, list):
        return [_unmasked_part(item) for item in value]
    return value


def _judge_carries(ctx: RunContext, result: Any) -> None:
    """`the returned ... carries only` (R061): the returned value's labels, key by key (a
    key the object lacks carries nothing; a result that is no object is judged whole)."""
    for rule in ctx.policy.carries:
        part = result
        if isinstance(result, Value) and isinstance(result.data, dict):
            part = result.data.get(rule.key)
        if not isinstance(part, Value):
            continue
        problem = rule.problem(part.provenance, part.transitive)
        if problem:
            raise ResultBroken("the result breaks an invariant: " + problem,
                               _invariant_span(ctx, rule.line), source=ctx.source)


def _judge_order(ctx: RunContext, value: Any) -> None:
    """`the returned ... holds the outputs of ... in binding order` (R061), from what the
    run's gate history recorded each service returned."""
    broken = ctx.gate_history.result_violations(ctx.policy.gates, value)
    if broken:
        raise ResultBroken("the result breaks an invariant: " + broken[0].message,
                           _invariant_span(ctx, broken[0].line), source=ctx.source)


def _invariant_span(ctx: RunContext, number: int) -> Span:
    """Where the invariant at line `number` is written (its text after the bullet)."""
    line = ctx.source.splitlines()[number - 1] if 0 < number <= len(
        ctx.source.splitlines()) else ""
    column = len(line) - len(line.lstrip(" -*")) + 1
    return Span(ctx.filename, number, column, number, max(len(line), column) + 1)


async def _judge_result(ctx: RunContext, value: Any, run_values: Mapping[str, Any]) -> None:
    """`the result satisfies` (R061): the returned object against each such invariant, at
    the first broken one's line (the `error` event and `run_end` record it)."""
    broken = await broken_results(ctx.policy.results, value, run_values)
    if broken:
        span = _invariant_span(ctx, broken[0].rule.line)
        raise ResultBroken("the result breaks an invariant: " + "; ".join(
            item.message for item in broken), span, source=ctx.source)


def _compare_returns(ctx: RunContext, value: Any) -> None:
    """A note when the returned object's keys differ from `### Returns` (never an error)."""
    spec = ctx.spec
    if spec is None or not spec.returns or ctx.prefix:
        return
    declared = {key.name for key in spec.returns}
    actual = set(value) if isinstance(value, dict) else set()
    if declared != actual:
        ctx.shared.trace.emit(
            NoteEvent(
                what="returns_mismatch",
                file=ctx.filename,
                message=f"the result's keys {sorted(actual)} differ from ### Returns {sorted(declared)}",
            )
        )


async def run_nested(
    parent: RunContext, service: PatternService, slot: str, inputs: dict[str, Any], node: n.Call
) -> Value:
    """Run a nested pattern instance as a call: its own scope, the parent's meters and trace.

    The nested pattern file is read once per run, however often it is called.
    """
    shared = parent.shared
    target = Path(service.path).resolve()
    if target in parent.ancestry:  # a pattern that ends up calling itself never ends
        chain = [*parent.ancestry[parent.ancestry.index(target):], target]
        raise InputError("a `use` cycle: " + " -> ".join(str(p) for p in chain)
                         + " (a pattern cannot call itself, directly or through others)",
                         node.span, source=parent.source)
    if len(parent.ancestry) >= MAX_NESTING:
        raise InputError(f"patterns nested more than {MAX_NESTING} deep (at `{slot}`)",
                         node.span, source=parent.source)
    try:
        loaded = load_pattern(service.path, shared.files)
    except InputError as error:
        # The nested file's own position, never its text: a file that is not a pattern is
        # not echoed (the frame would show it).
        error.frame = ""
        error.message = f"the nested pattern `{slot}` ({service.path}) cannot be run: " \
                        f"{error.message}"
        raise error.at(node.span, None) from None
    try:
        instance = _instance(
            loaded,
            service.bindings,
            service.config,
            service.nested_inputs(inputs),
            script=getattr(shared.client, "script", None) if shared.scripted else None,
            default_model=shared.default_model,
            strict=parent.policy.strict or None,
            roots=shared.roots,
            key_prefix=f"{slot}.",
            where=f"nested pattern `{slot}`",
        )
    except InputError as error:
        raise error.at(node.span, parent.source) from None
    ctx = instance.context(shared, loaded, prefix=f"{parent.prefix}{slot}>",
                           ancestry=(*parent.ancestry, target))
    # A catchable error inside becomes this call's error in `pattern_attempt`.
    return await Interpreter(ctx).run(globals_scope(ctx, instance.config, instance.inputs))
