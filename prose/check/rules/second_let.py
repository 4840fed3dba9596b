from __future__ import annotations

from prose.check.findings import LetRepeated
from prose.check.rule import FindingRule, rule
from prose.diagnostics.model import Severity


@rule(name="second-let", category="names", severity=Severity.WARNING, compat_only=True)
class SecondLet(FindingRule):
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

    finding = LetRepeated
