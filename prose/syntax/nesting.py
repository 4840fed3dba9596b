"""The nesting limit: how deep a program may nest, checked while it is parsed.

Every stage after the parser (the formatter, the checker's rules and flow
analysis, the interpreter, the golden dumps) walks the AST recursively, so a
program nested thousands of levels deep would end in a `RecursionError`
wherever it first met one. The parser refuses such a program instead, with a
syntax error at the place that goes too deep ("nesting deeper than 100
levels"), so nothing downstream ever sees it.

A *level* is one of: an indented block (the body of an `if`, a loop, a
`try`, ...), a bracket (`[`, `{`, `(`), or an expression inside another
(`a.b`, `a[0]`, `not x`, a comparison, a call). The patterns in this
repository nest 5 levels at most; `MAX_NESTING` is 100, twenty times that.
It is also low enough that a program at the limit goes through every stage
within Python's default recursion limit (1,000 frames): the deepest stage,
the formatter's comparison of an object nested in objects, needs about 7
frames a level (`tests/test_syntax_nesting.py` runs each stage at the limit
under that default; `prose` itself raises the limit to 20,000).

It is checked twice, both without recursion:

- by the indentation post-lexer (`lexer.py`), on brackets and indented
  blocks, as the tokens stream in: a deep input fails before Lark has built
  anything of it;
- on the finished AST (`check_nesting`), for what the tokens do not show:
  chains such as `a.b.c...`, `x[0][0]...` and `not not ...`.
"""

from __future__ import annotations

from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.walk import child_nodes

MAX_NESTING = 100

# Expressions that put what they hold one level deeper.
_NESTING_EXPRESSIONS: tuple[type[n.Node], ...] = (
    n.Array,
    n.Object,
    n.Member,
    n.Index,
    n.Call,
    n.Compare,
    n.BoolOp,
    n.Not,
    n.IsTest,
    n.BinOp,
    n.Slice,
    n.Builtin,
)


def too_deep_message() -> str:
    """The one message for a program over the limit, wherever it is found."""
    return f"nesting deeper than {MAX_NESTING} levels"


def first_too_deep(program: n.Program) -> Span | None:
    """The span of the first node (in source order) nested deeper than `MAX_NESTING`."""
    stack: list[tuple[n.Node, int]] = [(node, 0) for node in reversed(program.body)]
    while stack:
        node, level = stack.pop()
        if level > MAX_NESTING:
            return node.span
        inner = level + 1 if isinstance(node, _NESTING_EXPRESSIONS) else level
        found = [(child, inner + 1 if in_body else inner) for child, in_body in child_nodes(node)]
        stack.extend(reversed(found))
    return None
