"""`prose export`: write a trace as a readable, checksummed ledger folder."""

from __future__ import annotations

import click

from prose.cli.inputs import EXIT_USAGE


@click.command("export")
@click.argument("trace", type=click.Path(dir_okay=False))
@click.argument("folder", type=click.Path(file_okay=False))
def export_command(trace: str, folder: str) -> None:
    """Export TRACE into FOLDER (new or empty): a ledger a reviewer can read without prose.

    \b
    FOLDER/README.md                 the run: pattern, status, inputs, totals, result, call index
    FOLDER/calls/<slot>/NNN-<id>.md  one file per call: messages, output, usage, provenance
    FOLDER/judgements.md             every judge decision and the values it saw
    FOLDER/trace.jsonl               the original trace, byte for byte
    FOLDER/manifest.sha256           verify with: cd FOLDER && sha256sum -c manifest.sha256

    A trace whose hash chain is broken is still exported; its README says so
    and a warning is printed (run `prose audit` for the details).

    \b
    Examples:
      prose export .prose/runs/20260101-120000-abc123/trace.jsonl ledger/
    Exit codes: 0 written, 2 the trace cannot be read or FOLDER is not empty.
    """
    from prose.ledger import TraceReadError
    from prose.ledger.export import ExportError, export_ledger

    try:
        result = export_ledger(trace, folder)
    except (TraceReadError, ExportError) as error:
        click.echo(f"error: {error}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    if not result.chain_ok:
        click.echo(f"warning: {trace}: the hash chain is broken (see `prose audit {trace}`)", err=True)
    click.echo(f"{folder}: {len(result.files)} files and manifest.sha256 written")
