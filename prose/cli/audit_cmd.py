"""`prose audit`: verify a trace's hash chain and re-check every call's information hiding."""

from __future__ import annotations

import json

import click

from prose.cli.inputs import EXIT_FINDINGS, EXIT_USAGE, shown


@click.command("audit")
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("--pattern", "pattern", type=click.Path(dir_okay=False),
              help="The pattern file the run used (default: the path run_start records).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def audit_command(trace: str, pattern: str | None, as_json: bool) -> None:
    """Audit TRACE (a `trace.jsonl` written by `prose run`).

    Verifies the hash chain (every event carries the sha256 of the line before
    it, so one edited byte breaks it), that the trace starts with run_start and
    ends with run_end, and that run_end's token totals match the calls. Then
    re-checks every recorded call against the information-hiding policy: the
    policy recorded in run_start, or the one compiled from the pattern file
    (whose sha256 must match the trace's). Each finding names the trace line,
    the call id, the slot and the call's line in the pattern.

    The last line of a trace has no successor to vouch for it: an edit there is
    caught only when it breaks the JSON or the totals check.

    \b
    Examples:
      prose audit .prose/runs/20260101-120000-abc123/trace.jsonl
      prose audit trace.jsonl --pattern patterns/proposer-adversary.prose.md
    Exit codes: 0 clean, 1 findings, 2 the trace (or pattern) cannot be read.
    """
    from prose.ledger import AuditError, TraceReadError, audit_trace

    try:
        report = audit_trace(trace, pattern)
    except (TraceReadError, AuditError) as error:
        click.echo(f"error: {shown(str(error))}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        raise SystemExit(0 if report.clean else EXIT_FINDINGS)
    loaded = report.trace
    chain = "intact" if loaded.chain_ok else "BROKEN"
    click.echo(f"{trace}: run {loaded.run_id}, {len(loaded.lines)} events, hash chain {chain}")
    click.echo(f"policy: {report.policy_source or '-'}")
    for finding in report.findings:
        where = f"{trace}:{finding.line}" if finding.line is not None else trace
        about = ""
        if finding.call:
            about = f"call {finding.call} to `{finding.slot}`"
            about += f" ({finding.source})" if finding.source else ""
            about += ": "
        click.echo(f"{where}: {finding.rule}: {about}{finding.message}")
    for note in report.notes:
        click.echo(f"note: {note}")
    count = len(report.findings)
    plural = "finding" if count == 1 else "findings"
    click.echo(f"audit: {count} {plural}, {report.checked_calls} calls checked")
    raise SystemExit(0 if report.clean else EXIT_FINDINGS)
