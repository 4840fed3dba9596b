"""`prose test`: run pattern tests (`*.test.yaml`) and `kind: test` contracts with scripted models."""

from __future__ import annotations

from pathlib import Path

import click

from prose.cli.inputs import EXIT_FINDINGS, EXIT_USAGE, shown


@click.command("test")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("-k", "keyword", metavar="TEXT", help="Only the tests whose name contains TEXT.")
@click.option("--trace-dir", type=click.Path(file_okay=False),
              help="Keep each test's trace as DIR/<test name>.jsonl (for `prose audit`).")
@click.option("--script", type=click.Path(dir_okay=False),
              help="The script for `kind: test` contracts (default: NAME.script.yaml beside "
                   "each test).")
def test_command(paths: tuple[str, ...], keyword: str | None, trace_dir: str | None,
                 script: str | None) -> None:
    """Run the pattern tests in PATHS (files, or folders searched recursively for
    `*.test.yaml` and `kind: test` contracts; default `examples/`).

    A test file names an instance file, a script that serves every model call,
    and what to expect: `result` (a subset of the returned value), `calls` per
    slot, `status`, `exit_code` and `error`. No model or API key is needed.
    The format is in docs/testing.md.

    A `kind: test` contract (`*.prose.md`) names its `subject:` function,
    gives its inputs in `### Fixtures` and its assertions in `### Expects`
    and `### Expects Not`; the subject runs with the script, and each
    assertion's verdict is the script's `conditions:` entry for its text
    (docs/contracts.md). A test of a responsibility is skipped: prose does
    not run standing jobs.

    Prints `PASS name`, `SKIP name: why` or `FAIL name: why` per test, then
    `N passed, N failed` (and `N skipped`).

    \b
    Examples:
      prose test
      prose test examples/dialectic.test.yaml
      prose test tests/fixtures/ -k budget --trace-dir /tmp/traces
      prose test summarize.test.prose.md --script summarize.script.yaml
    Exit codes: 0 all passed, 1 a test failed, 2 usage (no such path, no tests).
    """
    from prose.llm import event_loop
    from prose.llm.loader import import_in_background

    import_in_background()  # LiteLLM loads (once for all the tests) while they are found
    from prose.contract_tests import ContractTestOutcome, find_contract_tests, run_contract_test
    from prose.testing import PatternTestOutcome, find_test_files, run_test_files

    targets = paths or ("examples",)
    yaml_targets = [target for target in targets if not target.endswith(".prose.md")]
    try:
        files = find_test_files(yaml_targets)
    except FileNotFoundError as error:
        click.echo(f"error: {shown(str(error))}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    missing = [target for target in targets if not Path(target).exists()]
    if missing:
        click.echo(f"error: {missing[0]}: no such file or folder", err=True)
        raise SystemExit(EXIT_USAGE)
    contracts = find_contract_tests(targets)
    if keyword:
        contracts = [path for path in contracts if keyword in path.name]
    if not files and not contracts:
        click.echo(f"error: no *.test.yaml files nor `kind: test` contracts in "
                   f"{', '.join(targets)}", err=True)
        raise SystemExit(EXIT_USAGE)

    def report(outcome: PatternTestOutcome | ContractTestOutcome) -> None:
        # A name is a test file's; the reasons quote the run's outputs (a model's text, a
        # provider's, code's): shown masked, control characters escaped.
        if isinstance(outcome, ContractTestOutcome) and outcome.skipped:
            click.echo(shown(f"SKIP {outcome.name}: {outcome.skipped}"))
        elif outcome.passed:
            click.echo(shown(f"PASS {outcome.name}"))
        else:
            click.echo(shown(f"FAIL {outcome.name}: {'; '.join(outcome.reasons)}"))

    outcomes: list[PatternTestOutcome | ContractTestOutcome] = []
    if files:
        outcomes += run_test_files(files, keyword=keyword,
                                   trace_dir=Path(trace_dir) if trace_dir else None, report=report)
    for path in contracts:
        outcome = event_loop.run(run_contract_test(path, script=script))
        report(outcome)
        outcomes.append(outcome)
    skipped = sum(1 for o in outcomes if isinstance(o, ContractTestOutcome) and o.skipped)
    failed = sum(1 for outcome in outcomes if not outcome.passed) - skipped
    line = f"{len(outcomes) - failed - skipped} passed, {failed} failed"
    click.echo(line + (f", {skipped} skipped" if skipped else ""))
    raise SystemExit(EXIT_FINDINGS if failed else 0)
