"""Formatting (`prose fmt`) and quick fixes.

Quick fixes, each for one diagnostic:
- PH608 (an invariant in prose): rewrite it in the checkable form the linter suggests;
- PH601 (an input the slot does not require): declare it in the slot's `requires:`;
- PN101 (an undefined name): rename it to a similar name in scope.
"""

from __future__ import annotations

import difflib
import re

from lsprotocol import types as lsp

from prose.lsp.documents import Analysis
from prose.source import Span

_REWRITE = "write it as: "
_UNDECLARED = re.compile(r"^`(?P<slot>[^`]+)` does not require `(?P<name>[^`]+)`")
_UNDEFINED = re.compile(r"^undefined name `(?P<name>[^`]+)`")


def format_document(analysis: Analysis) -> list[lsp.TextEdit] | None:
    """One edit replacing the text with `prose fmt`'s output; [] if already formatted,
    None if it cannot be formatted (a syntax error: the diagnostics say where)."""
    from prose.errors import ProseError
    from prose.syntax.format import format_file

    try:
        spec = analysis.pattern.spec
        section = spec.program_section if spec is not None else "delegation"
        formatted = format_file(analysis.text, analysis.path, section)
    except ProseError:
        return None
    if formatted == analysis.text:
        return []
    return [lsp.TextEdit(range=analysis.lines.whole(), new_text=formatted)]


def code_actions(analysis: Analysis, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """The quick fixes for the diagnostics the client sent with the request."""
    out: list[lsp.CodeAction] = []
    for diagnostic in params.context.diagnostics:
        if diagnostic.source not in (None, "prose"):
            continue
        if diagnostic.code == "PH608":
            out.extend(_rewrite_invariant(analysis, diagnostic))
        elif diagnostic.code == "PH601":
            out.extend(_declare_input(analysis, diagnostic))
        elif diagnostic.code == "PN101":
            out.extend(_rename_undefined(analysis, diagnostic))
    return out


def _fix(analysis: Analysis, title: str, diagnostic: lsp.Diagnostic, span: Span,
         text: str, preferred: bool = True) -> lsp.CodeAction:
    edit = lsp.TextEdit(range=analysis.lines.range(span), new_text=text)
    return lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                          is_preferred=preferred,
                          edit=lsp.WorkspaceEdit(changes={analysis.uri: [edit]}))


def _help(diagnostic: lsp.Diagnostic) -> str:
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    found = data.get("help")
    if isinstance(found, str):
        return found
    _, _, after = diagnostic.message.partition("\nhelp: ")
    return after


def _rewrite_invariant(analysis: Analysis, diagnostic: lsp.Diagnostic) -> list[lsp.CodeAction]:
    advice = _help(diagnostic)
    if not advice.startswith(_REWRITE):
        return []
    rewrite = advice[len(_REWRITE):].strip()
    spec = analysis.pattern.spec
    line = diagnostic.range.start.line + 1
    invariant = next((i for i in spec.invariants if i.span.line == line), None) if spec else None
    if invariant is None:
        return []
    text = analysis.lines.line(line - 1)
    start = invariant.span.column
    span = Span(analysis.path, line, start, line, len(text.rstrip()) + 1)
    if invariant.span.end_line != line:
        span = Span(analysis.path, line, start, invariant.span.end_line, invariant.span.end_column)
    return [_fix(analysis, f"Rewrite as a checkable invariant: {rewrite}", diagnostic, span,
                 rewrite)]


def _declare_input(analysis: Analysis, diagnostic: lsp.Diagnostic) -> list[lsp.CodeAction]:
    found = _UNDECLARED.match(diagnostic.message)
    spec = analysis.pattern.spec
    if found is None or spec is None:
        return []
    slot = spec.slot(found["slot"])
    if slot is None or not slot.requires:
        return []
    last = max(slot.requires, key=lambda r: (r.span.end_line, r.span.end_column))
    line = analysis.lines.line(last.span.end_line - 1)
    # After the last entry and its `(condition)`, if it has one.
    end = last.span.end_column
    rest = line[end - 1:]
    condition = re.match(r"\s*\([^)]*\)", rest)
    if condition is not None:
        end += condition.end()
    at = Span(analysis.path, last.span.end_line, end, last.span.end_line, end)
    return [_fix(analysis, f"Declare `{found['name']}` in `requires:` of `{found['slot']}`",
                 diagnostic, at, f", {found['name']}", preferred=False)]


def _rename_undefined(analysis: Analysis, diagnostic: lsp.Diagnostic) -> list[lsp.CodeAction]:
    found = _UNDEFINED.match(diagnostic.message)
    if found is None:
        return []
    name = found["name"]
    candidates = [n for n in analysis.index.names() if n != name]
    similar = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    start = diagnostic.range.start
    line, column = analysis.lines.point(start)
    text = analysis.lines.line(start.line)
    at = text.find(name, column - 1)
    if at < 0:
        return []
    span = Span(analysis.path, line, at + 1, line, at + 1 + len(name))
    return [_fix(analysis, f"Rename to `{candidate}`", diagnostic, span, candidate,
                 preferred=index == 0)
            for index, candidate in enumerate(similar)]
