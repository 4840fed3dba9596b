"""Reading a field of a call result that is text."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.syntax import nodes as n
from prose.syntax.walk import find_all, walk_statements


@rule(code="PK505", name="field-of-text-output", category="contract", severity=Severity.WARNING)
class FieldOfTextOutput(Rule):
    """A field is read from a call result that has no output schema, so it is text.

    ## What it does
    Finds variables whose every assignment is a call to a slot with no
    output schema (its `ensures:` declares no ``object with `f` (type)``
    fields and the call passes no `schema:`), and reports reads of a field
    of them (`evaluation.score`). `.length` is fine: text has a length.

    ## Why is this bad
    Without a schema a model's reply is a string, never parsed (LANGUAGE.md
    4.2), so reading `.score` of it is a run-time error, unless the instance
    file happens to give that service a schema. OpenProse's refine pattern
    does this.

    ## Example
    ```prose
    let evaluation = call evaluator
      result: draft
    if evaluation.score >= threshold:
      return { result: draft }
    ```

    ## Use instead
    Declare the fields in the slot's `ensures:` (or pass `schema:`):
    ```markdown
    - `evaluator`
      - requires: result
      - ensures: evaluation object with `score` (number), `suggestions` (string)
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        text_from: dict[str, tuple[str, n.Call]] = {}
        other: set[str] = set()
        slots = ctx.decl.slots
        for statement in walk_statements(ctx.program.body):
            if isinstance(statement, n.Let | n.Assign):
                names = statement.names if isinstance(statement, n.Let) else (
                    (statement.target.name,) if isinstance(statement.target, n.Name) else ()
                )
                value = statement.value
                for name in names:
                    if (
                        isinstance(value, n.Call)
                        and isinstance(value.target, n.Name)
                        and value.target.name in slots
                        and slots[value.target.name].output_schema is None
                        and value.property("schema") is None
                    ):
                        text_from.setdefault(name, (value.target.name, value))
                    elif not (isinstance(value, n.Literal) and value.value is None):
                        other.add(name)
        candidates = {name: found for name, found in text_from.items() if name not in other}
        if not candidates:
            return
        for member in find_all(ctx.program, n.Member):  # conditions' included
            if isinstance(member.obj, n.Name) and member.obj.name in candidates and member.name != "length":
                slot, call = candidates[member.obj.name]
                yield self.diagnostic(
                    member.span,
                    f"`{member.obj.name}` is the text `{slot}` returns (no output schema), "
                    f"so `.{member.name}` cannot be read",
                    secondary=[Label(call.head if call.head.line else call.span, f"`{slot}` called here")],
                    help=f"declare the fields in the `ensures:` of `{slot}`, e.g. "
                    f"``object with `{member.name}` (type)``, or pass `schema:`",
                )
