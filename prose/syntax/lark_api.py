"""The parts of Lark the syntax package uses, from the generated parser module.

`prose/syntax/standalone_parser.py` (written by `prose.syntax.generate_parser` from the
grammar) holds the parse tables and Lark's runtime: loading it is what a command pays
for the parser, and Lark itself is never imported on the command line's paths. The type
checker reads Lark's own annotations of the same classes (the generated module is Lark's
code, unannotated to mypy's taste), so this module is the one place that says where they
come from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from lark import (
        Lark,
        Token,
        Transformer,
        UnexpectedCharacters,
        UnexpectedEOF,
        UnexpectedInput,
        UnexpectedToken,
    )
    from lark.lark import PostLex
else:
    from prose.syntax.standalone_parser import (
        Lark,
        PostLex,
        Token,
        Transformer,
        UnexpectedCharacters,
        UnexpectedEOF,
        UnexpectedInput,
        UnexpectedToken,
    )

__all__ = [
    "Lark",
    "PostLex",
    "Token",
    "Transformer",
    "UnexpectedCharacters",
    "UnexpectedEOF",
    "UnexpectedInput",
    "UnexpectedToken",
    "new_parser",
]


def new_parser(**options: Any) -> Lark:
    """The grammar's LALR parser from the generated tables, with the load-time `options`
    Lark allows (`postlex`, `transformer`...)."""
    from prose.syntax import standalone_parser

    return cast("Lark", standalone_parser.Lark_StandAlone(**options))
