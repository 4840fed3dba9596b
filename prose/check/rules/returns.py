"""What a slot may return: `` `A` returns `field` as one of "x", "y" ``."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.invariant_checks import forms
from prose.check.rule import CheckContext, Rule, rule
from prose.check.value_types import value_types
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang import types as t
from prose.lang.invariants import ReturnsOneOf


def _declared(found: t.Type, path: tuple[str, ...]) -> tuple[t.Type | None, str]:
    """The type at `path` of a value of type `found` (through lists), or None and why."""
    for depth, name in enumerate(path):
        while isinstance(t.without_null(found), t.ListOf):
            found = t.item_type(found)
        field = t.field_type(found, name)
        if field is None:
            return None, f"declares no field `{'.'.join(path[:depth + 1])}`"
        found = field
    while isinstance(t.without_null(found), t.ListOf):
        found = t.item_type(found)
    return found, ""


@rule(code="PH637", name="returns-one-of-unproven",
      category="contract", severity=Severity.ERROR, judges_invariants=True)
class ReturnsOneOfUnproven(Rule):
    """A slot may return a value outside the ones an invariant lists.

    ## What it does
    For `` `oversight` returns `decision` as one of "continue", "abort" ``
    (a path through lists too: `` `planner` returns `subtasks.kind` as one of
    "code", "docs" ``), checks that the slot's declared output type (its
    `ensures` fields) makes the value at that path an enum of those values
    only, null included only if listed. Reported at every call of the slot.
    The run time checks each reply again and stops the run before the reply
    is used (R060), and `prose audit` reads the recorded outputs (rule
    `returns-one-of`).

    ## Why is this bad
    A decision the program branches on (`if ruling.decision == "approve"`)
    must be one of the values the program handles; a free-text field lets a
    model answer "approve, mostly" and fall through every branch.

    ## Example
    ```markdown
    - `oversight`
      - ensures: decision object with `decision` (string)
    ```

    ## Use instead
    ```markdown
    - `oversight`
      - ensures: decision object with `decision` ("continue" | "abort")
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        types = value_types(ctx.decl, ctx.program)
        for item in forms(ctx, ReturnsOneOf):
            form = item.form
            path = ".".join(form.path)
            declared = types.slot_types.get(form.slot)
            found, why = (_declared(declared, form.path) if declared is not None
                          else (None, "declares no typed output (`ensures` fields)"))
            problem = why
            if found is not None:
                options = t.enum_values(found)
                if options is None:
                    problem = f"declares `{path}` as {t.show(found)}, not an enum"
                else:
                    extra = [t.show(t.Enum((o,))) for o in options if not any(
                        o == v and type(o) is type(v) for v in form.values)]
                    if t.accepts(found, None) and None not in form.values:
                        extra.append("null")
                    if extra:
                        problem = (f"declares `{path}` as {t.show(found)}, which also allows "
                                   f"{', '.join(extra)}")
            if not problem:
                continue
            for site in sorted(ctx.flow.calls.values(),
                               key=lambda s: (s.call.span.line, s.call.span.column)):
                if form.slot in site.slots:
                    call = site.call
                    yield self.diagnostic(
                        call.head if call.head.line else call.span,
                        f"`{form.slot}` returns `{path}` as one of the listed values, but its "
                        f"output type {problem}",
                        secondary=[Label(item.span, f"invariant: {item.text.strip()}")],
                        help=f"declare `{form.path[-1]}` in `{form.slot}`'s ensures as an enum "
                        "of exactly those values")
