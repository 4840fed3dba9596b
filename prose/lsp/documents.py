"""Open documents and what the library found in each, computed once per version.

An analysis comes in two depths. The *quick* one (run on every edit) is everything
but the information-hiding proofs: spec, syntax, names, flow rules, termination,
contract. The *complete* one adds the rules that need the provenance analysis
(`DEFERRED`); it runs when the user stops typing, on open and save, and whenever a
request (hover, code action) needs it. Both call `prose.check.lint_pattern`; the quick
one only passes `ignore=DEFERRED`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from prose.lsp.incremental import ProgramCache
from prose.lsp.positions import LineIndex
from prose.lsp.symbols import SymbolIndex, build_index

if TYPE_CHECKING:
    from prose.check.explain import Explanation
    from prose.check.lint import LintResult
    from prose.pattern_file import PatternFile

# The rules that read the provenance analysis (`CheckContext.flow` / `.violations`);
# tests/test_lsp_analysis.py checks that no other rule does. PN102 and PN106 ask whether a
# variable holds a service and which slots a call reaches, which is data flow.
DEFERRED = ("PH6", "PT304", "PK503", "PK504", "PN102", "PN106")


def uri_to_path(uri: str) -> str:
    """The file system path of a `file:` URI (other schemes: the URI itself)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return uri
    return unquote(parsed.path)


def is_pattern(uri: str) -> bool:
    """Whether the document is a pattern file (`*.prose.md`)."""
    return uri_to_path(uri).endswith(".prose.md")


@dataclass
class Analysis:
    """One version of one document, with what the linter found in it."""

    uri: str
    path: str
    version: int | None
    text: str
    pattern: PatternFile
    result: LintResult
    complete: bool
    lines: LineIndex
    _index: SymbolIndex | None = field(default=None, repr=False)
    _explanation: Explanation | None = field(default=None, repr=False)

    @property
    def index(self) -> SymbolIndex:
        """Every name's occurrences (built on first use)."""
        if self._index is None:
            self._index = build_index(self.text, self.pattern.spec, self.pattern.program)
        return self._index

    @property
    def explanation(self) -> Explanation | None:
        """`prose explain` of this version (a complete analysis with a program only)."""
        if self._explanation is None and self.complete and self.result.context is not None:
            from prose.check.explain import explain

            self._explanation = explain(self.result)
        return self._explanation


@dataclass
class Document:
    uri: str
    text: str
    version: int | None
    quick: Analysis | None = None
    complete: Analysis | None = None


class DocumentStore:
    """The open pattern files, each with its latest analyses."""

    def __init__(self) -> None:
        self.documents: dict[str, Document] = {}
        self.programs = ProgramCache()

    def update(self, uri: str, text: str, version: int | None) -> Document:
        """Record a document's new text (open or change)."""
        document = self.documents.get(uri)
        if document is None:
            document = self.documents[uri] = Document(uri, text, version)
        elif document.text != text or document.version != version:
            document.text, document.version = text, version
        return document

    def close(self, uri: str) -> None:
        self.documents.pop(uri, None)
        self.programs.forget(uri_to_path(uri))

    def get(self, uri: str) -> Document | None:
        return self.documents.get(uri)

    def analysis(self, uri: str, *, complete: bool = True) -> Analysis | None:
        """The analysis of the document's current text, computed if it is not yet."""
        document = self.documents.get(uri)
        if document is None:
            return None
        best = document.complete
        if best is not None and _current(best, document):
            return best
        if not complete:
            quick = document.quick
            if quick is not None and _current(quick, document):
                return quick
        found = analyse(uri, document.text, document.version, complete=complete,
                        programs=self.programs,
                        previous=document.quick if _current(document.quick, document) else None)
        if complete:
            document.complete = found
        else:
            document.quick = found
        return found


def _current(analysis: Analysis | None, document: Document) -> bool:
    return analysis is not None and analysis.version == document.version \
        and analysis.text is document.text


def analyse(uri: str, text: str, version: int | None, *, complete: bool = True,
            programs: ProgramCache | None = None, previous: Analysis | None = None) -> Analysis:
    """Load, parse and lint one document's text (never raises for a problem in it)."""
    from prose.check import lint_pattern

    path = uri_to_path(uri)
    if previous is not None:
        pattern = previous.pattern  # the same text: parse once for both depths
    elif programs is not None:
        pattern = programs.pattern(text, path)
    else:
        from prose.pattern_file import pattern_from_text

        pattern = pattern_from_text(text, path)
    result = lint_pattern(pattern, ignore=() if complete else DEFERRED)
    return Analysis(uri, path, version, text, pattern, result, complete, LineIndex(text))
