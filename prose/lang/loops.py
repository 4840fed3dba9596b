"""What a loop is, in one shape: its variables, what bounds it, its condition and body.

Every construct that runs a body more than once (`repeat`, `for`, `loop`, `loop for
each`, their `parallel` forms and a pipeline's stages) is described here by one
`LoopShape`, and every question "what bounds this loop?" reads it: the termination
rules (PT301-PT303), `every loop is bounded by` (PT304), the data-flow analysis (what
the iterations depend on) and the interpreter (how many iterations run).

A loop runs at most:

- `count` times (`repeat N`): exactly N;
- `max` times (`loop ... (max: N)`, `for x in xs (max: N)`): N is a ceiling;
- once per item of `items` (`for x in xs`, a pipeline over `xs`) when it has no `max`:
  the list's length, which nothing in the pattern bounds when a model made the list.

`loop` has no items and no count: without `max` it has no bound at all (PT302).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from prose.syntax import nodes as n

Keyword = Literal["repeat", "for", "loop for each", "loop", "pipeline"]

# The node classes that are loops: the statements in `nodes.LoopNode` and the pipeline,
# whose stages each run their body once per item.
LoopLike = n.Repeat | n.For | n.Loop | n.Pipeline


@dataclass(frozen=True, slots=True)
class LoopShape:
    """One loop, whatever its spelling.

    `variables` are the names each iteration binds; `count` is `repeat`'s count,
    `max` the `(max: N)` ceiling, `items` the list a `for` or a pipeline iterates;
    `condition` is `loop until/while`'s (`negated` for `until`); `bodies` are the
    statement blocks run per iteration (a pipeline has one per stage)."""

    node: LoopLike
    keyword: Keyword
    variables: tuple[str, ...]
    count: n.Expr | None
    max: n.Expr | None
    items: n.Expr | None
    condition: n.Condition | None
    negated: bool
    bodies: tuple[tuple[n.Stmt, ...], ...]
    parallel: bool

    @property
    def bound(self) -> n.Expr | None:
        """The expression that caps the number of iterations (`count`, else `max`), or
        None when only the length of `items` bounds it, or nothing does."""
        return self.count if self.count is not None else self.max

    @property
    def bounded_by_items(self) -> bool:
        """Whether the only bound is the length of the list it iterates."""
        return self.bound is None and self.items is not None

    @property
    def spelling(self) -> str:
        """How the loop's header starts, for messages: `parallel for`, `loop`, ..."""
        return f"parallel {self.keyword}" if self.parallel and self.keyword != "pipeline" else self.keyword


def loop_shape(node: LoopLike) -> LoopShape:
    """The one shape of a loop node."""
    if isinstance(node, n.Repeat):
        return LoopShape(node, "repeat", (node.var,) if node.var else (), node.count, None, None,
                         None, False, (node.body,), node.parallel)
    if isinstance(node, n.For):
        variables = (node.var, node.index_var) if node.index_var else (node.var,)
        return LoopShape(node, "loop for each" if node.each else "for", variables, None, node.max,
                         node.iterable, None, False, (node.body,), node.parallel)
    if isinstance(node, n.Loop):
        return LoopShape(node, "loop", (node.var,) if node.var else (), None, node.max, None,
                         node.condition, node.kind == "until", (node.body,), False)
    parallel = any(stage.op == "pmap" for stage in node.stages)
    return LoopShape(node, "pipeline", tuple(p for stage in node.stages for p in stage.params),
                     None, None, node.source, None, False,
                     tuple(stage.body for stage in node.stages), parallel)
