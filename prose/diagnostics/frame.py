"""Code frames for the text formats: numbered source lines with carets under a span.

A frame is a list of styled lines; each line is a list of ``(text, style)``
segments, so the same frame prints as plain text or, on a terminal, in colour
(the style names are mapped to colours in `render_text`). Spans over several
lines are underlined line by line::

      |
    3 | parallel:
      | ^^^^^^^^^
    4 |   a = ask critic
      |   ^^^^^^^^^^^^^^

A file's text is split into lines once (`LineIndex`) and every frame of
that file reads the same index: splitting it again for each diagnostic made
a lint with thousands of findings quadratic in the file's length.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from prose.source import Span

Segment = tuple[str, str]
StyledLine = list[Segment]

GUTTER = "gutter"
TAB_WIDTH = 4
# A span over more lines than this shows its first and last two lines only.
MAX_SPAN_LINES = 5
_EDGE_LINES = 2


@dataclass(frozen=True, slots=True)
class LineIndex:
    """A file's lines, split once and shared by every frame of that file."""

    lines: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> LineIndex:
        return cls(tuple(text.splitlines()))


def frame_lines(
    source: str | LineIndex, span: Span, *, context: int, caret_style: str
) -> list[StyledLine]:
    """The frame of `span` in `source` (a file's text, or its `LineIndex`), with
    `context` non-blank lines above it.

    Pass the `LineIndex` when framing many spans of one file: given the text,
    this splits it first. Returns no lines when the span is not inside the
    source (so a caller can print the header alone).
    """
    lines = source.lines if isinstance(source, LineIndex) else LineIndex.of(source).lines
    # A span just past the last line (an error at the end of input) points
    # at the empty line that the final newline opens.
    if span.line == len(lines) + 1:
        lines = (*lines, "")
    if span.line < 1 or span.line > len(lines):
        return []
    start_line, start_column, end_line, end_column = _clamp(span, lines)

    numbers = [
        number
        for number in range(max(1, start_line - context), start_line)
        if lines[number - 1].strip()
    ]
    spanned = list(range(start_line, end_line + 1))
    elided = len(spanned) > MAX_SPAN_LINES
    if elided:
        spanned = spanned[:_EDGE_LINES] + spanned[-_EDGE_LINES:]
    width = len(str(spanned[-1]))
    bar = " " * width + " |"

    out: list[StyledLine] = [[(bar, GUTTER)]]
    for number in numbers:
        out.append(_source_line(number, lines[number - 1], width))
    for index, number in enumerate(spanned):
        if elided and index == _EDGE_LINES:
            out.append([("." * max(width, 3), GUTTER)])
        source = lines[number - 1]
        out.append(_source_line(number, source, width))
        first = start_column if number == start_line else _first_text_column(source)
        last = end_column if number == end_line else len(source) + 1
        if first is None:
            continue  # a blank line inside a multi-line span
        offset = _width(source[: first - 1])
        length = max(_width(source[: last - 1]) - offset, 1)
        out.append([(bar, GUTTER), (" " + " " * offset, ""), ("^" * length, caret_style)])
    return out


def _clamp(span: Span, lines: tuple[str, ...]) -> tuple[int, int, int, int]:
    """The span's start and (exclusive) end, kept inside `lines` and non-empty."""
    start_line, start_column = span.line, max(span.column, 1)
    end_line, end_column = span.end_line, span.end_column
    if (end_line, end_column) <= (start_line, start_column):
        end_line, end_column = start_line, start_column + 1
    if end_line > len(lines):
        end_line, end_column = len(lines), len(lines[-1]) + 1
    if end_line > start_line and end_column <= 1:
        # The span ends with a newline: underline up to the end of the line before.
        end_line -= 1
        end_column = len(lines[end_line - 1]) + 1
    if end_line == start_line:
        end_column = max(end_column, start_column + 1)
    return start_line, start_column, end_line, end_column


def _source_line(number: int, source: str, width: int) -> StyledLine:
    shown = source.expandtabs(TAB_WIDTH).rstrip()
    line: StyledLine = [(f"{number:>{width}} |", GUTTER)]
    if shown:
        line.append((" " + shown, ""))
    return line


def _first_text_column(source: str) -> int | None:
    stripped = source.lstrip()
    if not stripped:
        return None
    return len(source) - len(stripped) + 1


def _width(text: str) -> int:
    """Terminal columns taken by `text` once tabs are expanded (wide characters take two)."""
    return sum(_char_width(char) for char in text.expandtabs(TAB_WIDTH))


def _char_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def plain(lines: list[StyledLine]) -> list[str]:
    """The styled lines as text without styles."""
    return ["".join(text for text, _ in line) for line in lines]
