"""Expression rules: conditions that read as code but do not parse, built-ins called
wrongly, and operations the linter can see are impossible."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prose.check.declarations import Declarations
from prose.check.findings import ConditionNotExpression
from prose.check.rule import CheckContext, FindingRule, Rule, rule
from prose.diagnostics.model import Diagnostic, Severity
from prose.lang.builtins import BUILTINS, arity_problem, operation_problem
from prose.lang.type_words import program_word, with_article
from prose.spelling import closest
from prose.syntax import nodes as n
from prose.syntax.walk import find_all


@rule(name="condition-not-an-expression", category="conditions", severity=Severity.ERROR)
class ConditionNotAnExpression(FindingRule):
    """A condition written as code that does not parse.

    ## What it does
    Reports an `if`, `elif` or `loop until/while` condition, not between `**`
    markers, that does not parse as an expression and reads as code: it has
    an operator character (`=`, `<`, `>`, `!`, `&`, `|`, `+`, `*`, `/`, `%`,
    brackets), a dotted name, or an `is` test that names no test. The
    message says what to write instead.

    ## Why is this bad
    Text that does not parse would otherwise be decided by a judge model: a
    deterministic gate written with one `=` would silently become a model's
    opinion. Such a condition is never sent to a judge; the run refuses it too
    (R043).

    ## Example
    ```prose
    let verdict = call critic
      draft: brief
    if verdict.approve = true:
      return { result: verdict }
    ```

    ## Use instead
    ```prose
    let verdict = call critic
      draft: brief
    if verdict.approve == true:
      return { result: verdict }
    ```
    For a judge's decision on purpose, write the condition between `**`:
    `if **verdict says the draft is ready**:`.
    """

    finding = ConditionNotExpression


@rule(code="PS201", name="bad-builtin-call", category="correctness", severity=Severity.ERROR)
class BadBuiltinCall(Rule):
    """A built-in that does not exist, or called with the wrong arguments.

    ## What it does
    Reports `name(...)` where `name` is not one of the built-ins
    (docs/language.md, "Built-ins"), with a did-you-mean, and a built-in
    given too few or too many arguments or a keyword it does not take.

    ## Why is this bad
    The run would stop at that line with a type error; only built-ins can be
    called with parentheses (a block is run with `do name(args)`).

    ## Example
    ```prose
    let best = maximum(scores)
    let firsts = sort(scores, key: "value")
    ```

    ## Use instead
    ```prose
    let best = max(scores)
    let firsts = sort(scores, by: "value")
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for node in _expressions(ctx.program):
            if not isinstance(node, n.Builtin):
                continue
            problem = arity_problem(node.name, len(node.args), [k.name for k in node.keywords])
            if problem is None:
                continue
            help_text = None
            if node.name not in BUILTINS:
                guess = closest(node.name, BUILTINS)
                help_text = (f"did you mean `{guess}`?" if guess else
                             "the built-ins are " + ", ".join(f"`{b}`" for b in BUILTINS))
                if any(block.name == node.name for block in find_all(ctx.program, n.BlockDef)):
                    help_text = f"a block is run with `do {node.name}(...)`"
            yield self.diagnostic(node.span, problem, help=help_text)


@rule(code="PT310", name="impossible-operation", category="correctness", severity=Severity.ERROR)
class ImpossibleOperation(Rule):
    """An operation on values whose types the linter knows and the operation does not take.

    ## What it does
    Reports an operator or a built-in whose operands have types known before
    the run (literals, config keys by their declared type, the results of
    operators and built-ins) that the operation cannot take: arithmetic on a
    string config key, `+` of a number and a string, `<` between lists,
    `lower` of a number, `sum` of a string.

    ## Why is this bad
    The run would stop with a type error (R004) at that line, after the calls
    before it were paid for.

    ## Example
    ```prose
    let more = tone + 1
    ```

    ## Use instead
    ```prose
    let more = rounds + 1
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for node in _expressions(ctx.program):
            problem = _problem(node, ctx.decl)
            if problem is not None:
                yield self.diagnostic(node.span, problem)


def _expressions(program: n.Program) -> Iterator[n.Node]:
    """Every operator, comparison and built-in of the program, conditions' included."""
    yield from find_all(program, (n.BinOp, n.Compare, n.Builtin))


# What a built-in's first argument must be, where one type only will do.
_FIRST_ARGUMENT = {
    "sum": "list", "mode": "list", "sort": "list", "top": "list", "unique": "list",
    "flatten": "list", "keys": "object", "values": "object", "lower": "string",
    "upper": "string", "trim": "string", "split": "string",
}  # fmt: skip
_RESULTS = {
    "length": "number", "count": "number", "sum": "number", "sort": "list", "top": "list",
    "unique": "list", "flatten": "list", "keys": "list", "values": "list", "zip": "list",
    "range": "list", "join": "string", "split": "list", "lower": "string", "upper": "string",
    "trim": "string", "digest": "string",
}  # fmt: skip
_CONFIG_TYPES = {"string": "string", "integer": "number", "number": "number",
                 "boolean": "boolean", "list": "list", "object": "object"}


def impossible_operation(node: n.Node, decl: Declarations) -> str | None:
    """Why an operator, comparison or built-in can never be computed on operands of the
    types the linter knows (PT310; `the result satisfies` asks it too, PH638)."""
    return _problem(node, decl)


def _problem(node: n.Node, decl: Declarations) -> str | None:
    if isinstance(node, n.BinOp | n.Compare):
        left, right = type_of(node.left, decl), type_of(node.right, decl)
        if left is None or right is None:
            return None
        return operation_problem(node.op, left, right)
    if isinstance(node, n.Builtin) and node.args:
        wanted = _FIRST_ARGUMENT.get(node.name)
        given = type_of(node.args[0], decl)
        if wanted is not None and given is not None and given != wanted:
            return f"`{node.name}` takes {with_article(wanted)}, not {with_article(given)}"
    return None


def type_of(expr: n.Expr, decl: Declarations) -> str | None:
    """The type name (`prose.runtime.values.type_name`) an expression surely has, or None."""
    if isinstance(expr, n.Literal):
        return program_word(expr.value)
    if isinstance(expr, n.String):
        return "string"
    if isinstance(expr, n.Array):
        return "list"
    if isinstance(expr, n.Object):
        return "object"
    if isinstance(expr, n.Compare | n.IsTest | n.Not | n.BoolOp):
        return "boolean"
    if isinstance(expr, n.Name) and expr.name in decl.config:
        declared = (decl.config[expr.name].type or "").strip().lower()
        return "list" if declared.endswith("[]") else _CONFIG_TYPES.get(declared)
    if isinstance(expr, n.BinOp):
        left, right = type_of(expr.left, decl), type_of(expr.right, decl)
        if left is not None and left == right and operation_problem(expr.op, left, right) is None:
            return left
        return None
    if isinstance(expr, n.Slice):
        return type_of(expr.obj, decl)
    if isinstance(expr, n.Builtin):
        return _RESULTS.get(expr.name)
    return None
