"""`prose rules`: list the lint rules, or print one rule's documentation."""

from __future__ import annotations

import click


@click.command("rules")
@click.argument("code", required=False)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def rules_command(code: str | None, output_format: str) -> None:
    """List every lint rule, or print the documentation of rule CODE.

    \b
    Examples:
      prose rules
      prose rules PH601
    """
    import json

    from prose.check.catalogue import catalogue

    entries = catalogue()
    if code is None:
        if output_format == "json":
            click.echo(json.dumps([entry.as_dict() for entry in entries], indent=2))
            return
        width = max(len(entry.name) for entry in entries)
        for entry in entries:
            click.echo(f"{entry.code}  {entry.name:<{width}}  {entry.severity:<7}  {entry.summary}")
        return
    for entry in entries:
        if entry.code == code.upper() or entry.name == code:
            if output_format == "json":
                click.echo(json.dumps(entry.as_dict(), indent=2))
            else:
                click.echo(f"# {entry.code} {entry.name}\n")
                click.echo(f"Category: {entry.category}. Default severity: {entry.severity}."
                           + (" Compat-only (an error with --profile strict)." if entry.compat_only else ""))
                click.echo("")
                click.echo(entry.doc)
            return
    click.echo(f"error: no rule `{code}`; `prose rules` lists them", err=True)
    raise SystemExit(2)
