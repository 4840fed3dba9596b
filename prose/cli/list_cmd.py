"""`prose list`: the standard pattern library, one line per pattern."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from prose.cli.inputs import EXIT_USAGE, shown


def library_entries(folder: Path) -> list[dict[str, Any]]:
    """Name, version, summary and file of every `*.prose.md` in `folder`, sorted by name."""
    from prose.errors import ProseError
    from prose.files import read_text
    from prose.spec import load_spec

    entries = []
    for path in sorted(folder.glob("*.prose.md")):
        fallback = path.name.removesuffix(".prose.md")
        try:
            spec = load_spec(read_text(str(path)), str(path)).spec
        except ProseError as error:
            entries.append({"name": fallback, "version": None, "summary": f"(cannot be read: {error})",
                            "path": str(path)})
            continue
        entries.append({
            "name": (spec.name if spec is not None else None) or fallback,
            "version": spec.version if spec is not None else None,
            "summary": (spec.summary if spec is not None else None) or "",
            "path": str(path),
        })
    return sorted(entries, key=lambda entry: str(entry["name"]))


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {name, version, summary, path}.")
def list_command(as_json: bool) -> None:
    """List the standard pattern library: name, version and summary, one line each.

    A library pattern can be run by name from an instance file (`pattern:
    dialectic`) and copied with `prose new NAME --from PATTERN`.

    \b
    Examples:
      prose list
      prose list --json
    Exit codes: 0 ok, 2 the library cannot be found.
    """
    from prose.resources import patterns_dir

    try:
        folder = patterns_dir()
    except FileNotFoundError as error:
        click.echo(f"error: {shown(str(error))}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    entries = library_entries(folder)
    if as_json:
        click.echo(json.dumps(entries, indent=2, ensure_ascii=False))
        return
    width = max((len(str(entry["name"])) for entry in entries), default=0)
    version_width = max((len(str(entry["version"] or "-")) for entry in entries), default=0)
    for entry in entries:
        click.echo(f"{entry['name']:<{width}}  {entry['version'] or '-':<{version_width}}  "
                   f"{entry['summary']}".rstrip())
