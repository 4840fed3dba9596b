"""`prose explain`: show what every call receives and which invariants hold."""

from __future__ import annotations

import json

import click

from prose.cli.inputs import EXIT_FINDINGS, EXIT_USAGE


@click.command("explain")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--mermaid", is_flag=True, help="Print a mermaid flowchart of the data flow between slots.")
def explain_command(file: str, output_format: str, mermaid: bool) -> None:
    """Explain who sees what in a pattern: for every call site, the slot, each input
    and the slots whose outputs it may carry; what each judge condition sees; and
    every invariant with its status (holds / violated / prose-only).

    \b
    Examples:
      prose explain patterns/proposer-adversary.prose.md
      prose explain --mermaid patterns/dialectic.prose.md
      prose explain --format json patterns/dialectic.prose.md
    """
    from prose.check import lint_text
    from prose.check.explain import explain
    from prose.check.explain import mermaid as render_mermaid
    from prose.errors import InputReadError, ProseSyntaxError
    from prose.files import read_text

    try:
        text = read_text(file)
    except InputReadError as error:
        click.echo(f"error: {error}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    except ProseSyntaxError as error:
        click.echo(error.format(), err=True)
        raise SystemExit(EXIT_FINDINGS) from None
    result = lint_text(text, file)
    if result.context is None:
        for diagnostic in result.diagnostics:
            if diagnostic.severity.value == "error":
                click.echo(f"{diagnostic.span}: {diagnostic.code} {diagnostic.message}", err=True)
        raise SystemExit(EXIT_FINDINGS)
    explanation = explain(result)
    if mermaid:
        click.echo(render_mermaid(explanation), nl=False)
        return
    if output_format == "json":
        click.echo(json.dumps(explanation.as_dict(), indent=2))
        return
    click.echo(f"{file}: pattern `{explanation.pattern}`\n")
    click.echo("Calls:")
    for call in explanation.calls:
        who = (" or ".join(f"`{slot}`" for slot in call.slots) if call.slots
               else f"({call.target})")
        click.echo(f"  {call.line}:{call.column} call {who}")
        for entry in call.inputs:
            carried = ", ".join(f"`{slot}`" for slot in entry.provenance) or "no slot output"
            extra = sorted(set(entry.transitive) - set(entry.provenance))
            indirect = f" (indirectly also {', '.join(f'`{s}`' for s in extra)})" if extra else ""
            click.echo(f"      {entry.name:<20} carries {carried}{indirect}")
    if explanation.judges:
        click.echo("\nJudges (discretion conditions):")
        for judge in explanation.judges:
            click.echo(f"  {judge.line}:{judge.column} `{judge.text}`")
            if not judge.sees:
                click.echo("      sees nothing")
            for name, slots in judge.sees.items():
                carried = ", ".join(f"`{slot}`" for slot in slots) or "no slot output"
                click.echo(f"      sees {name:<16} carrying {carried}")
    click.echo("\nInvariants:")
    marks = {"holds": "checked, holds", "violated": "checked, VIOLATED",
             "prose-only": "not machine-checked", "invalid": "invalid form"}
    for invariant in explanation.invariants:
        click.echo(f"  {invariant.line}: [{marks[invariant.status]}] {invariant.text}")
        for finding in invariant.findings:
            click.echo(f"      {finding}")
