"""Condition rules: empty conditions, judges with nothing to look at, parallel modifiers."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.findings import BlindJudge, EmptyConditionText
from prose.check.rule import CheckContext, FindingRule, Rule, rule
from prose.diagnostics.model import Diagnostic, Severity
from prose.syntax import nodes as n
from prose.syntax.walk import walk_statements


@rule(name="empty-condition", category="conditions", severity=Severity.ERROR)
class EmptyCondition(FindingRule):
    """A condition with no text.

    ## What it does
    Reports `if`, `elif`, `loop until/while` and `choice` whose condition is
    empty once the `**` markers are removed.

    ## Why is this bad
    There is nothing to evaluate, deterministically or by a judge.

    ## Example
    ```prose
    if ** **:
      break
    ```

    ## Use instead
    ```prose
    if **the draft meets the brief**:
      break
    ```
    """

    finding = EmptyConditionText


@rule(name="discretion-without-names", category="conditions", severity=Severity.ERROR)
class DiscretionWithoutNames(FindingRule):
    """A discretion condition that mentions no value in scope.

    ## What it does
    Reports a condition that is not a deterministic predicate (so a judge
    model decides it) and whose text names no variable, parameter or config
    key in scope. The judge receives only the values of the names the text
    mentions (LANGUAGE.md 4.5), so it would decide blind.

    ## Why is this bad
    The judgement cannot depend on anything the pattern computed; it is a
    coin flip with a model's cost.

    ## Example
    ```prose
    let draft = call writer
      brief: brief
    if **the result is good enough**:
      return { result: draft }
    ```

    ## Use instead
    Name the value the judge must look at:
    ```prose
    if **draft is good enough for the brief**:
      return { result: draft }
    ```
    """

    finding = BlindJudge


STRATEGIES = ("all", "first", "any")
ON_FAIL = ("fail-fast", "continue", "ignore")


@rule(code="PC403", name="invalid-parallel-modifiers",
      category="conditions", severity=Severity.ERROR)
class InvalidParallelModifiers(Rule):
    """Parallel modifiers that do not make sense.

    ## What it does
    Checks `(...)` after `parallel`, `parallel for` and `parallel repeat`:
    at most one strategy (`"all"`, `"first"` or `"any"`), `count` only with
    `"any"` and an integer >= 1, `on-fail` one of `"fail-fast"`,
    `"continue"`, `"ignore"`, no other keys, and no modifiers on a loop that
    is not parallel.

    ## Why is this bad
    A misspelled or contradictory modifier is silently ignored by an
    LLM-interpreted runtime; here it would change which results come back.

    ## Example
    ```prose
    let fastest = parallel for c in candidates ("first", count: 2):
      call c
        task: task
    ```

    ## Use instead
    ```prose
    let two = parallel for c in candidates ("any", count: 2):
      call c
        task: task
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for statement in walk_statements(ctx.program.body):
            if isinstance(statement, n.Parallel):
                yield from self._modifiers(statement.modifiers, True)
            elif isinstance(statement, n.For | n.Repeat):
                yield from self._modifiers(statement.modifiers, statement.parallel)

    def _modifiers(self, modifiers: tuple[n.Modifier, ...], parallel: bool) -> Iterable[Diagnostic]:
        if not modifiers:
            return
        if not parallel:
            yield self.diagnostic(modifiers[0].span, "modifiers are only allowed on parallel loops and blocks")
            return
        strategy = "all"
        strategies = [m for m in modifiers if m.key is None]
        for extra in strategies[1:]:
            yield self.diagnostic(extra.span, "more than one parallel strategy")
        if strategies:
            value = strategies[0].value
            text = value.text if isinstance(value, n.String) else None
            if text not in STRATEGIES:
                yield self.diagnostic(value.span, f"unknown parallel strategy; expected one of {_quoted(STRATEGIES)}")
            else:
                strategy = text
        for modifier in modifiers:
            if modifier.key is None:
                continue
            value = modifier.value
            if modifier.key == "count":
                if strategy != "any":
                    yield self.diagnostic(modifier.span, '`count` needs the `"any"` strategy')
                if isinstance(value, n.Literal) and (
                    not isinstance(value.value, int) or isinstance(value.value, bool) or value.value < 1
                ):
                    yield self.diagnostic(value.span, "`count` must be an integer >= 1")
            elif modifier.key == "on-fail":
                text = value.text if isinstance(value, n.String) else None
                if text not in ON_FAIL:
                    yield self.diagnostic(value.span, f"`on-fail` must be one of {_quoted(ON_FAIL)}")
            else:
                yield self.diagnostic(modifier.span, f"unknown parallel modifier `{modifier.key}`")


def _quoted(values: tuple[str, ...]) -> str:
    return ", ".join(f'"{value}"' for value in values)
