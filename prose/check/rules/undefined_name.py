from __future__ import annotations

from collections.abc import Iterable

from prose.check.findings import NameUndefined
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Severity
from prose.spelling import did_you_mean


@rule(code=NameUndefined.code, name="undefined-name", category="names", severity=Severity.ERROR)
class UndefinedName(Rule):
    """A name is read (or interpolated) that nothing defines.

    ## What it does
    Reports a reference to a name that is not a variable bound earlier, a
    loop or catch variable, a slot, a config key or a parameter. String
    interpolations (`"{draft.title}"`) and deterministic conditions count.

    ## Why is this bad
    At run time the read fails (or, in an LLM-interpreted runtime, the model
    silently invents a value). A typo in a name is the most common cause: the
    message names the defined name it most resembles (`did you mean ...?`).

    ## Example
    ```prose
    let draft = call writer
      brief: task_brief
    return { result: drafts }
    ```

    ## Use instead
    ```prose
    let draft = call writer
      brief: task_brief
    return { result: draft }
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for finding in ctx.model.findings_of(NameUndefined):
            guess = did_you_mean(finding.name, known_names(ctx))
            yield self.diagnostic(finding.span, finding.message + guess, help=finding.help)


def known_names(ctx: CheckContext) -> set[str]:
    """Every name the pattern defines: variables, loop and catch variables, blocks, slots,
    config keys and parameters (the candidates for a misspelt one)."""
    names = {binding.name for binding in ctx.model.bindings}
    return names | set(ctx.decl.slots) | set(ctx.decl.config) | set(ctx.decl.parameters)
