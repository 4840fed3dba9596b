"""`prose explain`: show what every call receives and which invariants hold."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from prose.cli.inputs import EXIT_FINDINGS, EXIT_USAGE, shown

if TYPE_CHECKING:
    from prose.check.explain import Explanation


@click.command("explain")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--mermaid", is_flag=True, help="Print a mermaid flowchart of the data flow between slots.")
def explain_command(file: str, output_format: str, mermaid: bool) -> None:
    """Explain who sees what in a pattern: for every call site, the slot, each input
    and the slots whose outputs it may carry; what each judge condition sees; and
    every invariant with its status (holds / violated / prose-only). For a
    responsibility or gateway: its subscriptions (`### Requires`), what it
    maintains (keys and `####` facets) and its continuity; for a contract that
    calls other contracts: where each call resolved.

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
        click.echo(f"error: {shown(str(error))}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    except ProseSyntaxError as error:
        click.echo(shown(error.format()), err=True)
        raise SystemExit(EXIT_FINDINGS) from None
    result = lint_text(text, file)
    errors = [d for d in result.diagnostics if d.severity.value == "error"]
    if result.context is None and result.spec is not None and not result.spec.is_pattern \
            and not errors:
        from prose.check.explain import explain_contract

        _print_contract(file, explain_contract(result.spec), output_format)
        return
    if result.context is None:
        for diagnostic in result.diagnostics:
            if diagnostic.severity.value == "error":
                click.echo(shown(f"{diagnostic.span}: {diagnostic.code} {diagnostic.message}"), err=True)
        raise SystemExit(EXIT_FINDINGS)
    explanation = explain(result)
    if mermaid:
        click.echo(render_mermaid(explanation), nl=False)
        return
    if output_format == "json":
        click.echo(json.dumps(explanation.as_dict(), indent=2))
        return
    if explanation.contract is not None:
        _print_contract(file, explanation, "text")
        click.echo("")
    else:
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
             "prose-only": "not machine-checked", "invalid": "invalid form",
             "run-time": "checked at run time and by the audit"}
    for invariant in explanation.invariants:
        click.echo(f"  {invariant.line}: [{marks[invariant.status]}] {invariant.text}")
        for finding in invariant.findings:
            click.echo(f"      {finding}")


def _print_contract(file: str, explanation: Explanation, output_format: str) -> None:
    """A contract's kind, subscriptions (what wakes it), maintained truth and callees."""
    if output_format == "json":
        click.echo(json.dumps(explanation.as_dict(), indent=2))
        return
    contract = explanation.contract
    assert contract is not None
    click.echo(f"{file}: {contract.kind} `{explanation.pattern}`")
    if contract.kind in ("responsibility", "gateway", "system"):
        click.echo("\nSubscriptions (### Requires: what wakes it when it moves):")
        for item in contract.subscriptions:
            click.echo(f"  {item['line']}: `{item['name']}` {item['description']}".rstrip())
        if not contract.subscriptions:
            click.echo("  none (its input arrives from outside the graph)")
        click.echo("\nMaintains (### Maintains; a facet is subscribable on its own):")
        for item in contract.maintains:
            what = "facet" if item["facet"] else "key"
            click.echo(f"  {item['line']}: {what} `{item['name']}` {item['text']}".rstrip())
        click.echo(f"\nContinuity: {contract.continuity_mode}"
                   + (f" ({contract.continuity})" if contract.continuity else ""))
    if contract.callees:
        click.echo("\nCalls resolved to contracts:")
        for name, target in contract.callees.items():
            click.echo(f"  `{name}` -> {target}")
