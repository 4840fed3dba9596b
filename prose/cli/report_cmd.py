"""`prose report`: write a run's trace as one self-contained HTML page."""

from __future__ import annotations

import click

from prose.cli.inputs import EXIT_USAGE, shown


@click.command("report")
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Where to write the page (never through a symbolic link) [default: "
              "report.html beside a run's trace.jsonl, else TRACE's name with .report.html].")
@click.option("--pattern", type=click.Path(dir_okay=False),
              help="The pattern file the run used (default: the path run_start records).")
@click.option("--open", "open_page", is_flag=True, help="Open the page in the default browser.")
def report_command(trace: str, output: str | None, pattern: str | None, open_page: bool) -> None:
    """Write the report of TRACE (a `trace.jsonl` written by `prose run`): one HTML file that
    needs nothing else (no network; it opens from disk or from a CI artifact).

    \b
    It shows: the run (pattern, instance, inputs, status, exit reason, calls, tokens,
    cost, wall time) under the audit's verdict (a tampered trace says so at the top);
    a timeline of every call and judge decision to scale, parallel calls side by side,
    retries and failures marked, each opening the exact messages sent, the reply,
    tokens, cost, latency and source line; each slot's transcript with the provenance
    of its inputs; the pattern's data-flow graph (as `prose explain --mermaid`) with
    the number of values that crossed each edge; the policy and each call's verdict;
    budget use; spend per slot and critic metrics (as `prose stats`); and for the
    two-reviewer gate and plan-conformance, the ledger and the verdict table.

    \b
    Examples:
      prose report .prose/runs/20260101-120000-abc123/trace.jsonl --open
      prose report trace.jsonl -o run.html
    Exit codes: 0 written, 2 the trace cannot be read or the page cannot be written (a
    symbolic link where the page goes is not followed; -o naming the trace or the pattern
    it reads is refused).
    """
    from prose.ledger import TraceReadError
    from prose.output_paths import OutputClash
    from prose.report import write_report

    try:
        written = write_report(trace, output, pattern)
    except (TraceReadError, OutputClash) as error:
        click.echo(f"error: {shown(str(error))}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    except OSError as error:
        click.echo(f"error: {output or trace}: cannot write the report: "
                   f"{error.strerror or error}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    click.echo(f"report: {written}")
    if open_page:
        import webbrowser

        webbrowser.open(written.resolve().as_uri())
