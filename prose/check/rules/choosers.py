"""`` no model chooses `kept` `` (PH641): which values a name holds is the program's choice.

A static property of the program, proven whole: every binding of the name (`let`, `=`,
`record`/`append` into it) is an expression with no call, `do`, session or `choice` in
it, reads no name that such a thing bound whole (directly, or through another name
bound only to it), and is not made in the arm of a condition a model decides (a
discretion condition of `if`/`elif`/`loop`, an option of `choice`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prose.check.invariant_checks import forms
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang.invariants import ChosenByCode
from prose.syntax import nodes as n
from prose.syntax.walk import children, find_all

_MODEL_VALUES = (n.Call, n.Do, n.Session, n.Choice)


def _bindings(program: n.Program) -> Iterator[tuple[str, n.Expr, n.Node, bool]]:
    """(name, value, statement, decided by a model) for every binding in the program."""
    def walk(node: n.Node, judged: bool) -> Iterator[tuple[str, n.Expr, n.Node, bool]]:
        if isinstance(node, n.Let):
            for name in node.names:
                yield name, node.value, node, judged
        elif isinstance(node, n.Assign) and isinstance(node.target, n.Name):
            yield node.target.name, node.value, node, judged
        elif isinstance(node, n.Append) and isinstance(node.target, n.Name):
            yield node.target.name, node.value, node, judged
        if isinstance(node, n.Branch | n.Loop) and node.condition is not None:
            inner = judged or node.condition.predicate is None
            for child in children(node):
                yield from walk(child, inner if child is not node.condition else judged)
            return
        if isinstance(node, n.Option):
            for child in children(node):
                yield from walk(child, True)
            return
        for child in children(node):
            yield from walk(child, judged)
    return walk(program, False)


def _model_bound(bound: dict[str, list[n.Expr]]) -> set[str]:
    """The names some binding of which is a model's value whole (a call, `do`, session or
    `choice`), or another such name (an alias of one)."""
    found = {name for name, values in bound.items()
             if any(isinstance(value, _MODEL_VALUES) for value in values)}
    grew = True
    while grew:
        grew = False
        for name, values in bound.items():
            if name not in found and any(isinstance(value, n.Name) and value.name in found
                                         for value in values):
                found.add(name)
                grew = True
    return found


@rule(code="PH641", name="chosen-by-a-model",
      category="contract", severity=Severity.ERROR, judges_invariants=True)
class ChosenByAModel(Rule):
    """A value an invariant says no model chooses is bound from a model's decision.

    ## What it does
    For `` no model chooses `kept` ``, reports every binding of `kept` that a
    model decides: its value holds a call, `do`, session or `choice`, or reads
    a name a call, `do`, session or `choice` bound whole (`let pick = call
    chooser`, then `kept = pick`), or the binding is made in an arm of a
    discretion condition (`if **the line looks promising**:`) or a `choice`
    option. The values may hold model output (the scores that `top` ranks);
    which of them the name holds must be computed by the program.

    ## Why is this bad
    A pattern that says the program decides (tree search keeps the best lines
    by score) and lets a model pick the survivors has a model's judgement
    where the reader expects arithmetic: its choice cannot be replayed or
    audited from the scores.

    ## Example
    ```prose
    let pick = call chooser
      lines: candidates
    kept = pick
    ```

    ## Use instead
    ```prose
    kept = top(candidates, beam, by: "score")
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        wanted = [found for found in forms(ctx, ChosenByCode)]
        if not wanted:
            return
        bindings = list(_bindings(ctx.program))
        bound: dict[str, list[n.Expr]] = {}
        for name, value, statement, _ in bindings:
            if not isinstance(statement, n.Append):  # a list a model's value is added to
                bound.setdefault(name, []).append(value)  # is not that value whole
        model_bound = _model_bound(bound)
        for found in wanted:
            label = Label(found.span, f"invariant: {found.text.strip()}")
            for name, value, statement, judged in bindings:
                if name != found.form.name:
                    continue
                why = _why(value, judged, model_bound)
                if why:
                    yield self.diagnostic(
                        statement.span, f"no model chooses `{name}`, but {why}",
                        secondary=[label],
                        help="compute it in the program from the values (`top`, `sort`, "
                        "`max`, a deterministic condition)")


def _why(value: n.Expr, judged: bool, model_bound: set[str]) -> str | None:
    if judged:
        return "this binding is made where a model decides (a discretion condition or `choice`)"
    made = next(iter(find_all(value, _MODEL_VALUES)), None)
    if made is not None:
        return f"its value holds a {type(made).__name__.lower()}"
    read = next((name.name for name in find_all(value, n.Name) if name.name in model_bound),
                None)
    if read is not None:
        return f"its value reads `{read}`, which a model's value is bound to whole"
    return None
