"""Invariants about loops, list growth and unmerged results."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.invariant_checks import forms, of_rule, where
from prose.check.rule import CheckContext, Rule, rule
from prose.check.rules.termination import static_bound
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang import policy as rules
from prose.lang.invariants import LoopsBoundedBy, OnlyGrows, ReturnsUnmerged
from prose.lang.loops import LoopShape, loop_shape
from prose.syntax import nodes as n
from prose.syntax.walk import (
    loops,
    root_name,
    statements_in_loops,
    terminal_returns,
    walk_statements,
)


@rule(code="PT304", name="loop-not-bounded-by-config",
      category="termination", severity=Severity.ERROR, judges_invariants=True)
class LoopNotBoundedByConfig(Rule):
    """A loop is not bounded by the config key an invariant names.

    ## What it does
    For `` every loop is bounded by `max_rounds` `` (or by one of several keys,
    `` `depth`, `k` or `beam` ``), checks every loop of
    every kind (`repeat`, `loop`, `for`, `parallel for`, `loop for each`
    and pipelines): its count or `max` is that config key, or an integer
    literal no larger than its default; a `for` or pipeline with no `max`
    over a list a model made (a value carrying slot output) is a finding,
    since the model then decides how many iterations (or parallel workers)
    run. A list the pattern or its caller wrote needs no `max`.

    ## Why is this bad
    The invariant tells operators that one knob caps the cost of a run; a
    loop bounded by anything else escapes it.

    ## Example
    ```prose
    loop until verdict.accepted (max: 10):
      verdict = call critic
        draft: draft
    ```
    with `` every loop is bounded by `max_rounds` `` and a default of 3, or
    ```prose
    let tasks = call planner
      brief: brief
    parallel for task in tasks:
      call worker
        task: task
    ```

    ## Use instead
    ```prose
    loop until verdict.accepted (max: max_rounds):
      verdict = call critic
        draft: draft
    parallel for task in tasks (max: max_rounds):
      call worker
        task: task
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for item in forms(ctx, LoopsBoundedBy):
            keys = [key for key in item.form.keys if key in ctx.decl.config]
            if not keys:
                continue
            key = keys[0]
            named = " or ".join(f"`{key}`" for key in keys)
            defaults = [default for key in keys
                        if isinstance(default := ctx.decl.config[key].default, int)]
            invariant = Label(item.span, f"invariant: {item.text.strip()}")
            for loop in map(loop_shape, loops(ctx.program.body)):
                bound = loop.bound
                if bound is None and loop.items is not None:
                    yield from self._items(ctx, loop, loop.items, key, named, invariant)
                    continue
                if bound is None:
                    continue  # PT302 reports it
                if isinstance(bound, n.Name) and bound.name in keys:
                    continue
                _, value = static_bound(bound, ctx)
                if (isinstance(bound, n.Literal) and value is not None and defaults
                        and value <= max(defaults)):
                    continue
                yield self.diagnostic(bound.span, f"this loop is not bounded by {named}",
                                      secondary=[invariant])

    def _items(
        self, ctx: CheckContext, loop: LoopShape, items: n.Expr, key: str, named: str,
        invariant: Label,
    ) -> Iterable[Diagnostic]:
        """A loop bounded only by its list's length: a finding when a model made the list
        (its length is then the model's to choose, not the pattern's)."""
        counted = ctx.flow.iteration_counts.get(id(loop.node))
        slots = sorted(ctx.flow.provenance(counted)) if counted is not None else []
        if not slots:
            return  # a list the pattern or its caller wrote: the caller sets its length
        made_by = " and ".join(f"`{slot}`" for slot in slots)
        fix = (f"add `(max: {key})` to the loop" if loop.keyword != "pipeline"
               else f"iterate it with `for x in ... (max: {key})` instead")
        yield self.diagnostic(
            items.span,
            f"this `{loop.spelling}` runs once per item of a list made by {made_by}: "
            f"it is not bounded by {named}",
            secondary=[invariant],
            help=fix,
        )


@rule(code="PK503", name="only-grows-violated",
      category="contract", severity=Severity.ERROR, judges_invariants=True)
class OnlyGrowsViolated(Rule):
    """A list declared to only grow is reassigned or rebuilt.

    ## What it does
    For `` `history` only grows ``, reports any assignment to `history`
    (or a second `let`) after its first binding; only `record ... in` and
    `append ... to` may change it.

    ## Why is this bad
    An audit trail that can be rebuilt can lose entries; the invariant
    promises it cannot.

    ## Example
    ```prose
    let history = []
    record verdict in history
    history = [verdict]
    ```

    ## Use instead
    ```prose
    let history = []
    record verdict in history
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        looped = statements_in_loops(ctx.program.body)
        for item in forms(ctx, OnlyGrows):
            name = item.form.name
            first: n.Let | None = None
            for statement in walk_statements(ctx.program.body):
                if isinstance(statement, n.Let) and name in statement.names:
                    if first is None:
                        first = statement
                        if id(statement) in looped:
                            yield self.diagnostic(
                                statement.head if statement.head.line else statement.span,
                                f"`{name}` is bound inside a loop, so it starts empty again on "
                                "every iteration; bind it once before the loop",
                                secondary=[Label(item.span, f"invariant: {item.text.strip()}")],
                            )
                        continue
                    target_span = statement.head if statement.head.line else statement.span
                elif isinstance(statement, n.Assign) and root_name(statement.target) == name:
                    target_span = statement.span
                else:
                    continue
                yield self.diagnostic(
                    target_span,
                    f"`{name}` is rebuilt here, but it may only grow (`record`/`append`)",
                    secondary=[Label(item.span, f"invariant: {item.text.strip()}")],
                )


@rule(code="PK504", name="returns-merged",
      category="contract", severity=Severity.ERROR, judges_invariants=True)
class ReturnsMergedViolated(Rule):
    """The result does not return two slots' outputs unmerged.

    ## What it does
    For `` the result returns `A` and `B` unmerged ``, checks that every
    `return` ending the pattern carries outputs of both `A` and `B`, and
    that no call receives values carrying both (nothing synthesises them).

    ## Why is this bad
    Patterns like proposer-adversary exist to hand the disagreement to the
    caller; a call that sees both sides is a hidden judge.

    ## Example
    ```prose
    let verdict = call judge
      proposal: proposal
      attack: attack
    return { result: verdict }
    ```

    ## Use instead
    ```prose
    return { result: { proposal: proposal, attack: attack } }
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for item in forms(ctx, ReturnsUnmerged):
            form = item.form
            label = Label(item.span, f"invariant: {item.text.strip()}")
            returns = {id(statement): statement for statement in terminal_returns(ctx.program.body)}
            for statement, value in ctx.flow.returns:
                if id(statement) not in returns:
                    continue
                carried = ctx.flow.provenance(value)
                missing = [slot for slot in (form.a, form.b) if slot not in carried]
                if missing:
                    yield self.diagnostic(
                        statement.span,
                        "this return does not carry the output of "
                        + " and ".join(f"`{slot}`" for slot in missing),
                        secondary=[label],
                    )
                    continue
                rewritten = [slot for slot in (form.a, form.b) if not ctx.flow.reaches_unchanged(value, slot)]
                if rewritten:
                    yield self.diagnostic(
                        statement.span,
                        "this return merges the output of "
                        + " and ".join(f"`{slot}`" for slot in rewritten)
                        + " into new text instead of returning it as it came back",
                        secondary=[label],
                    )
            for found in of_rule(ctx, rules.UNMERGED):
                if found.violation.line != item.span.line:
                    continue
                yield self.diagnostic(
                    where(found),
                    f"this call receives outputs of both `{form.a}` and `{form.b}`: it merges them",
                    secondary=[label],
                )


