"""`prose batch`: run a pattern over every row of a JSONL or CSV file (docs/batch.md).

The pattern is read, linted and its policy compiled once; rows run as
independent pattern runs sharing one router, one cap on calls in flight, one
budget and one cache, in this process (`--executor local`) or on a Ray cluster
(`--executor ray`, `pip install 'prose-patterns[ray]'`; Ray is imported only
then). Exit codes: 0 every row ok, 1 a row failed (or the pattern, the rows or
the inputs are wrong, before anything runs), 2 usage or I/O error, 3 the
batch's budget stopped rows, 6 rows wait for a person (answer them, then
--resume), 130 interrupted (rerun with --resume).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from prose.cli.command_options import BatchCommandOptions
from prose.cli.inputs import NumberAtLeast, quiet_teardown

if TYPE_CHECKING:
    pass

EXIT_USAGE = 2


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(code)


@click.command("batch")
@click.argument("target", type=click.Path(dir_okay=False))
@click.option("--inputs", "rows_path", required=True, type=click.Path(dir_okay=False),
              help="The rows: a .jsonl file (one object a line) or a .csv file (a header line); "
              "`-` reads JSON Lines from standard input (with --out).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="Results, one JSON line per row in input order [default: ROWS.results.jsonl]; "
              "each row's trace goes under OUT's name with .traces.")
@click.option("--map", "maps", multiple=True, metavar="COLUMN=PARAM",
              help="Column COLUMN supplies parameter PARAM (COLUMN= ignores the column).")
@click.option("--input", "inputs", multiple=True, metavar="K=V",
              help="An input every row gets unless it has its own (JSON if it parses).")
@click.option("--config", "configs", multiple=True, metavar="K=V", help="A config override.")
@click.option("--bind", "binds", multiple=True, metavar="SLOT=MODEL[,MODEL]",
              help="Bind a slot to model(s) or python:pkg.mod:func.")
@click.option("--model", "model", help="The default model for unbound slots (as for prose run).")
@click.option("--judge-model", help="The model that decides discretion conditions and choices.")
@click.option("--allow-model", "allow_models", multiple=True, metavar="MODEL",
              help="Let the pattern send calls to MODEL where it names one (as for prose run).")
@click.option("--config-file", type=click.Path(dir_okay=False),
              help="LLM config (LiteLLM model_list YAML plus prose settings).")
@click.option("--concurrency", type=click.IntRange(1), default=None,
              help="Calls in flight at once, for the whole batch (all workers) "
              "[default: `concurrency` of prose.yaml, else 8].")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local",
              show_default=True, help="Run rows in this process, or as Ray tasks.")
@click.option("--address", help="With --executor ray: the cluster (ray://HOST:10001, auto); "
              "default: a local Ray started for the batch.")
@click.option("--workers", type=click.IntRange(1), default=None,
              help="With --executor ray: worker processes, each with its router "
              "[default: the cluster's CPUs].")
@click.option("--resume", is_flag=True,
              help="Continue OUT: finished rows are kept while their inputs are the rows' "
              "now (from the first that changed on, rows run again), the others run again "
              "without paying again for the calls their traces finished.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first row that fails.")
@click.option("--require-sandbox", is_flag=True,
              help="Refuse to run declared commands (`cli:` tools) without an OS sandbox "
              "(bubblewrap): exit 2 before any row runs (docs/agents.md).")
@click.option("--max-calls", type=click.IntRange(0), help="Calls for the whole batch.")
@click.option("--max-tokens", type=click.IntRange(0), help="Tokens for the whole batch.")
@click.option("--max-cost", type=NumberAtLeast(0), help="USD for the whole batch.")
@click.option("--timeout", type=NumberAtLeast(0), help="Seconds for each row.")
@click.option("--max-steps", type=click.IntRange(1), default=None,
              help="Statements for each row [default: 1,000,000].")
@click.option("--cache/--no-cache", default=None,
              help="Answer calls asked before from .prose/cache (default as for prose run).")
@click.option("--no-check", is_flag=True, help="Run even if the linter finds errors.")
@click.option("--strict-flow", is_flag=True, help="Strict mode for implicit flows.")
@click.option("--json", "as_json", is_flag=True,
              help="Progress as JSON lines on stderr, the summary as JSON on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress.")
@click.option("--debug", is_flag=True, help="Show Python tracebacks and LiteLLM logs.")
def batch_command(**given: Any) -> None:
    """Run TARGET (a pattern or an instance file) once for every row of --inputs.

    \b
    Examples:
      prose batch summarize.prose.md --inputs articles.jsonl --out summaries.jsonl
      prose batch review.yaml --inputs prs.csv --map pr_text=task --max-cost 5
      prose batch summarize.prose.md --inputs big.jsonl --executor ray --address auto
      prose batch summarize.prose.md --inputs articles.jsonl --resume   (after a crash)
    Each line of OUT: {"row", "status": ok|error|budget|hiding-violation, "result",
    "error", "trace", "calls", "tokens", "cost_usd", ...}. Exit codes: 0 every row
    ok, 1 a row failed or bad input, 2 usage, 3 budget stop, 6 rows wait for a person,
    130 interrupted.
    """
    from prose.cli.targets import restore_sigterm, stop_on_sigterm

    options = BatchCommandOptions.from_click(given)
    terminated: list[int] = []
    previous = stop_on_sigterm(terminated)
    try:
        code = _batch(options)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("interrupted: finished rows are kept; continue with --resume", err=True)
        quiet_teardown()
        code = 143 if terminated else 130
    except Exception as error:  # never a traceback for a user error
        if options.debug:
            raise
        from prose.errors import ProseError

        if type(error).__name__ == "RayStartError":
            _fail(str(error), EXIT_USAGE)
        if isinstance(error, ProseError):
            _fail(str(error), 1)
        _fail(f"internal error: {type(error).__name__}: {error}", 70)
    finally:
        restore_sigterm(previous)
    raise SystemExit(code)


def _check_out(out: Path, inputs: dict[str, str | Path | None]) -> None:
    """Refuse an --out that is one of the batch's own inputs: it would be cut
    (`prose.output_paths`, the rule of every output)."""
    from prose.output_paths import OutputClash, check_output

    try:
        check_output("--out", out, inputs.items(), "the results need")
    except OutputClash as error:
        _fail(str(error), EXIT_USAGE)


def _check_tools(spec: Any, tools: dict[str, Any], text: str, require_sandbox: bool) -> None:
    """Once, before any row: the tools the pattern declares are the ones the instance
    gives (R030, exit 1), and an OS sandbox is there when asked for (R032, exit 2)."""
    from prose.runtime.errors import ProseRuntimeError
    from prose.runtime.tool_setup import check_tools

    try:
        check_tools(spec, tools, text, require_sandbox=require_sandbox)
    except ProseRuntimeError as error:
        _fail(error.format(), error.exit_code)


def _batch(options: BatchCommandOptions) -> int:
    from prose.batch.driver import drive
    from prose.batch.output import (
        ResultsBusy,
        ResultsFile,
        is_results_file,
        scan,
        summary,
        summary_text,
    )
    from prose.batch.plan import BatchPlan
    from prose.batch.progress import BatchProgress, choose_mode
    from prose.batch.rows import RowError, RowSource, parse_map
    from prose.cli.model_aliases import resolve_command_aliases
    from prose.cli.run_inputs import apply_options, read_llm_config
    from prose.cli.targets import (
        checked_pattern,
        resolve_target,
        resolve_tools,
        separate_tools,
        use_cache,
    )
    from prose.llm import event_loop
    from prose.llm.resolve import NoModelError, resolve_default_model
    from prose.pattern_file import PatternFiles
    from prose.runtime.budget import DEFAULT_MAX_STEPS, Limits

    if options.executor == "local":
        from prose.llm.loader import import_in_background

        import_in_background()  # LiteLLM loads while the pattern and the rows are checked
    project = Path.cwd()
    files = PatternFiles()
    path, bindings, config, fixed, allowed = resolve_target(options.target, files)
    tools = resolve_tools(options.target, files)
    pattern = checked_pattern(path, files, options.no_check, options.strict_flow,
                              separate_tools(tools))
    spec = pattern.spec
    assert spec is not None  # _checked exits otherwise
    apply_options(spec, options, fixed, config, bindings)
    _check_tools(spec, tools, pattern.text, options.require_sandbox)
    if options.executor == "local" and (options.address or options.workers):
        _fail("--address and --workers go with --executor ray", EXIT_USAGE)
    llm_config = read_llm_config(options.config_file, project, check_router=True)
    bindings = resolve_command_aliases(bindings, llm_config, options)  # as prose run does
    unbound = [s for s in spec.slot_names if s not in bindings]
    try:
        default_model = resolve_default_model(options.model, llm_config, unbound=unbound)
    except NoModelError as error:
        _fail(str(error), EXIT_USAGE)
    if options.rows_path == "-" and not options.out_path:
        _fail("--inputs - reads the rows from standard input: name the results file with --out",
              EXIT_USAGE)
    try:
        source = RowSource(options.rows_path, spec, parse_map(options.maps), fixed)
        total = source.check()  # every row, before anything runs
    except ValueError as error:
        _fail(str(error), EXIT_USAGE)
    except RowError as error:
        _fail(str(error), EXIT_USAGE if error.line == 0 and "cannot read" in error.message else 1)
    rows_path = Path(options.rows_path)
    out = Path(options.out_path or rows_path.with_name(rows_path.stem + ".results.jsonl"))
    traces = out.with_name(out.stem + ".traces")
    _check_out(out, {"the inputs file": rows_path, "the pattern": Path(pattern.path),
                     "the target": Path(options.target), "the config file": options.config_file})
    if options.resume:
        if not is_results_file(out):
            _fail(f"{out} is not a results file of prose batch: --resume continues one, "
                  "and would cut this one", EXIT_USAGE)
    else:
        for existing in (out, traces):
            if existing.exists():
                _fail(f"{existing} exists: continue that batch with --resume, or remove it",
                      EXIT_USAGE)
    concurrency = options.concurrency or (llm_config.concurrency if llm_config else 8)
    plan = BatchPlan(
        pattern_path=pattern.path,
        pattern_text=pattern.text,
        traces_dir=traces,
        bindings=bindings,
        config=config,
        llm_config=llm_config,
        default_model=default_model,
        judge_model=options.judge_model,
        concurrency=concurrency,
        row_limits=Limits(None, None, None, options.timeout,
                          options.max_steps or DEFAULT_MAX_STEPS),
        pool_limits=Limits(options.max_calls, options.max_tokens, options.max_cost,
                           None, None),
        project_dir=project,
        cache_dir=project / ".prose" / "cache" if use_cache(options.cache, default_model)
        else None,
        strict_flow=options.strict_flow,
        debug=options.debug,
        allow_models=(*allowed, *options.allow_models),
        tools=tools,
        require_sandbox=options.require_sandbox,
    )
    progress = BatchProgress(choose_mode(options.quiet, options.as_json))
    # The rows leave their traces' fsync to the results file's syncs (an fsync per row held
    # the calls in flight back: docs/language-runtime-decisions.md).
    from prose.llm.redact import run_secrets

    secrets = run_secrets(llm_config.secrets() if llm_config is not None else ())
    try:
        results = ResultsFile(out, traces=traces, secrets=secrets)
    except ResultsBusy:
        _fail(f"{out} is being written by another prose batch: wait for it to finish "
              "(then continue with --resume)", EXIT_USAGE)
    except OSError as error:
        _fail(f"{out}: cannot write the results: {error.strerror or error}", EXIT_USAGE)
    try:
        # Under the lock: no other batch appends to it now. A row keeps its result only if
        # its inputs are the ones the result was for (each line's `inputs_sha256`).
        prefix = scan(out, (row.digest() for row in source.rows()))
        if prefix.rows + prefix.changed > total:
            _fail(f"{out} has {prefix.rows + prefix.changed} rows but {rows_path} has {total}: "
                  "not its results",
                  EXIT_USAGE)
        results.keep(prefix)
    except BaseException:
        results.close()
        raise
    executor: Any
    try:
        if options.executor == "ray":
            from prose.batch.ray_executor import RayExecutor

            executor = RayExecutor(plan, address=options.address, workers=options.workers)
        else:
            from prose.batch.local import LocalExecutor

            executor = LocalExecutor(plan, pattern)
        try:
            outcome = event_loop.run(drive(
                source.rows(start=prefix.rows), executor, results, total=total,
                window=max(4 * concurrency, 64), fail_fast=options.fail_fast,
                progress=progress, done_before=prefix.tally,
            ))
        finally:
            close = getattr(executor, "close", None)
            if close is not None:
                close()
    finally:
        progress.close()
        results.close()
    data = summary(prefix.tally, outcome.tally, outcome.seconds, out, outcome.stopped,
                   changed=prefix.changed)
    data["rows_with_damaged_traces"] = outcome.damaged  # each was warned of as it finished
    if options.as_json:
        click.echo(json.dumps(data))
    elif not options.quiet:
        click.echo(summary_text(data), err=True)
    if results.failure is not None:  # a full disk: nothing written is lost, the batch stopped
        _fail(f"{results.failure}; the batch stopped, and {out} keeps its first "
              f"{results.failure.rows} row(s), whole (the rows in flight were interrupted, "
              "their traces sealed): free some space, then continue with --resume", EXIT_USAGE)
    if data["rows_failed"]:
        return 1
    if data["rows_budget"]:
        return 3
    if data["rows_waiting"]:
        return 6  # waiting for a person: answer (prose pending TRACES), then --resume
    return 0 if data["rows"] == total else 1
