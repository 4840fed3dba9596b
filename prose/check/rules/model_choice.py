"""A pattern file names the model a call goes to (`prose.lang.model_choice`)."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Severity
from prose.lang.model_choice import how_to_allow, model_choices


@rule(code="PK508", name="pattern-chooses-model", category="contract", severity=Severity.WARNING)
class PatternChoosesModel(Rule):
    """A pattern file names a model: an agent's `model:`, a call's or a session's.

    ## What it does
    Reports every `model:` of an `agent`, a `call` or a `session` in the
    program: the pattern asks for a model that the person running it has not
    chosen.

    ## Why is this bad
    A pattern is data that anyone may write and share; the person who runs
    it holds the keys and pays for the calls. `prose run` sends a call to a
    model the pattern names only when that person granted it (the run's
    default or judge model, a slot bound to it, `--allow-model MODEL` or the
    instance's `allow_models:`); otherwise the run stops at that call (R018,
    exit 1) before anything is sent. A deployment listed in prose.yaml is not
    granted by being listed.

    ## Example
    ```prose
    agent critic:
      model: premium
      prompt: "You review drafts."
    ```

    ## Use instead
    ```prose
    agent critic:
      prompt: "You review drafts."
    ```
    and choose the model where the run is configured: bind the slot in the
    instance (`with: {critic: {model: premium}}`), or grant the request
    with `prose run ... --allow-model premium` or `allow_models: [premium]`.
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for choice in model_choices(ctx.program.body):
            named = f"`{choice.model}`" if choice.model is not None else "a computed model"
            yield self.diagnostic(
                choice.span,
                f"{choice.where} asks for {named}: a pattern file does not choose the model; "
                "the run refuses it unless granted",
                help=how_to_allow(choice.model or "MODEL"))
