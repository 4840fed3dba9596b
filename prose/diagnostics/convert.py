"""Errors that stop a stage, turned into diagnostics so every format can show them."""

from __future__ import annotations

from prose.diagnostics.model import Diagnostic, Severity
from prose.errors import ProseSyntaxError

SYNTAX_CODE = "PS001"


def from_syntax_error(error: ProseSyntaxError) -> list[Diagnostic]:
    """One ``PS001`` error diagnostic (category ``syntax``) per problem in `error`.

    The renderers draw the code frame from the source text, so the problem's
    pre-rendered frame is not carried over.
    """
    return [
        Diagnostic(
            code=SYNTAX_CODE,
            severity=Severity.ERROR,
            category="syntax",
            message=problem.message,
            span=problem.span,
        )
        for problem in error.problems
    ]
