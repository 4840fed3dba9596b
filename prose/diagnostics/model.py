"""The diagnostic record shared by the parser, the spec loader and the linter."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from prose.source import Span

CATEGORIES = (
    "syntax",
    "spec",
    "names",
    "flow",
    "termination",
    "conditions",
    "contract",
    "information-hiding",
    "style",
)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


@dataclass(frozen=True, slots=True)
class Label:
    """A secondary location with a short explanation (e.g. where a value came from)."""

    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: a stable code, a severity, a category and where it is.

    `message` is one line with identifiers in backticks; `secondary` shows a
    path (where a value was produced, copied, and where it arrived); `help`
    says what to write instead.
    """

    code: str
    severity: Severity
    category: str
    message: str
    span: Span
    secondary: tuple[Label, ...] = ()
    help: str | None = None

    @property
    def path(self) -> str:
        return self.span.file

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.file, self.span.line, self.span.column, self.code)
