"""`prose stats`: spend, rounds and critic metrics per slot, per run and over runs."""

from __future__ import annotations

import json

import click

from prose.cli.inputs import EXIT_USAGE, shown


@click.command("stats")
@click.argument("traces", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {runs: [...], overall: {...}}.")
def stats_command(traces: tuple[str, ...], as_json: bool) -> None:
    """Statistics of one or more TRACES: per slot, calls (every attempt), failed calls,
    tokens, cost, latency (mean and p95) and rounds used (iterations of the outermost
    loop the slot ran in; outside loops, one per call); per run, loop iterations and
    judgements; and for slots whose outputs are review verdicts (objects with an
    `issues` or `findings` list and/or `no_issues_found`) the critic metrics: issues per round,
    issues per turn, share of empty verdicts, and convergence (the round of the
    first verdict with no issues). With several traces, an `all runs` section sums
    them (convergence is then the mean over the runs that converged).

    \b
    Examples:
      prose stats .prose/runs/*/trace.jsonl
      prose stats trace.jsonl --json
    Exit codes: 0 ok, 2 a trace cannot be read.
    """
    from prose.ledger import TraceReadError, load_trace
    from prose.ledger.stats import merge_stats, render_run, run_title, trace_stats

    try:
        loaded = [load_trace(path) for path in traces]
    except TraceReadError as error:
        click.echo(f"error: {shown(str(error))}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    from prose.llm.redact import redact, run_secrets

    secrets = run_secrets()  # as every output of a run: the environment's secrets are masked
    runs = [trace_stats(trace) for trace in loaded]
    overall = merge_stats(loaded)
    for trace in loaded:  # with --json too: the numbers leave out what the chain refuses
        if not trace.chain_ok:
            click.echo(f"warning: {trace.path}: the hash chain is broken (see `prose audit`)",
                       err=True)
    if as_json:
        data = {"runs": [run.to_dict() for run in runs], "overall": overall.to_dict()}
        click.echo(json.dumps(redact(data, secrets), indent=2, ensure_ascii=False))
        return
    sections = [render_run(run, run_title(run)) for run in runs]
    if len(runs) > 1:
        sections.append(render_run(overall, f"all runs ({len(runs)} traces)"))
    click.echo(redact("\n\n".join(sections), secrets))
