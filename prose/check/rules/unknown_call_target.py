from __future__ import annotations

from collections.abc import Iterable

from prose.check.findings import BadCallTarget, NotAService
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity


@rule
class UnknownCallTarget(Rule):
    """`call X` where X is not a slot, a service variable, a `use` alias or a block.

    ## What it does
    Reports a call whose target resolves to nothing that can be called: not
    a declared slot, not a variable holding a service (such as a loop
    variable over a list-valued slot), not an alias imported with `use`, and
    not a `block`.

    ## Why is this bad
    The call cannot be bound to any service when the pattern is instantiated,
    so the pattern cannot run.

    ## Example
    ```prose
    let review = call reviewr
      draft: draft
    ```

    ## Use instead
    Declare the slot under `### Slots` (or fix the spelling):
    ```prose
    let review = call reviewer
      draft: draft
    ```
    """

    code = "PN102"
    name = "unknown-call-target"
    category = "names"
    severity = Severity.ERROR

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        slots = ", ".join(f"`{name}`" for name in ctx.decl.slots) or "none"
        for finding in ctx.model.findings_of(BadCallTarget):
            if isinstance(finding, NotAService):
                yield self.diagnostic(
                    finding.span,
                    f"`{finding.name}` does not hold a service: it is not bound to a slot",
                    secondary=[Label(finding.bound, f"`{finding.name}` is bound here")],
                    help="call a slot, or a variable bound to one (such as a loop variable over a list-valued slot)",
                )
                continue
            if finding.name:
                message = f"`{finding.name}` is not a slot, service variable, `use` alias or block"
            else:
                message = "a call target must be a name"
            yield self.diagnostic(finding.span, message, help=f"declared slots: {slots}")
