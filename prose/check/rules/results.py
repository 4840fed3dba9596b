"""What a pattern returns: `` the result satisfies `EXPR` `` (PH638)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from prose.check.rule import CheckContext, Rule, rule
from prose.check.rules.expressions import impossible_operation
from prose.diagnostics.model import Diagnostic, Severity
from prose.lang.invariants import ResultSatisfies
from prose.lang.results import parse_result_expression
from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.walk import find_all


def _name_span(span: Span, text: str, name: str) -> Span:
    """Where `name` is written inside the bullet's expression (the whole bullet when the
    bullet runs over several lines, whose columns the text no longer has)."""
    start = text.find("`")
    found = re.search(rf"(?<![\w.]){re.escape(name)}\b", text[start + 1:]) if start >= 0 else None
    if found is None or span.line != span.end_line:
        return span
    column = span.column + start + 1 + found.start()
    return Span(span.file, span.line, column, span.line, column + len(name))


@rule(code="PH638", name="result-satisfies-unsound", category="contract", severity=Severity.ERROR)
class ResultSatisfiesUnsound(Rule):
    """A `the result satisfies` invariant is not a pure expression over `### Returns`.

    ## What it does
    For `` the result satisfies `EXPR` `` (optionally followed by a gloss in
    parentheses), checks that `EXPR` parses as an expression of the language
    (the operators and built-ins of a program's conditions) that holds no
    call, `do` or `shuffle`, and that every name it reads is a key of the
    pattern's `### Returns` section, a parameter or a config key (those read
    the run's own value: `threshold`), and that no operator or built-in in it
    is given operands of types it never takes (as PT310: `length(xs) + "s"`).
    Reported at the bullet. The same for `` every `entry` of `ledger`
    satisfies `EXPR` `` (the expression judged once per item of the returned
    list `ledger`, the item named `entry`), whose list must be a key of
    `### Returns`.

    The property itself is not proven by the linter: the run time evaluates
    the expression on the object the program returns and fails the run when
    it is false (R061), and `prose audit` evaluates it again on the result
    the trace's `run_end` records (rule `result-satisfies`).

    ## Why is this bad
    A name that is not a key of the result is null when the expression is
    evaluated, so the invariant says nothing about what the pattern returns
    (or always fails); an expression that does not parse is checked by
    nothing.

    ## Example
    ```markdown
    ### Invariants

    - the result satisfies `not (winner is null) or reslt is null`

    ### Returns

    - `result`: the first success, or null
    - `winner`: its position, or null
    ```

    ## Use instead
    ```markdown
    - the result satisfies `winner is not null or result is null`
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        spec = ctx.spec
        returns = [key.name for key in spec.returns] if spec is not None else []
        given = ({item.name for item in spec.parameters} | {item.name for item in spec.config}
                 if spec is not None else set())
        for invariant in ctx.decl.invariants:
            form = invariant.form
            if not isinstance(form, ResultSatisfies):
                continue
            if form.problem:
                yield self.diagnostic(
                    invariant.span, form.problem,
                    help="write a pure expression of the language over the keys of "
                    "`### Returns`, as in a condition: `not (result is null) or "
                    "length(history) > 0`")
                continue
            # A result key is no config key, even of the same name (the result's wins).
            typed = replace(ctx.decl, config={name: info for name, info in ctx.decl.config.items()
                                              if name not in returns})
            parsed = parse_result_expression(form.expression)
            for node in find_all(parsed.expr, (n.BinOp, n.Compare, n.Builtin)) if parsed.expr else ():
                problem = impossible_operation(node, typed)
                if problem is not None:
                    yield self.diagnostic(
                        invariant.span, f"`{form.expression}` can never be evaluated: {problem}",
                        help="the run would fail on every result (R061)")
            keys = ", ".join(f"`{name}`" for name in returns) or "none"
            if form.items and form.items not in returns:
                yield self.diagnostic(
                    _name_span(invariant.span, invariant.text, form.items),
                    f"`{form.items}` is not a key of `### Returns` (its keys: {keys}): "
                    "`every ... of` reads a returned list",
                    help="name a list the pattern returns")
                continue
            for name in form.names:
                if name not in returns and name not in given:
                    yield self.diagnostic(
                        _name_span(invariant.span, invariant.text, name),
                        f"`{name}` in `{form.expression}` is not a key of `### Returns` "
                        f"(its keys: {keys}), a parameter or a config key",
                        help="name a key of the returned object; declare it under "
                        "`### Returns` if the pattern returns it")
