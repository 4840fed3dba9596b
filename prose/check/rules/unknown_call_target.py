from __future__ import annotations

from collections.abc import Iterable

from prose.check.findings import BadCallTarget
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.syntax.walk import root_name


@rule(code=BadCallTarget.code, name="unknown-call-target",
      category="names", severity=Severity.ERROR)
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

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        slots = ", ".join(f"`{name}`" for name in ctx.decl.slots) or "none"
        for finding in ctx.model.findings_of(BadCallTarget):
            yield self.diagnostic(finding.span, finding.message, help=f"declared slots: {slots}")
        for site in ctx.model.calls:
            if site.target != "service-variable" or site.bound is None:
                continue
            flow = ctx.flow.calls.get(id(site.call))
            if flow is None or flow.holds_service:
                continue  # never run (a block nobody calls), or it may hold one
            name = root_name(site.call.target) or ""
            yield self.diagnostic(
                site.call.target.span,
                f"`{name}` does not hold a service: no slot reaches it",
                secondary=[Label(site.bound, f"`{name}` is bound here")],
                help="call a slot, or a variable bound to one (such as a loop variable over a "
                     "list-valued slot, or a block parameter given a slot)",
            )


