"""The entry rule of information hiding: a call passes only what the slot requires."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.invariant_checks import of_rule, where
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang import policy as rules
from prose.syntax import nodes as n
from prose.syntax.walk import terminal_returns


@rule(code="PH601", name="undeclared-input", category="information-hiding", severity=Severity.ERROR)
class UndeclaredInput(Rule):
    """A call passes an input that the slot's `requires:` does not declare.

    ## What it does
    For every call to a slot with a `requires:` list, reports each input
    (every call property except `prompt`, `model`, `retry`, `backoff`,
    `schema`) that matches no entry of the list (LANGUAGE.md 1.1 matching).
    Secondary locations show where the passed value came from.

    ## Why is this bad
    A slot sees exactly what the call site passes (LANGUAGE.md 4.4). An
    input the slot does not declare is an information leak: the service
    learns something its contract says it must not depend on (an adversary
    seeing the proposer's reasoning, a reviewer seeing another's verdict).

    ## Example
    ```markdown
    - `proposer` (primary)
      - requires: task_brief
    ```
    ```prose
    let proposal = call proposer
      task_brief: task_brief
      critique: attack
    ```

    ## Use instead
    Pass only the declared inputs, or declare the new one if the slot is
    really meant to see it:
    ```prose
    let proposal = call proposer
      task_brief: task_brief
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for found in of_rule(ctx, rules.REQUIRES):
            slot = ctx.decl.slots[found.slot]
            name = found.violation.channel
            declared = ", ".join(f"`{entry.strip()}`" for entry in slot.requires or ()) or "nothing"
            secondary = [Label(slot.span, f"`{found.slot}` requires {declared}")]
            secondary.extend(ctx.flow.path_labels(found.site.call, found.prop))
            yield self.diagnostic(
                where(found),
                f"`{found.slot}` does not require `{name}`: passing it leaks information",
                secondary=secondary,
                help=f"remove `{name}`, or add it to `requires:` of `{found.slot}`",
            )

_DESCRIPTIVE_STARTS = {
    "the", "a", "an", "number", "count", "list", "total", "which", "whether", "all", "each", "every",
}  # fmt: skip


@rule(code="PH602", name="string-literal-in-return",
      category="information-hiding", severity=Severity.WARNING, compat_only=True)
class StringLiteralInReturn(Rule):
    """A string literal stands in for a computed value in a return.

    ## What it does
    Reports, in an object returned by the pattern, a string literal that
    reads like a description of a value (`"number of attempted delegates"`)
    rather than a value.

    ## Why is this bad
    The caller receives the description, not the number. OpenProse's own
    fallback-chain and race patterns do this; an LLM reading the file may
    fill it in, a deterministic interpreter returns the text.

    ## Example
    ```prose
    return { result: answer, attempts: "number of attempted delegates" }
    ```

    ## Use instead
    Count it:
    ```prose
    return { result: answer, attempts: attempts.length }
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for statement in terminal_returns(ctx.program.body):
            if not isinstance(statement.value, n.Object):
                continue
            for entry in statement.value.entries:
                value = entry.value
                if not isinstance(value, n.String) or any(
                    isinstance(part, n.Interpolation) for part in value.parts
                ):
                    continue
                words = value.text.lower().split()
                if len(words) >= 3 and (words[0] in _DESCRIPTIVE_STARTS or "of" in words):
                    yield self.diagnostic(
                        value.span,
                        f"`{entry.key}` returns the text {value.text!r}, which describes a value instead of computing it",
                    )


__all__ = ["Label", "StringLiteralInReturn", "UndeclaredInput"]
