"""Positions: our spans (1-based lines and columns in characters, end exclusive) and
LSP positions (0-based lines, columns in UTF-16 code units).

A character outside the Basic Multilingual Plane (an emoji) is one column to us and
two code units to the client, so every conversion looks at the line's text.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from prose.source import Span


def utf16_column(line: str, column: int) -> int:
    """UTF-16 code units before 0-based character `column` of `line` (clamped to the line)."""
    prefix = line[: max(column, 0)]
    return len(prefix) + sum(1 for char in prefix if ord(char) > 0xFFFF)


def char_column(line: str, units: int) -> int:
    """The 0-based character column at UTF-16 offset `units` of `line` (clamped)."""
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)


class LineIndex:
    """A document's lines, for converting positions both ways."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")

    def line(self, number: int) -> str:
        """Line `number` (0-based) without its line break ("" past the end)."""
        if 0 <= number < len(self.lines):
            return self.lines[number].rstrip("\r")
        return ""

    def position(self, line: int, column: int) -> lsp.Position:
        """The LSP position of 1-based `line`:`column` (a character column)."""
        row = max(line - 1, 0)
        return lsp.Position(line=row, character=utf16_column(self.line(row), column - 1))

    def range(self, span: Span) -> lsp.Range:
        """The LSP range of `span`; an empty or inverted span becomes one character."""
        start = self.position(span.line, span.column)
        end = self.position(span.end_line, span.end_column)
        if (end.line, end.character) <= (start.line, start.character):
            end = self.position(span.line, span.column + 1)
        return lsp.Range(start=start, end=end)

    def location(self, uri: str, span: Span) -> lsp.Location:
        return lsp.Location(uri=uri, range=self.range(span))

    def point(self, position: lsp.Position) -> tuple[int, int]:
        """The 1-based (line, character column) of an LSP position."""
        line = self.line(position.line)
        return position.line + 1, char_column(line, position.character) + 1

    def whole(self) -> lsp.Range:
        """The range of the whole document (for a full-text edit)."""
        last = len(self.lines) - 1
        return lsp.Range(
            start=lsp.Position(line=0, character=0),
            end=lsp.Position(line=last, character=utf16_column(self.lines[last],
                                                               len(self.lines[last]))),
        )
