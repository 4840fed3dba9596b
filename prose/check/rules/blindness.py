"""Blind judging: `is blind to the source of`, the sealed key of `shuffle`, and per-round
isolation (`never sees its own round`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prose.check.invariant_checks import invariant_labels, of_rule, where
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Severity
from prose.lang import policy as rules


def _at_calls(found_by: Rule, ctx: CheckContext, policy_rule: str) -> Iterator[Diagnostic]:
    """Every violation of one policy rule, at the input that carries it, with the called
    service and the invariant as secondary labels."""
    for found in of_rule(ctx, policy_rule):
        violation = found.violation
        yield found_by.diagnostic(
            where(found), violation.message,
            secondary=[*ctx.flow.target_labels(found.site.call),
                       *invariant_labels(ctx, violation.line)])


@rule(code="PH634", name="blind-to-source-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class BlindToSourceViolated(Rule):
    """A judge that must be blind to which service made a sample can tell.

    ## What it does
    For `` `judge` is blind to the source of `samplers` `` (`samplers` a
    list-valued slot), reports every input of a call of `judge` that may
    carry something telling which service of `samplers` made an output: an
    output of `samplers` still in binding order or picked by its index (a
    list collected by `for s in samplers`, `samples[0]`), or a service of
    `samplers` itself (`source: s`, rendered as its name). A list passed
    through `shuffle(...)` first is in a random order, and its `.items` tell
    nothing; its `.key` may reach no call at all (PH635). The run time and
    `prose audit` judge the same (rule `blind`).

    ## Why is this bad
    Blind self-consistency, debate and mixture-of-agents judges are fair only
    if they cannot favour a model they recognise, nor the first answer
    because it came first.

    ## Example
    ```prose
    let samples = for s in samplers:
      call s
        question: question
    let verdict = call judge
      samples: samples
    ```

    ## Use instead
    ```prose
    let samples = for s in samplers:
      call s
        question: question
    let mixed = shuffle(samples)
    let verdict = call judge
      samples: mixed.items
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        yield from _at_calls(self, ctx, rules.BLIND)


@rule(code="PH635", name="shuffle-key-sent", category="information-hiding", severity=Severity.ERROR)
class ShuffleKeySent(Rule):
    """A call receives the key of a `shuffle`.

    ## What it does
    Reports every input of every call that may carry the `.key` of a
    `shuffle(...)` (or a value computed from it): the key is the
    permutation, so a model given it can undo the shuffle. The program may
    use the key in code (`samples[mixed.key[i]]` to map a verdict back to
    its sampler); what it selects that way is back in binding order. The run
    time stops such a call (R010) and `prose audit` reports it (rule
    `sealed`).

    ## Why is this bad
    The key is what the shuffle hides; sending it anywhere unshuffles it.

    ## Example
    ```prose
    let mixed = shuffle(samples)
    let verdict = call judge
      samples: mixed
    ```

    ## Use instead
    ```prose
    let mixed = shuffle(samples)
    let verdict = call judge
      samples: mixed.items
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for found in of_rule(ctx, rules.SEALED_KEY):
            yield self.diagnostic(where(found), found.violation.message,
                                  secondary=ctx.flow.target_labels(found.site.call))


@rule(code="PH636", name="own-round-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class OwnRoundViolated(Rule):
    """A call of `A` receives an output of `A` made in its own round.

    ## What it does
    For `` each `A` never sees its own round ``, reports every call of `A`
    that may receive an output of `A` made in the round the call runs in. A
    round is one execution of a parallel construct the call runs inside (a
    `parallel for`, a `parallel:` block, a `| pmap:`): an output of a
    sibling branch, of the call's own branch, or one collected at a join
    nested inside that round. Outputs collected at the join of an earlier
    round (the `parallel for` before, or the same one in an earlier
    iteration of a loop) are allowed. The run time stops such a call (R010)
    and `prose audit` reports it (rule `own-round`), from the branch each
    output was made in. A call of `A` outside every parallel construct has
    no round: write the rounds as `parallel for`.

    ## Why is this bad
    Mixture-of-agents: each proposer of a layer refines the previous
    layer's answers; one that also reads its own layer's answers (or its own
    earlier draft of this layer) is no longer an independent proposer, and
    the aggregation loses its diversity.

    ## Example
    ```prose
    let answers = parallel for p in proposers:
      let draft = call p
        question: question
      call p
        question: question
        previous: draft
    ```

    ## Use instead
    ```prose
    let answers = parallel for p in proposers:
      call p
        question: question
    repeat rounds:
      answers = parallel for p in proposers:
        call p
          question: question
          previous: answers
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        yield from _at_calls(self, ctx, rules.OWN_ROUND)
