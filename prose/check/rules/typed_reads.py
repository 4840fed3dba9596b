"""Reads the declared types rule out: a field the schema does not declare, a literal
outside an enum."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.rule import CheckContext, Rule, rule
from prose.check.value_types import ValueTypes, value_types
from prose.diagnostics.model import Diagnostic, Severity
from prose.lang import types as t
from prose.source import Span
from prose.spelling import closest
from prose.syntax import nodes as n
from prose.syntax.walk import find_all

_SCALARS = ("string", "number", "integer", "boolean")


def _types(ctx: CheckContext) -> ValueTypes:
    return value_types(ctx.decl, ctx.program)


def _name_span(member: n.Member) -> Span:
    """The span of `.name` in `obj.name` (the part a fix changes)."""
    end = member.span
    return Span(end.file, end.end_line, max(end.end_column - len(member.name), 1),
                end.end_line, end.end_column)


@rule(code="PK520", name="unknown-field", category="contract", severity=Severity.ERROR)
class UnknownField(Rule):
    """A field is read that the value's declared type does not have.

    ## What it does
    Knows the type of every call result whose slot declares an output schema
    (``ensures: verdict object with `ok` (boolean)``) or whose call passes a
    `schema:`, of every config key with a type, and of what is read from them
    (nested fields, list items, loop variables over a typed list). A read of a
    field the type does not declare is an error, with the closest declared
    field as the fix; so is a field read of a value the type says is text, a
    number, a boolean or a list (only `.length` is read from those). A dotted
    name in a judge's condition (`if **verdict.no_issue_found**:`) is checked
    the same way: the judge would be shown null.

    ## Why is this bad
    The run validates every reply against the schema, so the field is never
    there: the read gives null (a missing key reads null), and a loop that
    waits for it runs to its bound.

    ## Example
    ```prose
    let verdict = call critic
      draft: draft
    if verdict.no_issue_found:
      return { result: draft }
    ```
    with ``ensures: verdict object with `no_issues_found` (boolean)``.

    ## Use instead
    ```prose
    if verdict.no_issues_found:
      return { result: draft }
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        types = _types(ctx)
        yield from self._judged(ctx, types)
        for read in types.reads():
            holder = t.without_null(read.holder)
            if read.name == "length":
                continue
            fields = t.field_names(holder)
            if isinstance(holder, t.Record) and read.name not in fields:
                near = closest(read.name, fields)
                yield self.diagnostic(
                    _name_span(read.node),
                    f"`{_path(read.node.obj)}` has no field `{read.name}`; its type is "
                    f"`{t.show(holder)}`",
                    help=f"did you mean `{near}`?" if near else
                    f"read one of {', '.join(f'`{f}`' for f in fields)}, or declare "
                    f"`{read.name}` in the schema",
                )
            elif isinstance(holder, t.Enum | t.ListOf) or (
                isinstance(holder, t.Base) and holder.name in _SCALARS
            ):
                yield self.diagnostic(
                    _name_span(read.node),
                    f"`{_path(read.node.obj)}` is `{t.show(holder)}`, which has no fields: "
                    f"`.{read.name}` cannot be read",
                    help="only `.length` is read from text and lists",
                )


    def _judged(self, ctx: CheckContext, types: ValueTypes) -> Iterable[Diagnostic]:
        """A dotted name in a judge's condition (`if **verdict.no_issue_found**:`): the judge
        is shown its value, null when the field is not declared."""
        for condition in find_all(ctx.program, n.Condition):
            if condition.predicate is not None:
                continue
            for mention in condition.mentions:
                path = mention.split(".")
                holder = types.type_of(n.Name(path[0]))
                for at, name in enumerate(path[1:], start=1):
                    fields = t.field_names(holder)
                    if isinstance(t.without_null(holder), t.Record) and name not in fields:
                        near = closest(name, fields)
                        yield self.diagnostic(
                            condition.span,
                            f"`{'.'.join(path[:at])}` has no field `{name}`; its type is "
                            f"`{t.show(t.without_null(holder))}`",
                            help=f"did you mean `{near}`?" if near else None,
                        )
                        break
                    holder = t.field_type(holder, name) or t.ANY


@rule(code="PK521", name="enum-mismatch", category="contract", severity=Severity.ERROR)
class EnumMismatch(Rule):
    """A value of an enum type is compared with a literal outside the enum.

    ## What it does
    Finds `==` and `!=` comparisons (in `if`, `loop until`, `let`, anywhere)
    between a value whose declared type is an enum (``ensures: verdict object
    with `verdict` ("PASS" | "FAIL")``, a config key of type `"fast" | "slow"`)
    and a literal that is none of its values.

    ## Why is this bad
    The run re-asks a reply until it is one of the enum's values, so the
    comparison is always false (`==`) or always true (`!=`): the branch it
    guards is dead, or always taken.

    ## Example
    ```prose
    if review.verdict == "PASSED":
      return { result: draft }
    ```

    ## Use instead
    ```prose
    if review.verdict == "PASS":
      return { result: draft }
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        types = _types(ctx)
        for compare in find_all(ctx.program, n.Compare):
            if compare.op not in ("==", "!="):
                continue
            for value, other in ((compare.left, compare.right), (compare.right, compare.left)):
                options = t.enum_values(types.type_of(value))
                literal = _literal(other)
                if options is None or literal is None:
                    continue
                if any(_same(literal[0], option) for option in options):
                    continue
                shown = [_show(option) for option in options]
                near = closest(str(literal[0]), [str(o) for o in options if isinstance(o, str)])
                yield self.diagnostic(
                    other.span,
                    f"`{_path(value)}` is one of {', '.join(shown)}; it is never "
                    f"{_show(literal[0])}, so this comparison is always "
                    f"{'false' if compare.op == '==' else 'true'}",
                    help=f'did you mean "{near}"?' if near else
                    f"compare with one of {', '.join(shown)}",
                )


def _literal(expr: n.Expr) -> tuple[t.Scalar] | None:
    if isinstance(expr, n.String) and all(isinstance(part, str) for part in expr.parts):
        return (expr.text,)
    if isinstance(expr, n.Literal) and expr.value is not None:
        return (expr.value,)
    return None


def _same(value: t.Scalar, option: t.Scalar) -> bool:
    return t.accepts(t.Enum((option,)), value)


def _show(value: t.Scalar) -> str:
    return t.show(t.Enum((value,)))


def _path(expr: n.Expr) -> str:
    if isinstance(expr, n.Name):
        return expr.name
    if isinstance(expr, n.Member):
        return f"{_path(expr.obj)}.{expr.name}"
    if isinstance(expr, n.Index):
        return f"{_path(expr.obj)}[...]"
    return "the value"
