from __future__ import annotations

from prose.check.findings import ArityMismatch
from prose.check.rule import FindingRule, rule
from prose.diagnostics.model import Severity


@rule(name="block-arity", category="names", severity=Severity.ERROR)
class BlockArity(FindingRule):
    """`do name(args)` passes a different number of arguments than the block takes.

    ## What it does
    Compares the arguments of each `do` with the parameters of its `block`.

    ## Why is this bad
    A missing argument is an undefined name inside the block at run time; an
    extra one is silently ignored.

    ## Example
    ```prose
    block attempt(task, hint):
      call worker
        task: task
        hint: hint
    do attempt(task_brief)
    ```

    ## Use instead
    ```prose
    do attempt(task_brief, "be brief")
    ```
    """

    finding = ArityMismatch
