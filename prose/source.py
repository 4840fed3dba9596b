"""Source positions and code frames, shared by every stage (no dependencies)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A region of a source file: 1-based lines and columns, end exclusive.

    `end_column` is the column just after the last character, so a one-character
    token at 3:5 has `end_column == 6`.
    """

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def to(self, other: Span) -> Span:
        """The span from the start of `self` to the end of `other`."""
        return Span(self.file, self.line, self.column, other.end_line, other.end_column)

    @staticmethod
    def point(file: str, line: int, column: int) -> Span:
        return Span(file, line, column, line, column + 1)


def code_frame(text: str, span: Span, *, context: int = 1) -> str:
    """Render the lines of `span` in `text` with a caret line under the region.

    Lines are numbered like a compiler's code frame::

        3 | let x = "abc
          |         ^
    """
    lines = text.splitlines()
    if not lines or span.line < 1:
        return ""
    first = max(1, span.line - context)
    last = min(len(lines), span.line)
    width = len(str(last))
    out: list[str] = []
    for number in range(first, last + 1):
        source = lines[number - 1] if number - 1 < len(lines) else ""
        out.append(f"{number:>{width}} | {source}".rstrip())
        if number == span.line:
            start = max(span.column - 1, 0)
            if span.end_line == span.line:
                length = max(span.end_column - span.column, 1)
            else:
                length = max(len(source) - start, 1)
            out.append(f"{'':>{width}} | " + " " * start + "^" * length)
    return "\n".join(out)
