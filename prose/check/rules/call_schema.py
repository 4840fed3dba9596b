"""A call's `schema:` names a type the run does not know."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Severity
from prose.lang.schema_types import known_words, schema_for
from prose.lang.types import problem as type_problem
from prose.syntax import nodes as n
from prose.syntax.walk import children


@rule(code="PK507", name="unknown-schema-type", category="contract", severity=Severity.ERROR)
class UnknownSchemaType(Rule):
    """A call's `schema:` gives a field a type the run does not know.

    ## What it does
    Checks every `schema:` property written as an object literal (of a `call`
    or a session): each field's type must be a type word of
    `prose.lang.schema_types`, the one list the run builds its JSON schema
    from: `string`, `number`, `integer`, `boolean`, `object`, `array`, `null`
    (and `str`, `text`, `int`, `float`, `bool`, `dict`, `list`), `any`,
    `T[]` for a list of T, `T?` for an optional T, unions `A | B` or `A or B`,
    enums `'a' | 'b'` and objects `{ name: T, ... }` (the type language of
    `prose.lang.types`).

    ## Why is this bad
    The run refuses the schema when it makes the call, after the calls
    before it have been paid for.

    ## Example
    ```prose
    let verdict = call critic
      draft: draft
      schema: { accept: "bool", notes: "strng" }
    ```

    ## Use instead
    ```prose
    let verdict = call critic
      draft: draft
      schema: { accept: "bool", notes: "string | null" }
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for prop in _schema_properties(ctx.program.body):
            if not isinstance(prop.value, n.Object):
                continue  # a variable or an expression: the run checks what it holds
            for entry in prop.value.entries:
                word = _literal_text(entry.value)
                if word is None and not isinstance(entry.value, n.Literal | n.Object | n.Array):
                    continue
                if word is not None and schema_for(word) is not None:
                    continue
                message = (f"field `{entry.key}` of `schema:` has unknown type `{word}`"
                           + _why(word)
                           if word is not None else
                           f"field `{entry.key}` of `schema:` is not a type word (a string)")
                yield self.diagnostic(entry.value.span, message,
                                      help=f"use one of {known_words()}, `T[]`, `T?`, `A | B`, "
                                      "`'a' | 'b'` (an enum) or `{ name: T }` (an object)")


def _schema_properties(body: tuple[n.Stmt, ...]) -> Iterator[n.Property]:
    stack: list[n.Node] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, n.Call | n.Session):
            prop = node.property("schema")
            if prop is not None:
                yield prop
        stack.extend(children(node))


def _literal_text(expr: n.Expr) -> str | None:
    if isinstance(expr, n.String) and all(isinstance(part, str) for part in expr.parts):
        return expr.text
    return None


def _why(word: str) -> str:
    """What the type language says of a type it cannot read, past "unknown type `w`" (a
    did-you-mean, or where the text stops parsing)."""
    why = type_problem(word) or ""
    if why.startswith("unknown type"):
        return why[why.index(";"):] if ";" in why else ""
    return f" ({why})" if why else ""
