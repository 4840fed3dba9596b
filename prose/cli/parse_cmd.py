"""`prose parse`: print the AST of pattern files."""

from __future__ import annotations

import json

import click

from prose.cli.inputs import EXIT_FINDINGS, EXIT_USAGE, shown
from prose.errors import InputReadError, ProseSyntaxError
from prose.files import read_text


@click.command("parse")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the AST as JSON (with positions).")
@click.option("--no-positions", is_flag=True, help="Leave positions out of the JSON.")
def parse_command(files: tuple[str, ...], as_json: bool, no_positions: bool) -> None:
    """Parse FILES (`*.prose.md` or bare `.prose`) and print their programs.

    A `*.prose.md` file's program is the ```prose block of its `### Delegation`
    section; positions are lines and columns in the markdown file.

    \b
    Examples:
      prose parse patterns/dialectic.prose.md
      prose parse --json patterns/*.prose.md > ast.json
    """
    from prose.syntax import parse
    from prose.syntax.dump import dump

    status = 0
    results: dict[str, object] = {}
    for path in files:
        try:
            text = read_text(path)
            program = parse(text, path, section_of(text, path))
        except InputReadError as error:
            click.echo(f"error: {shown(str(error))}", err=True)
            status = max(status, EXIT_USAGE)
            continue
        except ProseSyntaxError as error:
            click.echo(shown(error.format()), err=True)
            status = max(status, EXIT_FINDINGS)
            continue
        if as_json:
            results[path] = dump(program, positions=not no_positions)
        else:
            click.echo(f"{path}: {len(program.body)} statements")
            for statement in program.body:
                click.echo(f"  {statement.line}:{statement.column} {type(statement).__name__}")
    if as_json:
        payload = results[files[0]] if len(files) == 1 and files[0] in results else results
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    raise SystemExit(status)


def section_of(text: str, path: str) -> str:
    """The program section of a markdown file (its kind's), else `delegation`."""
    from prose.syntax.markdown import is_markdown

    if not is_markdown(path):
        return "delegation"
    from prose.spec.loader import program_section

    return program_section(text, path)
