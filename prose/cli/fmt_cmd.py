"""`prose fmt`: rewrite the prose programs of pattern files in canonical form."""

from __future__ import annotations

import codecs
import difflib
from pathlib import Path

import click

from prose.cli.inputs import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, expand_paths
from prose.cli.parse_cmd import section_of
from prose.errors import InputReadError, ProseError, ProseSyntaxError
from prose.files import read_text, write_whole


@click.command("fmt")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--check", is_flag=True, help="Write nothing; exit 1 and name each file that would change."
)
@click.option(
    "--diff", "show_diff", is_flag=True, help="Write nothing; print a unified diff of the changes."
)
def fmt_command(paths: tuple[str, ...], check: bool, show_diff: bool) -> None:
    """Rewrite the prose programs in PATHS in canonical form, in place.

    A `*.prose.md` file has only the ```prose block of its program section
    rewritten (`### Delegation` in a pattern, `### Execution` in a function,
    responsibility, gateway or test); every other byte stays as it is. A bare `.prose` file is
    rewritten whole. A folder is searched recursively for `*.prose.md` files.

    The canonical form: two-space indentation, one call property per line,
    literals on one line when they fit in 88 columns (else one entry per line
    with trailing commas), at most one blank line in a row, every comment kept
    with its statement.

    Exit codes: 0 done (or nothing to change), 1 a file has a syntax error or
    (with --check) would change, 2 a path cannot be read or written, or bad usage.

    \b
    Examples:
      prose fmt patterns/dialectic.prose.md
      prose fmt patterns/                 # every *.prose.md under it
      prose fmt --check patterns/         # in CI: fail if anything is unformatted
      prose fmt --diff pattern.prose.md   # show what would change
    """
    from prose.syntax.format import format_file

    files = list(dict.fromkeys(expand_paths(paths)))  # each file once, in the order given
    if not files:
        click.echo("no *.prose.md files found; nothing to do", err=True)
        raise SystemExit(EXIT_OK)
    status = EXIT_OK
    changed = unchanged = failed = 0
    for path in files:
        try:
            text = read_text(path)
            formatted = format_file(text, path, section_of(text, path))
        except InputReadError as error:
            click.echo(f"error: {error}", err=True)
            status, failed = max(status, EXIT_USAGE), failed + 1
            continue
        except ProseSyntaxError as error:
            click.echo(error.format(), err=True)
            status, failed = max(status, EXIT_FINDINGS), failed + 1
            continue
        except ProseError as error:  # a FormatError: the formatter refused to change meaning
            click.echo(f"error: {error}", err=True)
            status, failed = max(status, EXIT_FINDINGS), failed + 1
            continue
        if formatted == text:
            unchanged += 1
            continue
        changed += 1
        if show_diff:
            click.echo(_unified_diff(text, formatted, path), nl=False)
        if check:
            click.echo(f"would reformat {path}", err=True)
            status = max(status, EXIT_FINDINGS)
        elif not show_diff:
            try:
                _write(path, formatted)
            except OSError as error:
                click.echo(f"error: {path}: cannot write: {error.strerror}", err=True)
                status, failed, changed = max(status, EXIT_USAGE), failed + 1, changed - 1
                continue
            click.echo(f"reformatted {path}", err=True)
    click.echo(_summary(changed, unchanged, failed, dry_run=check or show_diff), err=True)
    raise SystemExit(status)


def _write(path: str, text: str) -> None:
    """Write `text` back byte for byte: the newlines as they are, a BOM if there was one."""
    target = Path(path)
    bom = codecs.BOM_UTF8 if target.read_bytes().startswith(codecs.BOM_UTF8) else b""
    write_whole(target, bom + text.encode("utf-8"))  # a failed write leaves the file as it was


def _unified_diff(before: str, after: str, path: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{path} (original)",
        tofile=f"{path} (formatted)",
    )
    missing = "\n\\ No newline at end of file\n"
    return "".join(line if line.endswith("\n") else line + missing for line in lines)


def _summary(changed: int, unchanged: int, failed: int, *, dry_run: bool) -> str:
    def files(count: int) -> str:
        return f"{count} file{'' if count == 1 else 's'}"

    would = "would be " if dry_run else ""
    parts = [f"{files(changed)} {would}reformatted", f"{files(unchanged)} {would}left unchanged"]
    if failed:
        parts.append(f"{files(failed)} could not be formatted")
    return ", ".join(parts) + "."
