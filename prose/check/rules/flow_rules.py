"""Flow rules: loop control, stray clauses, parallel branches, unreachable code."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.findings import (
    BranchWritesOuter,
    LoopControlMisplaced,
    ReadBeforeJoin,
    SiblingsBindSameName,
    StrayClause,
    Unreachable,
)
from prose.check.rule import CheckContext, FindingRule, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.source import Span


@rule(name="loop-control-outside-loop", category="flow", severity=Severity.ERROR)
class LoopControlOutsideLoop(FindingRule):
    """`continue` or `break` outside a loop.

    ## What it does
    Reports `continue` and `break` that are not inside `repeat`, `for`,
    `parallel for` or `loop` (a `block` body starts outside any loop).

    ## Why is this bad
    There is no loop to continue or leave; the statement cannot run.

    ## Example
    ```prose
    if verdict.accepted:
      break
    ```

    ## Use instead
    ```prose
    if verdict.accepted:
      return { result: draft }
    ```
    """

    finding = LoopControlMisplaced


@rule(name="orphan-clause", category="flow", severity=Severity.ERROR)
class OrphanClause(FindingRule):
    """`else`/`elif` without `if`, or `catch`/`finally` without `try`.

    ## What it does
    Reports a clause that does not directly follow the statement it belongs
    to (an `if` chain for `elif`/`else`, a `try` for `catch`/`finally`), for
    instance because of a wrong indentation or a statement in between.

    ## Why is this bad
    The clause has nothing to attach to, so its body would never run the
    way it reads.

    ## Example
    ```prose
    if draft is empty:
      call writer
        brief: brief
    let x = 1
    else:
      call editor
        draft: draft
    ```

    ## Use instead
    Put the `else` right after the `if` body, at the `if`'s indentation.
    """

    finding = StrayClause


@rule(name="branch-result-before-join", category="flow", severity=Severity.ERROR)
class BranchResultBeforeJoin(FindingRule):
    """A `parallel:` branch reads a name that a sibling branch binds.

    ## What it does
    Reports a read, inside one branch of a `parallel:` block, of a name that
    another branch of the same block binds with `let`.

    ## Why is this bad
    Branches run concurrently; their `let`s are published only after the
    join (LANGUAGE.md 4.1), so the value does not exist yet.

    ## Example
    ```prose
    parallel:
      let facts = call researcher
        topic: topic
      let outline = call planner
        facts: facts
    ```

    ## Use instead
    Read it after the block, or make the two calls sequential:
    ```prose
    let facts = call researcher
      topic: topic
    let outline = call planner
      facts: facts
    ```
    """

    finding = ReadBeforeJoin


@rule(name="parallel-same-name", category="flow", severity=Severity.ERROR)
class ParallelSameName(FindingRule):
    """Two branches of a `parallel:` block bind the same name.

    ## What it does
    Reports a branch `let` whose name another branch of the same block also
    binds.

    ## Why is this bad
    Both values are published at the join; which one wins would depend on
    timing.

    ## Example
    ```prose
    parallel:
      let review = call security
        diff: diff
      let review = call style
        diff: diff
    ```

    ## Use instead
    ```prose
    parallel:
      let security_review = call security
        diff: diff
      let style_review = call style
        diff: diff
    ```
    """

    finding = SiblingsBindSameName


@rule(name="parallel-race", category="flow", severity=Severity.ERROR)
class ParallelRace(FindingRule):
    """A parallel branch assigns, records or appends into an outer variable.

    ## What it does
    Reports assignment, `record ... in` and `append ... to` whose target is
    a variable bound outside the `parallel:` block or `parallel for`/
    `parallel repeat` body it runs in.

    ## Why is this bad
    Branches run concurrently: the final value (or the order of a list)
    would depend on timing. LANGUAGE.md 4.1 makes this an error.

    ## Example
    ```prose
    let findings = []
    parallel for reviewer in reviewers:
      let f = call reviewer
        diff: diff
      record f in findings
    ```

    ## Use instead
    Collect the values with a loop in value position (results in input order):
    ```prose
    let findings = parallel for reviewer in reviewers:
      call reviewer
        diff: diff
    ```
    """

    finding = BranchWritesOuter


@rule(name="unreachable-code", category="flow", severity=Severity.WARNING)
class UnreachableCode(FindingRule):
    """Statements after an unconditional `return`, `throw`, `break` or `continue`.

    ## What it does
    Reports the first statement that follows, in the same block, a
    statement that always leaves it.

    ## Why is this bad
    The code never runs; usually a misplaced `return` or a wrong indentation.

    ## Example
    ```prose
    return { result: draft }
    call logger
      message: "done"
    ```

    ## Use instead
    Move the statement before the `return`, or remove it.
    """

    finding = Unreachable


@rule(code="PF207", name="wait-for-all-then-pick-first", category="flow", severity=Severity.WARNING)
class WaitForAllThenPickFirst(Rule):
    """A `parallel for` waits for every branch, then a loop picks the first good result.

    ## What it does
    Reports `let xs = parallel for ...` with the default `"all"` strategy
    when a later `for x in xs:` loop returns from inside an `if`: the
    pattern of a race written so that it cannot win early.

    ## Why is this bad
    Every branch runs to completion (and is paid for) before the first
    acceptable result is taken; the slowest candidate sets the latency.
    OpenProse's race pattern does this.

    ## Example
    ```prose
    let attempts = parallel for candidate in candidates:
      call candidate
        task_brief: task_brief
    for attempt in attempts:
      if attempt is not null:
        return { result: attempt }
    ```

    ## Use instead
    Check acceptability inside the branch (`throw` when it fails) and take
    the first success, cancelling the rest:
    ```prose
    let winner = parallel for candidate in candidates ("first", on-fail: "ignore"):
      call candidate
        task_brief: task_brief
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        from prose.syntax import nodes as n
        from prose.syntax.walk import walk_statements

        collected: dict[str, n.For] = {}
        for statement in walk_statements(ctx.program.body):
            if (
                isinstance(statement, n.Let)
                and isinstance(statement.value, n.For)
                and statement.value.parallel
                and _strategy(statement.value.modifiers) == "all"
            ):
                collected[statement.names[0]] = statement.value
            elif (
                isinstance(statement, n.For)
                and not statement.parallel
                and isinstance(statement.iterable, n.Name)
                and statement.iterable.name in collected
                and _returns_under_if(statement.body)
            ):
                loop = collected.pop(statement.iterable.name)
                yield self.diagnostic(
                    _header(loop),
                    f"every branch runs to completion before the loop at line {statement.line} "
                    "picks the first acceptable result",
                    secondary=[Label(statement.span, "the first acceptable result is picked here")],
                    help='use ("first") and check acceptability inside the branch, '
                    "so the first success wins and the rest are cancelled",
                )


def _strategy(modifiers: tuple[object, ...]) -> str:
    from prose.syntax import nodes as n

    for modifier in modifiers:
        if isinstance(modifier, n.Modifier) and modifier.key is None and isinstance(modifier.value, n.String):
            return modifier.value.text
    return "all"


def _returns_under_if(body: tuple[object, ...]) -> bool:
    from prose.syntax import nodes as n
    from prose.syntax.walk import walk_statements

    for statement in body:
        if isinstance(statement, n.If):
            for inner in walk_statements(tuple(s for b in statement.branches for s in b.body)):
                if isinstance(inner, n.Return):
                    return True
    return False


def _header(loop: object) -> Span:
    from prose.syntax import nodes as n

    assert isinstance(loop, n.For)
    span = loop.span
    return Span(span.file, span.line, span.column, span.line, span.column + len("parallel for"))
