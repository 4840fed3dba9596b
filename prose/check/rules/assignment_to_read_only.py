from __future__ import annotations

from prose.check.findings import ReadOnlyAssigned
from prose.check.rule import FindingRule, rule
from prose.diagnostics.model import Severity


@rule(name="assignment-to-read-only", category="names", severity=Severity.ERROR)
class AssignmentToReadOnly(FindingRule):
    """A slot, config key, parameter, `const`, loop or catch variable is assigned.

    ## What it does
    Reports `let`, `=`, `record ... in` or `append ... to` whose target is a
    name that is read-only: a slot, a config key, a parameter, a `const`, a
    loop variable or a `catch` variable (LANGUAGE.md 4.1).

    ## Why is this bad
    Slots, config and parameters are the pattern's contract with whoever
    instantiates it; rebinding them hides the caller's value. Loop and catch
    variables are rebound on every iteration, so an assignment is lost.

    ## Example
    ```prose
    repeat rounds as round:
      rounds = 1
    ```

    ## Use instead
    ```prose
    let remaining = rounds
    repeat rounds as round:
      remaining = 1
    ```
    """

    finding = ReadOnlyAssigned
