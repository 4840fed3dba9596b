"""`prose lint`: check pattern files and report diagnostics."""

from __future__ import annotations

import sys
from typing import Any

import click

from prose.cli.inputs import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, expand_paths, masked_output, shown
from prose.diagnostics.render import RENDERERS

FORMATS = tuple(RENDERERS)  # the renderers' names, in their table's order


def _codes(value: str | None) -> list[str]:
    return [code.strip().upper() for code in (value or "").split(",") if code.strip()]


@click.command("lint")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="full",
              show_default=True, help="How to print the diagnostics.")
@click.option("--select", metavar="CODES", help="Only these rule codes or prefixes (e.g. PH,PN101).")
@click.option("--ignore", metavar="CODES", help="Skip these rule codes or prefixes.")
@click.option("--profile", type=click.Choice(["compat", "strict"]), default="compat", show_default=True,
              help="`strict` turns compat-only warnings (second `let`, descriptive strings "
                   "in returns) into errors.")
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              help="Only files of this `kind:` (pattern, function, responsibility, gateway, "
                   "test; repeatable). A mixed tree's summary counts files per kind.")
@click.option("--verbose", "-v", is_flag=True,
              help="A code frame under every note too (a leak's path is otherwise one line "
                   "per step).")
@click.option("--strict-flow", is_flag=True,
              help="Strict mode for implicit flows: a value bound or chosen under a condition, "
                   "an index or a judge's decision carries what it depends on (as if every "
                   "pattern said `flow: strict`).")
def lint_command(paths: tuple[str, ...], output_format: str, select: str | None,
                 ignore: str | None, profile: str, kinds: tuple[str, ...],
                 strict_flow: bool, verbose: bool = False) -> None:
    """Check pattern files: names, flow, termination, conditions, contracts and
    information hiding.

    PATHS are `*.prose.md` files or folders (searched for `*.prose.md`), or
    instance files (`*.yaml`): an instance is checked against its pattern as
    the run would check it (bindings, config types, inputs, nested patterns'
    bindings and the inputs each call passes them).
    Silence one finding with a comment on its line in the prose block:
    `# prose: ignore[PN105]`. `prose rules` lists every rule; `prose rules
    CODE` explains one.

    Exit codes: 0 no errors (warnings never fail), 1 errors, 2 usage or I/O error.

    \b
    Examples:
      prose lint patterns/
      prose lint --format concise --select PH my-pattern.prose.md
      prose lint --format sarif patterns/ > prose.sarif
      prose lint --kind function --kind test packages/
      prose lint examples/dialectic.yaml
    """
    from prose.check import lint_text
    from prose.diagnostics import Summary, from_syntax_error, render
    from prose.diagnostics.model import Diagnostic
    from prose.errors import InputReadError, ProseSyntaxError
    from prose.files import read_text

    files = expand_paths(paths)
    if not files:
        click.echo("error: no `*.prose.md` files found in " + ", ".join(paths), err=True)
        raise SystemExit(EXIT_USAGE)
    diagnostics: list[Diagnostic] = []
    sources: dict[str, str] = {}
    status = EXIT_OK
    checked = prose_only = explained = linted = 0
    per_kind: dict[str, list[int]] = {}
    for path in files:
        if path.endswith((".yaml", ".yml")):  # an instance: checked against its pattern
            from prose.check.instance_lint import lint_instance

            try:
                checked_instance = lint_instance(path)
            except (InputReadError, ProseSyntaxError) as error:
                click.echo(f"error: {shown(str(error))}", err=True)
                status = EXIT_USAGE
                continue
            linted += 1
            sources.update(checked_instance.sources)
            diagnostics.extend(checked_instance.diagnostics)
            continue
        try:
            text = read_text(path)
        except InputReadError as error:
            click.echo(f"error: {shown(str(error))}", err=True)
            status = EXIT_USAGE
            continue
        except ProseSyntaxError as error:
            diagnostics.extend(from_syntax_error(error))
            linted += 1
            continue
        result = lint_text(text, path, profile=profile, select=_codes(select) or None,
                           ignore=_codes(ignore), strict_flow=strict_flow)
        kind = (result.spec.kind if result.spec is not None else None) or "unknown"
        if kinds and kind not in kinds:
            continue
        linted += 1
        sources[path] = text
        diagnostics.extend(result.diagnostics)
        counts = per_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        counts[1] += 1 if result.errors else 0
        if result.context is not None:
            coverage = result.context.invariant_coverage()
            checked += coverage[0]
            prose_only += coverage[1]
            explained += result.context.invariants_explained()
    if status != EXIT_OK and not linted:
        raise SystemExit(status)  # nothing could be read: no summary that says all is well
    if kinds and not linted:
        click.echo(f"error: no file of kind {', '.join(kinds)} in " + ", ".join(paths), err=True)
        raise SystemExit(EXIT_USAGE)
    total = checked + prose_only
    share = f"; {100 * checked // total}% checked" if total else ""
    why = f" ({explained} of them say why)" if explained else ""
    extra = [f"invariants: {checked} checked, {prose_only} prose-only{why}{share}"]
    if len(per_kind) > 1 or kinds:
        extra.append("kinds: " + ", ".join(
            f"{kind} {count} ({bad} with errors)" for kind, (count, bad) in sorted(per_kind.items())
        ))
    summary = Summary.of(diagnostics, files=linted, extra_lines=extra)
    rules = _rule_infos() if output_format == "sarif" else None
    color = None if output_format == "full" else False
    # A code frame quotes the file: an instance's `api_key: ...` whose key is exported too.
    sys.stdout.write(masked_output(render(output_format, diagnostics, sources, summary,
                                          rules=rules, color=color, verbose=verbose)))
    if status == EXIT_OK and summary.errors:
        status = EXIT_FINDINGS
    raise SystemExit(status)


def _rule_infos() -> dict[str, Any]:
    from prose.check.catalogue import rule_infos

    return dict(rule_infos())
