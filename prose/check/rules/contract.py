"""Contract rules: what comes back, and what each call must be given."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang.properties import RESERVED_PROPERTIES as RESERVED
from prose.lang.words import requirement_matches
from prose.syntax import nodes as n
from prose.syntax.walk import terminal_returns


@rule(code="PK501", name="returns-mismatch", category="contract", severity=Severity.ERROR)
class ReturnsMismatch(Rule):
    """The keys a pattern returns differ from its `### Returns` section.

    ## What it does
    Compares the keys of every object literal returned by a `return` that
    ends the pattern (not the returns of collecting loops) with the
    backticked keys listed under `### Returns`.

    ## Why is this bad
    Callers (other patterns, instance files, tests) read the documented
    keys; a missing key is `null` to them and an extra one is undocumented.
    A key whose description says when it is present ("when the pattern
    aborts", "only if ...", "(optional)") may be left out.

    ## Example
    ```markdown
    ### Returns
    - `result`: the final draft
    - `rounds_used`: how many rounds ran
    ```
    ```prose
    return { result: draft }
    ```

    ## Use instead
    ```prose
    return { result: draft, rounds_used: round }
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        declared = ctx.decl.returns
        if not declared:
            return
        wanted = set(declared)
        # A key marked conditional ("when the pattern aborts") may be left out.
        sometimes = {key.name for key in ctx.spec.returns if key.conditional} if ctx.spec else set()
        for statement in terminal_returns(ctx.program.body):
            value = statement.value
            if not isinstance(value, n.Object):
                continue
            keys = {entry.key for entry in value.entries}
            missing = sorted(wanted - keys - sometimes)
            extra = sorted(keys - wanted)
            if not missing and not extra:
                continue
            parts = []
            if missing:
                parts.append("missing " + ", ".join(f"`{key}`" for key in missing))
            if extra:
                parts.append("undeclared " + ", ".join(f"`{key}`" for key in extra))
            secondary = [Label(ctx.decl.returns_span, "`### Returns` declares the keys here")] if ctx.decl.returns_span else []
            yield self.diagnostic(
                statement.span,
                "returned keys differ from `### Returns`: " + "; ".join(parts),
                secondary=secondary,
            )


@rule(code="PK502", name="missing-call-input", category="contract", severity=Severity.ERROR)
class MissingRequiredInput(Rule):
    """A call does not pass an input its slot requires.

    ## What it does
    For each call to a slot that declares `requires:`, checks that every
    entry without a condition in parentheses is matched by one of the call's
    inputs (an input matches an entry when its words occur consecutively in
    the entry, LANGUAGE.md 1.1).

    ## Why is this bad
    The slot's contract says it cannot do its job without that input; the
    service would receive an incomplete request.

    ## Example
    ```markdown
    - `adversary`
      - requires: proposal, original task_brief
    ```
    ```prose
    let attack = call adversary
      proposal: proposal
    ```

    ## Use instead
    ```prose
    let attack = call adversary
      proposal: proposal
      task_brief: task_brief
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for site in ctx.model.calls:
            if site.slot is None:
                continue
            slot = ctx.decl.slots[site.slot]
            if not slot.requires:
                continue
            inputs = [prop.name for prop in site.call.properties if prop.name not in RESERVED]
            for entry in slot.required_entries:
                if not any(requirement_matches(entry, name) for name in inputs):
                    yield self.diagnostic(
                        site.call.head,
                        f"call to `{site.slot}` does not pass required input `{entry.strip()}`",
                        secondary=[Label(slot.span, f"`{site.slot}` requires it here")],
                    )
