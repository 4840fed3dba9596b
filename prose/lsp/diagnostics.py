"""Our diagnostics as LSP diagnostics: range, code, severity, the path a leak took, help
and a link to the rule's page.

The link (`codeDescription.href`) goes to `docs/rules/CODE.md`: under the URL in
`$PROSE_RULES_URL` when it is set (a hosted copy of the docs), else to the file in the
repository the package runs from (an editable install or a checkout), else nowhere
(the project has no published URL; `prose rules CODE` prints the same page).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from lsprotocol import types as lsp

from prose.diagnostics.model import Diagnostic, Severity
from prose.lsp.positions import LineIndex

SOURCE = "prose"
_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
}


@lru_cache(maxsize=1)
def _rules_base() -> str | None:
    configured = os.environ.get("PROSE_RULES_URL")
    if configured:
        return configured if configured.endswith("/") else configured + "/"
    folder = Path(__file__).resolve().parent.parent.parent / "docs" / "rules"
    if (folder / "README.md").is_file():
        return folder.as_uri() + "/"
    return None


def rule_url(code: str) -> str | None:
    """The address of the page documenting `code` (None when no copy of the docs is known)."""
    base = _rules_base()
    return f"{base}{code}.md" if base else None


def to_lsp(diagnostic: Diagnostic, uri: str, lines: LineIndex) -> lsp.Diagnostic:
    """One LSP diagnostic; `secondary` labels become related information, `help` a line."""
    message = diagnostic.message
    if diagnostic.help:
        message += f"\nhelp: {diagnostic.help}"
    related = [
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=_uri_of(label.span.file, uri, diagnostic.span.file),
                                  range=lines.range(label.span)),
            message=label.message,
        )
        for label in diagnostic.secondary
    ]
    href = rule_url(diagnostic.code)
    return lsp.Diagnostic(
        range=lines.range(diagnostic.span),
        message=message,
        severity=_SEVERITY.get(diagnostic.severity, lsp.DiagnosticSeverity.Information),
        code=diagnostic.code,
        code_description=lsp.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=related or None,
        data={"help": diagnostic.help, "category": diagnostic.category},
    )


def _uri_of(file: str, uri: str, own: str) -> str:
    if file == own:
        return uri
    try:
        return Path(file).resolve().as_uri()
    except ValueError:
        return uri


def convert(diagnostics: Iterable[Diagnostic], uri: str, path: str,
            lines: LineIndex) -> list[lsp.Diagnostic]:
    """The LSP diagnostics of one document (a finding in another file is shown at line 1)."""
    out = []
    for diagnostic in diagnostics:
        if diagnostic.span.file != path:
            found = to_lsp(diagnostic, uri, lines)
            found.range = lsp.Range(start=lsp.Position(line=0, character=0),
                                    end=lsp.Position(line=0, character=0))
            found.message = f"{diagnostic.span}: {found.message}"
            out.append(found)
            continue
        out.append(to_lsp(diagnostic, uri, lines))
    return out


def shift(diagnostics: Sequence[lsp.Diagnostic],
          changes: Sequence[lsp.TextDocumentContentChangeEvent]) -> list[lsp.Diagnostic]:
    """Earlier diagnostics carried across edits: those after an edit move with its lines,
    those on an edited line are dropped (a whole-document change drops them all)."""
    kept = list(diagnostics)
    for change in changes:
        if not isinstance(change, lsp.TextDocumentContentChangePartial):
            return []
        first, last = change.range.start.line, change.range.end.line
        delta = change.text.count("\n") - (last - first)
        moved = []
        for diagnostic in kept:
            start, end = diagnostic.range.start.line, diagnostic.range.end.line
            if end < first:
                moved.append(diagnostic)
            elif start > last:
                moved.append(_moved(diagnostic, delta))
        kept = moved
    return kept


def _moved(diagnostic: lsp.Diagnostic, delta: int) -> lsp.Diagnostic:
    if delta == 0:
        return diagnostic
    start, end = diagnostic.range.start, diagnostic.range.end
    return lsp.Diagnostic(
        range=lsp.Range(start=lsp.Position(line=start.line + delta, character=start.character),
                        end=lsp.Position(line=end.line + delta, character=end.character)),
        message=diagnostic.message,
        severity=diagnostic.severity,
        code=diagnostic.code,
        code_description=diagnostic.code_description,
        source=diagnostic.source,
        related_information=diagnostic.related_information,
        data=diagnostic.data,
    )
