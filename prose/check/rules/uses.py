"""Rules about `use` targets: where they may be, and cycles between patterns."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Severity
from prose.syntax import nodes as n
from prose.uses import UseRefused, resolve_use, use_cycle, use_roots


def _uses(ctx: CheckContext) -> Iterator[n.Use]:
    return (s for s in ctx.program.body if isinstance(s, n.Use))


def _file(ctx: CheckContext, statement: n.Use) -> Path:
    """The linted file (text linted under a name that is no file: that name in this folder)."""
    return Path(statement.span.file)


@rule(code="PK506", name="use-target-refused", category="contract", severity=Severity.ERROR)
class UseTargetRefused(Rule):
    """A `use` names something other than a pattern file inside the project or the library.

    ## What it does
    Reports a `use "path" as alias` whose target is not a relative path to a
    `*.prose.md` file that lies, once `..` and links are resolved, inside the
    current folder, the pattern's own folder or the standard library.

    ## Why is this bad
    A pattern file is data that others run. A `use` of `/etc/shadow` or of
    `../../secrets.yaml` would make running a pattern read files its author
    had no business naming; `prose run` refuses such a target before opening it.

    ## Example
    ```prose
    use "/home/me/review.prose.md" as review
    ```

    ## Use instead
    ```prose
    use "review.prose.md" as review
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for statement in _uses(ctx):
            file = _file(ctx, statement)
            try:
                resolve_use(statement.path, file, use_roots(file))
            except UseRefused as error:
                yield self.diagnostic(statement.span, str(error),
                                      help="give a relative path to a pattern file in the "
                                      "project or the library")


@rule(code="PT305", name="use-cycle", category="termination", severity=Severity.ERROR)
class UseCycle(Rule):
    """A pattern ends up using itself, directly or through the patterns it uses.

    ## What it does
    Follows the `use` statements of the pattern and of the patterns they name,
    and reports a `use` that leads back to a pattern already on the way, with
    the cycle's path.

    ## Why is this bad
    Each `use` alias called runs the named pattern; a cycle runs without end
    (until the nesting bound stops it), and no budget of calls stops a cycle
    that makes none. `prose run` refuses it at the first call that would close it.

    ## Example
    ```prose
    use "review.prose.md" as review   # and review.prose.md uses this file
    ```

    ## Use instead
    Break the cycle: move what both need into a third pattern that uses neither.
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        statements = list(_uses(ctx))
        if not statements:
            return
        file = _file(ctx, statements[0])
        roots = use_roots(file)
        cycle = use_cycle(file, roots, ctx.program)
        if cycle is None:
            return
        here = str(file.resolve())
        # The `use` that leads into the cycle: the one naming the file after this one on it.
        after = cycle[cycle.index(here) + 1] if here in cycle else None
        culprit = statements[0]
        for statement in statements:
            try:
                if str(resolve_use(statement.path, file, roots)) == after:
                    culprit = statement
                    break
            except UseRefused:
                continue
        names = " -> ".join(Path(item).name for item in cycle)
        yield self.diagnostic(culprit.span, f"`use` cycle: {names}",
                              help="a pattern cannot call itself, directly or through others")
