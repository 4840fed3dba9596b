"""Invariant rules: the checkable forms of LANGUAGE.md section 5, checked by data flow."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from prose.check.invariant_checks import (
    SiteViolation,
    invariant_labels,
    of_rule,
    where,
)
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang import policy as rules
from prose.lang.words import whole_word
from prose.source import Span


def _leak(ctx: CheckContext, found: SiteViolation, transitive: bool = False) -> list[Label]:
    """The path a hidden slot's output took to the call, then the invariant it breaks."""
    other = found.violation.other
    labels = ctx.flow.path_labels(found.site.call, found.prop, other, transitive=transitive)
    return [*labels, *ctx.flow.target_labels(found.site.call),
            *invariant_labels(ctx, found.violation.line)]


def _channel(found: SiteViolation) -> str:
    return found.violation.channel or "the call"


class LeakRule(Rule):
    """A rule that reports each violation of one policy rule where a slot receives what it
    must not (the path the value took, then the invariant): a subclass names the policy
    rule and the message, nothing else.

    As pyflakes' messages, the message is a template: `{called}` is the slot the call
    runs, `{slot}` and `{other}` the invariant's two slots, `{channel}` the input (or
    "the call") the value arrives through."""

    policy_rule: ClassVar[str]
    template: ClassVar[str]
    transitive: ClassVar[bool] = False  # the path may run through derived values

    def message(self, found: SiteViolation) -> str:
        return self.template.format(called=found.slot, slot=found.violation.slot,
                                    other=found.violation.other, channel=_channel(found))

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for found in of_rule(ctx, self.policy_rule):
            yield self.diagnostic(where(found), self.message(found),
                                  secondary=_leak(ctx, found, transitive=self.transitive))


@rule(code="PH603", name="sees-only-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class SeesOnlyViolated(Rule):
    """A call passes a slot an input outside its `sees only` list.

    ## What it does
    For `` `A` sees only `x`, `y` ``, reports every input of every call to
    `A` (reserved properties aside) whose name is not in the list.

    ## Why is this bad
    The invariant is the pattern's promise about what `A` can know; a
    reader, an auditor and the run-time check all rely on it.

    ## Example
    ```prose
    let proposal = call proposer
      task_brief: task_brief
      history: history
    ```
    with the invariant `` `proposer` sees only `task_brief` ``.

    ## Use instead
    ```prose
    let proposal = call proposer
      task_brief: task_brief
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for found in of_rule(ctx, rules.SEES_ONLY):
            slot, violation = found.slot, found.violation
            allowed = ctx.policy.slots[slot].sees_only or ()
            listed = ", ".join(f"`{name}`" for name in allowed)
            message = (f"`{slot}` sees only {listed}, but this call passes `{violation.channel}`"
                       if violation.channel not in ("prompt", "schema") else violation.message)
            yield self.diagnostic(
                where(found), message,
                secondary=[*invariant_labels(ctx, violation.line),
                           *ctx.flow.path_labels(found.site.call, found.prop)],
            )

@rule(code="PH604", name="never-sees-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class NeverSeesViolated(LeakRule):
    """A value carrying `B`'s output reaches a call of `A` that must never see `B`.

    ## What it does
    For `` `A` never sees `B` `` (and for `is unaware of`, which includes
    it), follows every value from the calls of
    `B` through `let`, assignment, `record`/`append`, object and array
    literals, interpolation, loop variables, loop results, parallel joins
    and `catch` variables, and reports each call of `A` that receives one
    of them, in any input or in `prompt`. Secondary locations show the path.

    ## Why is this bad
    The whole point of the pattern's structure (a blind reviewer, an
    adversary the proposer does not know about) is lost if the output
    slips through, and nobody notices in a model's answer.

    ## Example
    ```prose
    let attack = call adversary
      proposal: proposal
    let revised = call proposer
      task_brief: "{task_brief}. Consider: {attack}"
    ```

    ## Use instead
    Keep `B`'s output away from `A`, or drop the invariant if `A` is meant to
    respond to `B`.
    """

    policy_rule = rules.NEVER_SEES

    template = "`{slot}` receives output of `{other}` through `{channel}`"

@rule(code="PH607", name="independence-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class IndependenceViolated(Rule):
    """Two slots declared independent, and one receives the other's output.

    ## What it does
    For `` `A` and `B` are independent ``, reports every call of `A` that
    receives a value carrying `B`'s output and every call of `B` that
    receives `A`'s, with the path. With `prose run
    --require-distinct-models` the run also fails when both route to the
    same model.

    ## Why is this bad
    Two reviewers that see each other's verdicts are one reviewer with
    extra steps: the second approval proves nothing.

    ## Example
    ```prose
    let first = call reviewer_a
      candidate: candidate
    let second = call reviewer_b
      candidate: candidate
      earlier_findings: first
    ```

    ## Use instead
    ```prose
    let second = call reviewer_b
      candidate: candidate
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for found in of_rule(ctx, rules.INDEPENDENT):
            slot, other = found.slot, found.violation.other
            how = "a value derived from" if ctx.policy.strict else "output of"
            yield self.diagnostic(
                where(found),
                f"`{slot}` and `{other}` are independent, but `{slot}` receives "
                f"{how} `{other}` through `{_channel(found)}`",
                secondary=_leak(ctx, found, transitive=ctx.policy.strict),
            )

@rule(code="PH605", name="never-sees-indirectly-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class NeverSeesIndirectlyViolated(LeakRule):
    """A value influenced by `B`, even through other calls, reaches `A`.

    ## What it does
    For `` `A` never sees `B`, even indirectly ``, a call's output also
    carries the provenance of everything that call was given. Reports each
    call of `A` that receives a value so derived from `B`'s output.

    ## Why is this bad
    A summary of `B`'s output written by a third slot still tells `A` what
    `B` said. Use this form when independence must survive intermediaries.

    ## Example
    ```prose
    let notes = call summariser
      text: attack
    let revised = call proposer
      notes: notes
    ```
    with `` `proposer` never sees `adversary`, even indirectly ``.

    ## Use instead
    Do not route anything derived from `B` to `A`.
    """

    policy_rule = rules.NEVER_SEES_INDIRECTLY
    transitive = True

    template = "`{slot}` receives a value derived from `{other}` through `{channel}`"

@rule(code="PH606", name="unaware-of-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class UnawareOfViolated(Rule):
    """Literal text sent to `A` names `B`, `B`'s role, or the pattern.

    ## What it does
    For `` `A` is unaware of `B` ``, checks the pattern's own literal text
    that calls of `A` send (input labels, string literals in inputs, the
    `prompt`) for `B`'s name, the first noun of `B`'s `ensures:` (its role,
    e.g. "attack") and the pattern's name, as whole words, ignoring case.
    (That `A` never receives `B`'s output is checked by PH604.)

    ## Why is this bad
    "Argue your case; an adversary will attack it" tells the proposer it
    will be attacked, which changes what it writes. Values supplied at run
    time are not literal text and are checked at run time instead.

    ## Example
    ```prose
    let proposal = call proposer
      task_brief: task_brief
      prompt: "Write a proposal that can survive the adversary."
    ```

    ## Use instead
    ```prose
    let proposal = call proposer
      task_brief: task_brief
      prompt: "Write a proposal that answers the brief."
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for found in of_rule(ctx, rules.UNAWARE_OF):
            violation = found.violation
            word = violation.word or ""
            span, origin = self._locate(ctx, found, word)
            secondary = [Label(origin, "the text is written here")] if origin else []
            yield self.diagnostic(
                span,
                f"literal text sent to `{found.violation.slot}` names `{word}`",
                secondary=[*secondary, *invariant_labels(ctx, violation.line)],
                help=f"`{found.slot}` must not learn about `{violation.other}`: reword it",
            )

    @staticmethod
    def _locate(ctx: CheckContext, found: SiteViolation, word: str) -> tuple[Any, Any]:
        """Where the offending text is: (the diagnostic's span, the text's origin if elsewhere)."""
        if found.violation.channel == "ensures":
            slot = ctx.decl.slots.get(found.slot)
            spec_slot = next((s for s in ctx.spec.slots if s.name == found.slot), None) if ctx.spec else None
            span = getattr(spec_slot, "ensures_span", None) or (slot.span if slot else where(found))
            return span, None
        prop = found.prop
        if prop is None:
            return where(found), None
        if prop.name == found.violation.channel and whole_word(word).search(prop.name):
            return prop.span, None  # the input's own label
        entry = found.site.inputs.get(prop.name)
        texts = ctx.flow.literal_texts(entry.value) if entry is not None else []
        for text, origin in sorted(texts, key=lambda item: (item[1].line, item[1].column)):
            if whole_word(word).search(text):
                if _within(origin, prop.span):
                    return origin, None
                return prop.span, origin
        return prop.span, None

@rule(code="PH609", name="own-chain-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class OwnChainViolated(LeakRule):
    """A call of `A` receives another `A` chain's output.

    ## What it does
    For `` each `A` sees only its own chain ``, reports every call of `A`
    that may receive an output of `A` made in another chain: a sibling
    parallel branch, another execution of the same `parallel`, or anything
    collected at a join (a `parallel for`'s list, a `parallel:` block's
    published names) and passed back to `A`. Outputs made in the same
    branch, or in a branch the call runs inside, are its own chain.

    ## Why is this bad
    Blind review, independent sampling and self-consistency rest on each
    reviewer working alone: once one reviewer reads another's report, their
    agreement proves nothing. `are independent` cannot say this when every
    reviewer is the same slot.

    ## Example
    ```prose
    let reports = parallel for material in materials:
      call reviewer
        material: material
    let final = call reviewer
      material: materials
      prior_understanding: reports
    ```
    with `` each `reviewer` sees only its own chain ``.

    ## Use instead
    Keep each reviewer's chain inside its own branch, and give the collected
    reports to another slot (a comparator):
    ```prose
    let reports = parallel for material in materials:
      call reviewer
        material: material
    let final = call comparator
      reports: reports
    ```
    """

    policy_rule = rules.OWN_CHAIN

    template = "`{called}` receives another `{called}` chain's output through `{channel}`"


@rule(code="PH610", name="predecessor-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class PredecessorViolated(LeakRule):
    """A service of a list-valued slot receives an output other than its predecessor's.

    ## What it does
    For `` each of `stages` sees only its predecessor's output ``, reports
    every call of a service of `stages` that may receive an output of
    another service of `stages` than the one just before it in the list:
    an earlier stage's, its own, or a list of them. In a `for stage in
    stages` loop the linter follows the first iterations one by one; a call
    of `stages` anywhere else may reach any service of the list, so any
    output of `stages` it receives is reported.

    ## Why is this bad
    A pipeline's stages are meant to work from their predecessor's output
    alone: a later stage that also reads the original or an earlier stage
    can skip or undo the work in between, and the result no longer shows
    what each stage did.

    ## Example
    ```prose
    for stage in stages:
      current = call stage
        input: current
        earlier: stage_outputs
      record current in stage_outputs
    ```

    ## Use instead
    ```prose
    for stage in stages:
      current = call stage
        input: current
      record current in stage_outputs
    ```
    """

    policy_rule = rules.PREDECESSOR

    template = ("a service of `{called}` receives an output of `{called}` that is not its "
                "predecessor's, through `{channel}`")


@rule(code="PH608", name="invariant-not-checkable",
      category="information-hiding", severity=Severity.INFO)
class InvariantNotCheckable(Rule):
    """An invariant about slots is written in prose the linter cannot check.

    ## What it does
    Reports invariant bullets that mention a slot but match none of the
    checkable forms of LANGUAGE.md 5, and suggests a checkable rewrite when
    the intent is clear. A bullet written almost as a form (backticked names
    and nearly the form's words, as `` `writer` only runs if `gate.ok` `` or
    `` every loop bounded by `depth`, `k` or `beam` ``) is reported with the
    nearest form written out with its own names, whether or not it names a
    slot. A bullet that ends with `(not machine-checked: REASON)` says why it
    cannot be checked and is not reported; `prose lint` counts it apart.

    ## Why is this bad
    It is not an error: some invariants are judgement calls. But a
    visibility or independence promise in prose is checked by nobody; in a
    checkable form it is proven before the run and enforced during it.

    ## Example
    ```markdown
    - Proposer is unaware it will be attacked
    ```

    ## Use instead
    ```markdown
    - `proposer` is unaware of `adversary`
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        from prose.check.suggest import mentioned_slots, suggest_rewrite
        from prose.spec.invariants import nearest_form, unchecked_reason

        for invariant in ctx.decl.invariants:
            if invariant.form is not None or unchecked_reason(invariant.text) is not None:
                continue  # checked, or it says why it cannot be
            slots = mentioned_slots(invariant.text, ctx.decl)
            nearest = nearest_form(invariant.text)
            if not slots:
                if nearest is not None:  # a near miss of a form, about no slot (a loop bound)
                    yield self.diagnostic(
                        invariant.span, "invariant is not machine-checked: it is close to a "
                        "checkable form but is not one", help=f"the nearest form: {nearest}")
                continue
            suggestion = suggest_rewrite(invariant.text, ctx.decl)
            if suggestion and not _holds(ctx, suggestion, invariant.span):
                suggestion = None
            if suggestion is None and nearest is not None:
                yield self.diagnostic(
                    invariant.span, "invariant is not machine-checked: "
                    + ", ".join(f"`{slot}`" for slot in slots) + " named in a near miss of a "
                    "checkable form", help=f"the nearest form: {nearest}")
                continue
            yield self.diagnostic(
                invariant.span,
                "invariant is not machine-checked: "
                + ", ".join(f"`{slot}`" for slot in slots)
                + " named in prose",
                help=f"write it as: {suggestion}" if suggestion else None,
            )


def _holds(ctx: CheckContext, suggestion: str, span: Span) -> bool:
    """Whether a suggested visibility form would hold for this program (never suggest a lie)."""
    from prose.check.invariant_checks import site_violations
    from prose.lang.policy import compile_policy
    from prose.spec.invariants import parse_invariant_form
    from prose.spec.model import Invariant

    form = parse_invariant_form(suggestion)
    if form is None or ctx.spec is None:
        return False
    # The pattern as it would be with only the suggested invariant, asked the one judge.
    invariant = Invariant(text=suggestion, span=span, form=form)
    suggested = compile_policy(ctx.spec.model_copy(update={"invariants": [invariant],
                                                           "frontmatter": {}}))
    hiding = {rules.NEVER_SEES, rules.NEVER_SEES_INDIRECTLY, rules.UNAWARE_OF, rules.INDEPENDENT}
    return not any(found.violation.rule in hiding for found in site_violations(ctx, suggested))


def _within(inner: Any, outer: Any) -> bool:
    return bool(
        (inner.line, inner.column) >= (outer.line, outer.column)
        and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)
    )
