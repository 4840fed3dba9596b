"""`prose new`: scaffold a pattern file plus an example instance, script and test."""

from __future__ import annotations

import os
from pathlib import Path

import click

from prose.cli.inputs import EXIT_USAGE, shown


@click.command("new")
@click.argument("name")
@click.option("--from", "source", metavar="PATTERN",
              help="Copy a library pattern (a name from `prose list`, or a file) under NAME.")
@click.option("--dir", "directory", type=click.Path(file_okay=False),
              help="Where the pattern goes (default: patterns/ if it exists, else here).")
@click.option("--examples", "examples", type=click.Path(file_okay=False),
              help="Where the example files go (default: examples/ next to patterns/, "
                   "else DIR/examples).")
def new_command(name: str, source: str | None, directory: str | None, examples: str | None) -> None:
    """Scaffold NAME: `DIR/NAME.prose.md`, and `examples/NAME.yaml` (an instance),
    `examples/NAME.script.yaml` (scripted responses) and `examples/NAME.test.yaml`.

    The default skeleton is a worker/critic loop with checkable invariants: it
    lints with no errors and no warnings, and `prose test examples/NAME.test.yaml`
    passes as written. `--from` copies a library pattern and, when the library
    has them, its examples. Existing files are never overwritten.

    \b
    Examples:
      prose new code-review
      prose new my-debate --from dialectic
      prose new triage --dir src/patterns --examples src/examples
    Exit codes: 0 written, 1 a file already exists, 2 usage (bad name, unknown --from).
    """
    from prose.scaffold import ScaffoldError, default_dir, examples_dir_for, plan_new, write_plan

    pattern_dir = Path(directory) if directory else default_dir()
    example_dir = Path(examples) if examples else examples_dir_for(pattern_dir)
    try:
        plan = plan_new(name, pattern_dir, example_dir, source)
        written = write_plan(plan)
    except ScaffoldError as error:
        click.echo(f"error: {shown(str(error))}", err=True)
        raise SystemExit(error.exit_code) from None
    except OSError as error:
        click.echo(f"error: cannot write: {shown(str(error))}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    for path in written:
        click.echo(f"created {_shown(path)}")
    for note in plan.notes:
        click.echo(f"note: {note}")
    tests = [path for path in written if path.name.endswith(".test.yaml")]
    if tests:
        click.echo(f"next: prose lint {_shown(written[0])} && prose test {_shown(tests[0])}")


def _shown(path: Path) -> str:
    """The path relative to the working folder when it is inside it."""
    try:
        return os.path.normpath(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return os.path.normpath(path)
