"""`prose export`: write a trace as a readable, checksummed ledger folder."""

from __future__ import annotations

import click

from prose.cli.inputs import EXIT_USAGE, shown


@click.command("export")
@click.argument("trace", type=click.Path(dir_okay=False))
@click.argument("folder", type=click.Path(file_okay=False), required=False)
@click.option("--otel", is_flag=True,
              help="Send the run as OpenTelemetry spans over OTLP (OTEL_EXPORTER_OTLP_* variables).")
def export_command(trace: str, folder: str | None, otel: bool) -> None:
    """Export TRACE into FOLDER (new or empty): a ledger a reviewer can read without prose.
    With --otel, send it as OpenTelemetry spans (FOLDER is then optional).

    \b
    FOLDER/README.md                 the run: pattern, status, inputs, totals, result, call index
    FOLDER/calls/<slot>/NNN-<id>.md  one file per call: messages, output, usage, provenance
    FOLDER/judgements.md             every judge decision and the values it saw
    FOLDER/trace.jsonl               the original trace, byte for byte
    FOLDER/manifest.sha256           verify with: cd FOLDER && sha256sum -c manifest.sha256

    A trace whose hash chain is broken is still exported; its README says so
    and a warning is printed (run `prose audit` for the details).

    --otel: one span per run, per call attempt and per judge decision, following
    the OpenTelemetry GenAI semantic conventions (model, tokens, cost, slot, source
    line; never a message or an output), sent over OTLP/HTTP to the collector that
    OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) names, default
    http://localhost:4318. Needs the `otel` extra.

    \b
    Examples:
      prose export .prose/runs/20260101-120000-abc123/trace.jsonl ledger/
      OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 prose export --otel trace.jsonl
    Exit codes: 0 written, 2 the trace cannot be read, FOLDER is not empty, or the
    spans could not be sent.
    """
    from prose.ledger import TraceReadError
    from prose.ledger.export import ExportError, export_ledger

    if folder is None and not otel:
        click.echo("error: give a FOLDER to export into, or --otel", err=True)
        raise SystemExit(EXIT_USAGE)
    if otel:
        from prose.otel.export import OtelError, export_trace

        try:
            sent = export_trace(trace)
        except (TraceReadError, OtelError) as error:
            click.echo(f"error: {shown(str(error))}", err=True)
            raise SystemExit(EXIT_USAGE) from None
        click.echo(f"otel: {sent.spans} spans sent (trace id {sent.trace_id})")
        if folder is None:
            return
    assert folder is not None

    try:
        result = export_ledger(trace, folder)
    except (TraceReadError, ExportError) as error:
        click.echo(f"error: {shown(str(error))}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    if not result.chain_ok:
        click.echo(f"warning: {trace}: the hash chain is broken (see `prose audit {trace}`)", err=True)
    click.echo(f"{folder}: {len(result.files)} files and manifest.sha256 written")
