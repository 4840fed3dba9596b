from __future__ import annotations

from collections.abc import Iterable

from prose.check.findings import LetRepeated
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity


@rule
class SecondLet(Rule):
    """A second `let` statement binds a name that is already bound.

    ## What it does
    Reports a `let x = ...` statement when an earlier, different `let`
    statement already bound `x` in the same scope. One `let` that runs on
    every iteration of a loop is a single statement and is not reported.

    ## Why is this bad
    The pattern body is one scope (LANGUAGE.md 4.1), so the second `let`
    assigns the existing variable; readers used to block-scoped languages
    expect a new, shadowing variable. OpenProse's own patterns rely on this
    (`let last = call worker` inside a loop), which is why this is a warning
    in the `compat` profile and an error in `strict`.

    ## Example
    ```prose
    let draft = null
    repeat 3:
      let draft = call writer
        previous: draft
    ```

    ## Use instead
    ```prose
    let draft = null
    repeat 3:
      draft = call writer
        previous: draft
    ```
    """

    code = "PN104"
    name = "second-let"
    category = "names"
    severity = Severity.WARNING
    compat_only = True

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for finding in ctx.model.findings_of(LetRepeated):
            yield self.diagnostic(
                finding.span,
                f"`{finding.name}` is already bound; this `let` assigns it",
                secondary=[Label(finding.first, "first bound here")],
                help=f"write `{finding.name} = ...` to make the update explicit",
            )
