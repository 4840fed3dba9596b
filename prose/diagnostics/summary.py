"""The totals every output format closes with, the order diagnostics are shown in,
and how many of a file's the text formats show."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from prose.diagnostics.model import Diagnostic, Severity


@dataclass(frozen=True)
class Summary:
    """What was checked and what was found.

    `extra_lines` are free-form lines (e.g. ``invariants: 4 checked, 1 prose-only``)
    that the `full` and `concise` formats print after the closing line.
    """

    files: int
    errors: int = 0
    warnings: int = 0
    infos: int = 0
    extra_lines: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        diagnostics: Iterable[Diagnostic],
        files: int,
        extra_lines: Iterable[str] = (),
    ) -> Summary:
        """Count `diagnostics` by severity over `files` checked files."""
        counts = dict.fromkeys(Severity, 0)
        for diagnostic in diagnostics:
            counts[diagnostic.severity] += 1
        return cls(
            files=files,
            errors=counts[Severity.ERROR],
            warnings=counts[Severity.WARNING],
            infos=counts[Severity.INFO],
            extra_lines=list(extra_lines),
        )

    @property
    def total(self) -> int:
        return self.errors + self.warnings + self.infos

    def line(self) -> str:
        """The closing line: ``Found 2 errors, 1 warning in 3 files.`` or ``All checks passed.``"""
        if self.total == 0:
            return "All checks passed."
        parts = [
            _plural(count, word)
            for count, word in (
                (self.errors, "error"),
                (self.warnings, "warning"),
                (self.infos, "info"),
            )
            if count
        ]
        return f"Found {', '.join(parts)} in {_plural(self.files, 'file')}."


def counted(diagnostics: Iterable[Diagnostic]) -> str:
    """``2 errors, 1 warning``: the diagnostics counted by severity, most severe first."""
    summary = Summary.of(diagnostics, files=0)
    parts = [
        _plural(count, word)
        for count, word in (
            (summary.errors, "error"),
            (summary.warnings, "warning"),
            (summary.infos, "info"),
        )
        if count
    ]
    return ", ".join(parts)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def ordered(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """`diagnostics` in the order every format shows them: file, position, code, message."""
    return sorted(diagnostics, key=_order)


def _order(diagnostic: Diagnostic) -> tuple[str, int, int, str, int, int, str]:
    span = diagnostic.span
    path, line, column, code = diagnostic.sort_key()
    return (path, line, column, code, span.end_line, span.end_column, diagnostic.message)


@dataclass(frozen=True)
class FileFindings:
    """The diagnostics of one file that a text format shows, and those it leaves out."""

    path: str
    shown: list[Diagnostic]
    left_out: list[Diagnostic]

    def left_out_line(self) -> str:
        """``... and 19804 more in big.prose.md: 9804 errors, 10000 warnings (use ...)``."""
        return (
            f"... and {len(self.left_out)} more in {self.path}: {counted(self.left_out)}"
            " (use --format json for all)"
        )


def per_file(diagnostics: Iterable[Diagnostic], limit: int | None) -> Iterator[FileFindings]:
    """Each file's diagnostics in order, at most `limit` shown (None: all).

    When a file has more, the most severe are shown (errors before warnings
    before infos, each kind in order of position), still printed in order of
    position: a flood of warnings never hides an error.
    """
    for path, group in itertools.groupby(ordered(diagnostics), key=lambda d: d.path):
        found = list(group)
        if limit is None or len(found) <= limit:
            yield FileFindings(path, found, [])
            continue
        by_severity = sorted(range(len(found)), key=lambda i: (-found[i].severity.rank, i))
        kept = set(by_severity[:limit])
        shown = [d for i, d in enumerate(found) if i in kept]
        left_out = [d for i, d in enumerate(found) if i not in kept]
        yield FileFindings(path, shown, left_out)
