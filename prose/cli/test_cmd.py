"""`prose test`: run pattern tests (`*.test.yaml`) in-process with scripted models."""

from __future__ import annotations

from pathlib import Path

import click

from prose.cli.inputs import EXIT_FINDINGS, EXIT_USAGE


@click.command("test")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("-k", "keyword", metavar="TEXT", help="Only the tests whose name contains TEXT.")
@click.option("--trace-dir", type=click.Path(file_okay=False),
              help="Keep each test's trace as DIR/<test name>.jsonl (for `prose audit`).")
def test_command(paths: tuple[str, ...], keyword: str | None, trace_dir: str | None) -> None:
    """Run the pattern tests in PATHS (files, or folders searched recursively for
    `*.test.yaml`; default `examples/`).

    A test file names an instance file, a script that serves every model call,
    and what to expect: `result` (a subset of the returned value), `calls` per
    slot, `status`, `exit_code` and `error`. No model or API key is needed.
    The format is in docs/testing.md.

    Prints `PASS name` or `FAIL name: why` per test, then `N passed, N failed`.

    \b
    Examples:
      prose test
      prose test examples/dialectic.test.yaml
      prose test tests/fixtures/ -k budget --trace-dir /tmp/traces
    Exit codes: 0 all passed, 1 a test failed, 2 usage (no such path, no tests).
    """
    from prose.testing import PatternTestOutcome, find_test_files, run_test_files

    targets = paths or ("examples",)
    try:
        files = find_test_files(targets)
    except FileNotFoundError as error:
        click.echo(f"error: {error}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    if not files:
        click.echo(f"error: no *.test.yaml files in {', '.join(targets)}", err=True)
        raise SystemExit(EXIT_USAGE)

    def report(outcome: PatternTestOutcome) -> None:
        if outcome.passed:
            click.echo(f"PASS {outcome.name}")
        else:
            click.echo(f"FAIL {outcome.name}: {'; '.join(outcome.reasons)}")

    outcomes = run_test_files(files, keyword=keyword,
                              trace_dir=Path(trace_dir) if trace_dir else None, report=report)
    failed = sum(1 for outcome in outcomes if not outcome.passed)
    click.echo(f"{len(outcomes) - failed} passed, {failed} failed")
    raise SystemExit(EXIT_FINDINGS if failed else 0)
