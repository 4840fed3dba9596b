from __future__ import annotations

from collections.abc import Iterable

from prose.check.findings import ArityMismatch
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity


@rule
class BlockArity(Rule):
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

    code = "PN108"
    name = "block-arity"
    category = "names"
    severity = Severity.ERROR

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for finding in ctx.model.findings_of(ArityMismatch):
            yield self.diagnostic(
                finding.span,
                f"block `{finding.name}` takes {finding.wanted} argument(s), {finding.given} given",
                secondary=[Label(finding.block, "block defined here")],
            )
