from __future__ import annotations

from collections.abc import Iterable

from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Severity


@rule(code="PN105", name="unused-variable", category="names", severity=Severity.WARNING)
class UnusedVariable(Rule):
    """A variable is bound and never read.

    ## What it does
    Reports a `let` or `const` variable that no later expression,
    interpolation, condition or call reads. Names starting with `_` are
    exempt.

    ## Why is this bad
    Usually a typo or a forgotten `return` key; for a call's result it means
    a model call whose output goes nowhere (paid for, then dropped).

    ## Example
    ```prose
    let summary = call summariser
      text: text
    return { result: text }
    ```

    ## Use instead
    ```prose
    let summary = call summariser
      text: text
    return { result: summary }
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for binding in ctx.model.bindings:
            if binding.kind in ("let", "const") and binding.uses == 0 and not binding.name.startswith("_"):
                yield self.diagnostic(binding.span, f"`{binding.name}` is never read")


@rule(code="PN106", name="unused-slot", category="names", severity=Severity.WARNING)
class UnusedSlot(Rule):
    """A declared slot is never called.

    ## What it does
    Reports a slot under `### Slots` that no `call` reaches, directly or
    through a loop variable over a list-valued slot.

    ## Why is this bad
    Whoever instantiates the pattern must bind a service that never runs;
    the spec promises a role the program does not have.

    ## Example
    ```markdown
    - `critic`
      - requires: draft
    ```
    with no `call critic` in the program.

    ## Use instead
    Call the slot, or remove it from `### Slots`.
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        unused = [name for name in ctx.decl.slots if not ctx.model.slot_uses.get(name)]
        if unused and ctx.model.calls:
            # A call through a service value (a list, a loop variable, a block parameter, a
            # value chosen in an `if`) reaches the slots the flow analysis says it may denote.
            reached = {slot for site in ctx.flow.calls.values() for slot in site.slots}
            unused = [name for name in unused if name not in reached]
        for name in unused:
            slot = ctx.decl.slots[name]
            yield self.diagnostic(slot.span, f"slot `{name}` is never called")


@rule(code="PN107", name="unused-config", category="names", severity=Severity.WARNING)
class UnusedConfig(Rule):
    """A config key is never read.

    ## What it does
    Reports a key under `### Config` that no expression, loop bound or
    condition reads.

    ## Why is this bad
    Users will set it expecting an effect, and nothing changes.

    ## Example
    ```markdown
    - `threshold` (number, default: 0.8): minimum score
    ```
    with no `threshold` in the program.

    ## Use instead
    Use the key (for instance in a condition), or remove it.
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for name, item in ctx.decl.config.items():
            if not ctx.model.config_uses.get(name):
                yield self.diagnostic(item.span, f"config key `{name}` is never read")
