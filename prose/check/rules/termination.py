"""Termination rules: every loop has a static bound."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Severity
from prose.lang.loops import LoopShape, loop_shape
from prose.syntax import nodes as n
from prose.syntax.walk import loops, place_root


def static_bound(expr: n.Expr, ctx: CheckContext) -> tuple[bool, int | None]:
    """(statically bounded?, known value) for a repeat count or loop max.

    Bounded: an integer literal, a config key, a parameter, or a member of
    one (including a member of a loop variable that iterates a config key or
    parameter, like `tier.count`). The value is known for literals and for
    config keys with an integer default.
    """
    if isinstance(expr, n.Literal):
        value = expr.value
        if isinstance(value, int) and not isinstance(value, bool):
            return True, value
        return False, None
    root = place_root(expr)
    if not isinstance(root, n.Name):
        return False, None
    name = root.name
    if name in ctx.decl.config:
        kind = (ctx.decl.config[name].type or "integer").lower()
        if root is expr and kind not in ("integer", "int", "number", "any"):
            return False, None  # a string or list config key is no count
        default = ctx.decl.config[name].default
        if root is expr and isinstance(default, int) and not isinstance(default, bool):
            return True, default
        return True, None
    if name in ctx.decl.parameters:
        return True, None
    if root is not expr:
        for binding in ctx.model.bindings:
            if binding.name == name and binding.kind == "loop" and binding.iterates:
                return True, None
    return False, None


def _loops(ctx: CheckContext) -> Iterator[LoopShape]:
    for node in loops(ctx.program.body):
        yield loop_shape(node)


@rule(code="PT301", name="unbounded-repeat", category="termination", severity=Severity.ERROR)
class UnboundedRepeat(Rule):
    """A `repeat` count that is not a static integer >= 0.

    ## What it does
    Checks that the count of every `repeat` and `parallel repeat` is an
    integer literal >= 0, a config key, a parameter, or a member of one.

    ## Why is this bad
    A count computed at run time (for instance from a model's output) has
    no bound the reader or the linter can see: the pattern's cost is
    unbounded.

    ## Example
    ```prose
    let plan = call planner
      brief: brief
    repeat plan.steps:
      call worker
        brief: brief
    ```

    ## Use instead
    Bound it with a config key (and stop early with `break`):
    ```prose
    repeat max_steps:
      call worker
        brief: brief
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for loop in _loops(ctx):
            if loop.count is None:
                continue
            bounded, value = static_bound(loop.count, ctx)
            if not bounded:
                yield self.diagnostic(
                    loop.count.span,
                    "`repeat` count is not statically bounded",
                    help="use an integer literal, a config key or a parameter",
                )
            elif value is not None and value < 0:
                yield self.diagnostic(loop.count.span, f"`repeat` count {value} is negative")


@rule(code="PT302", name="loop-without-max", category="termination", severity=Severity.ERROR)
class LoopWithoutMax(Rule):
    """A `loop` without `(max: N)`.

    ## What it does
    Reports `loop`, `loop until` and `loop while` headers with no `max`.

    ## Why is this bad
    A condition decided by a model may never become true; without a ceiling
    the pattern can run (and spend) forever. The C3 review pattern requires
    a hard round ceiling for exactly this reason.

    ## Example
    ```prose
    loop until verdict.accepted:
      verdict = call critic
        draft: draft
    ```

    ## Use instead
    ```prose
    loop until verdict.accepted (max: max_rounds):
      verdict = call critic
        draft: draft
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for loop in _loops(ctx):
            if loop.bound is None and loop.items is None:
                yield self.diagnostic(
                    loop.node.span,
                    "`loop` has no `(max: N)` bound",
                    help="add `(max: N)` with a literal or a config key",
                )


@rule(code="PT303", name="invalid-max", category="termination", severity=Severity.ERROR)
class InvalidMax(Rule):
    """A loop `max` that is not a positive integer.

    ## What it does
    Checks that `(max: N)` (on `loop`, `for`, `parallel for` and `loop for
    each`) is an integer literal >= 1, a config key whose default is such an
    integer, or a parameter.

    ## Why is this bad
    `max: 0` never runs the body, and a computed maximum is no bound at all.

    ## Example
    ```prose
    loop until done (max: 0):
      done = call worker
        task: task
    ```

    ## Use instead
    ```prose
    loop until done (max: 5):
      done = call worker
        task: task
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for loop in _loops(ctx):
            if loop.max is None:
                continue
            bounded, value = static_bound(loop.max, ctx)
            if not bounded:
                yield self.diagnostic(loop.max.span, "loop `max` is not statically bounded")
            elif value is not None and value < 1:
                yield self.diagnostic(loop.max.span, f"loop `max` must be a positive integer, not {value}")
