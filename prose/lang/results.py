"""`` the result satisfies `EXPR` ``: a property of what a pattern returns.

The other invariant forms are about what a call receives or when it runs, and the linter
proves them on the program. This one is about the value the program returns, and it is
*not proven statically*: the run time evaluates the expression on the returned object
after the program returns (a false one fails the run, R061), and `prose audit`
evaluates it again on the result the trace's `run_end` records. The linter checks only
that the expression is one (pure: no call, `do` or `shuffle`) and that it names only the
keys of `### Returns`, parameters and config keys (PH638).

The expression is the language's own (`prose.syntax.parser.parse_expression`): the same
operators and built-ins as a program's conditions. Each name is a key of the returned
object (a key the object lacks is null); a name that is no key of `### Returns` but a
parameter or config key is the run's value of it (`threshold`). An implication is written `not A or B`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from prose.lang.builtins import arity_problem
from prose.syntax import nodes as n
from prose.syntax.parser import parse_expression
from prose.syntax.walk import find_all

# The rule name (traces, errors, audit findings).
RESULT_SATISFIES = "result-satisfies"

# The nodes a result expression may hold: values, operators and the pure built-ins.
PURE_NODES: tuple[type[n.Node], ...] = (
    n.Literal, n.String, n.Interpolation, n.Name, n.Member, n.Index, n.Array, n.Object,
    n.Entry, n.Property, n.Compare, n.BinOp, n.Slice, n.Builtin, n.BoolOp, n.Not, n.IsTest,
)


@dataclass(frozen=True, slots=True)
class ParsedResultExpression:
    """An expression parsed, or why it is not a result expression (`problem`)."""

    expr: n.Expr | None
    problem: str = ""


@lru_cache(maxsize=256)
def parse_result_expression(text: str) -> ParsedResultExpression:
    """Parse `text` as a pure expression of the language (cached: the spec loader, the
    run time and the audit each parse the same few texts)."""
    try:
        expr = parse_expression(text)
    except ValueError as error:
        return ParsedResultExpression(None, f"`{text}` is not an expression: {error}")
    for node in find_all(expr, n.Node):
        if not isinstance(node, PURE_NODES):
            what = {"Shuffle": "`shuffle`", "Do": "a `do` call", "Call": "a call"}.get(
                type(node).__name__, f"a `{type(node).__name__}`")
            return ParsedResultExpression(
                None, f"`{text}` holds {what}: a result expression is pure (values, "
                "operators and built-ins only)")
        if isinstance(node, n.Builtin):
            problem = arity_problem(node.name, len(node.args),
                                    [prop.name for prop in node.keywords])
            if problem is not None:
                return ParsedResultExpression(None, f"`{text}`: {problem}")
    return ParsedResultExpression(expr)


def root_names(expr: n.Expr) -> tuple[str, ...]:
    """The names an expression reads (each a key of the result), in order, once each;
    an interpolation's first name counts too."""
    names = [name.name for name in find_all(expr, n.Name)]
    names += [part.path[0] for part in find_all(expr, n.Interpolation)]
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True, slots=True)
class ResultRule:
    """One `` the result satisfies `EXPR` `` of a compiled policy: the expression's text,
    and the invariant's line and text (what a violation names)."""

    expression: str
    line: int = 0
    text: str = ""
    # The names that are not keys of `### Returns` but parameters or config keys: they read
    # the run's own values (what `run_start` records), the others the returned object's.
    given: tuple[str, ...] = ()
    # `` every `item` of `items` satisfies ``: the expression is judged once per item of
    # the returned list `items`, the item bound to `item`.
    item: str = ""
    items: str = ""


def given_names(names: tuple[str, ...], returns: set[str], given: set[str]) -> tuple[str, ...]:
    """The names of an expression read from the run's parameters and config: those that
    are not keys of the result (a result key wins a clash)."""
    return tuple(name for name in names if name not in returns and name in given)


# The rule name of `the returned ... carries` (errors).
RESULT_CARRIES = "result-carries"


@dataclass(frozen=True, slots=True)
class CarryRule:
    """`` the returned `key` carries only `a` `` (`only`) or `` ... never carries `h` ``:
    which slots' outputs the returned object's key may carry. One judgement
    (`carry_problem`) for the linter (over the abstract labels of every `return`) and
    the run time (over the returned value's labels)."""

    key: str
    slots: tuple[str, ...]
    only: bool
    line: int = 0
    text: str = ""

    def problem(self, provenance: frozenset[str], transitive: frozenset[str]) -> str | None:
        """Why a returned value at `key` carrying these labels breaks the rule, or None.
        `only` reads the copies (`provenance`: a call's output carries its own slot, not
        what the call was given); `never` reads everything computed from (`transitive`)."""
        if self.only:
            others = sorted(provenance - set(self.slots))
            if others:
                return (f"the returned `{self.key}` carries only {_listed(self.slots)}, but "
                        f"it may carry the output of {_listed(tuple(others))}")
            return None
        found = sorted(transitive & set(self.slots))
        if found:
            return (f"the returned `{self.key}` never carries {_listed(self.slots)}, but it "
                    f"may carry what {_listed(tuple(found))} returned")
        return None


def _listed(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{name}`" for name in names)
