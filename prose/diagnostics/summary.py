"""The totals every output format closes with, and the order diagnostics are shown in."""

from __future__ import annotations

from collections.abc import Iterable
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


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def ordered(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """`diagnostics` in the order every format shows them: file, position, code, message."""
    return sorted(diagnostics, key=_order)


def _order(diagnostic: Diagnostic) -> tuple[str, int, int, str, int, int, str]:
    span = diagnostic.span
    path, line, column, code = diagnostic.sort_key()
    return (path, line, column, code, span.end_line, span.end_column, diagnostic.message)
