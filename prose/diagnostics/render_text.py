"""The text formats: `full` (code frames, notes, help) and `concise` (one line each).

`full` prints in colour through rich only when asked to or when stdout is a
terminal; rich is imported here, lazily, and nowhere else in the lint path.

Both show at most `MAX_SHOWN_PER_FILE` diagnostics of a file (the most
severe), then one line saying how many more there are; the summary line
counts them all, and `json` and `sarif` list them all. A reader gains
nothing from the 20,001st finding, and printing tens of thousands took
longer than the lint.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from prose.diagnostics.frame import GUTTER, LineIndex, StyledLine, frame_lines, plain
from prose.diagnostics.model import Diagnostic, Label
from prose.diagnostics.summary import Summary, per_file

MAX_SHOWN_PER_FILE = 200

# Style names used in the styled lines, and the rich styles they print in.
_RICH_STYLES = {
    "path": "bold",
    "error": "bold red",
    "warning": "bold yellow",
    "info": "bold cyan",
    "note": "bold cyan",
    "help": "bold green",
    GUTTER: "bold blue",
    "summary": "bold",
    "passed": "bold green",
}


def render_full(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, str],
    summary: Summary,
    *,
    color: bool | None = None,
    limit: int | None = MAX_SHOWN_PER_FILE,
    verbose: bool = False,
) -> str:
    """Each diagnostic with a code frame, its notes and help, then the summary.

    ::

        flow.prose:4:9: PN002 [error] `draft` is used before it is assigned
          |
        3 | let critique = ask critic
        4 | let x = draft
          |         ^^^^^
          = note: flow.prose:7:1: `draft` is assigned here
          = help: assign `draft` before line 4

        Found 1 error in 1 file.

    A note is one line (a leak's path is a list of steps); with `verbose` each
    note has its own code frame too. `sources` maps a path to its text; a
    diagnostic in a file not there is printed without a frame. `color=None` colours only when stdout is a
    terminal (and ``NO_COLOR`` is not set). At most `limit` diagnostics of a
    file are shown (None: all), then a line saying how many more there are.
    """
    indexes = _Indexes(sources)
    lines: list[StyledLine] = []
    for findings in per_file(diagnostics, limit):
        for diagnostic in findings.shown:
            lines.extend(_diagnostic_lines(diagnostic, indexes, verbose))
            lines.append([])
        if findings.left_out:
            lines.append([(findings.left_out_line(), "summary")])
            lines.append([])
    lines.append(_summary_line(summary))
    lines.extend([(extra, "")] for extra in summary.extra_lines)
    if color is None:
        color = wants_color()
    if color:
        return _ansi(lines)
    return "\n".join(plain(lines)) + "\n"


def render_concise(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, str],
    summary: Summary,
    *,
    limit: int | None = MAX_SHOWN_PER_FILE,
) -> str:
    """One ``path:line:col: CODE message`` line per diagnostic, then the summary.

    At most `limit` per file (None: all), as in `render_full`.
    """
    lines: list[str] = []
    for findings in per_file(diagnostics, limit):
        lines.extend(f"{d.span}: {d.code} {d.message}" for d in findings.shown)
        if findings.left_out:
            lines.append(findings.left_out_line())
    lines.append(summary.line())
    lines.extend(summary.extra_lines)
    return "\n".join(lines) + "\n"


class _Indexes:
    """Each file's `LineIndex`, built when its first frame is printed."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self._sources = sources
        self._built: dict[str, LineIndex] = {}

    def get(self, path: str) -> LineIndex | None:
        index = self._built.get(path)
        if index is None:
            text = self._sources.get(path)
            if text is None:
                return None
            index = self._built[path] = LineIndex.of(text)
        return index


def _diagnostic_lines(diagnostic: Diagnostic, sources: _Indexes, verbose: bool) -> list[StyledLine]:
    severity = diagnostic.severity.value
    lines: list[StyledLine] = [
        [
            (str(diagnostic.span), "path"),
            (": ", ""),
            (diagnostic.code, severity),
            (" ", ""),
            (f"[{severity}]", severity),
            (f" {diagnostic.message}", ""),
        ]
    ]
    index = sources.get(diagnostic.path)
    if index is not None:
        lines.extend(frame_lines(index, diagnostic.span, context=1, caret_style=severity))
    for label in diagnostic.secondary:
        lines.extend(_note_lines(label, sources, verbose))
    if diagnostic.help:
        lines.append([("  = ", GUTTER), ("help", "help"), (f": {diagnostic.help}", "")])
    return lines


def _note_lines(label: Label, sources: _Indexes, verbose: bool) -> list[StyledLine]:
    lines: list[StyledLine] = [
        [
            ("  = ", GUTTER),
            ("note", "note"),
            (": ", ""),
            (str(label.span), "path"),
            (f": {label.message}", ""),
        ]
    ]
    index = sources.get(label.span.file) if verbose else None
    if index is not None:
        lines.extend(frame_lines(index, label.span, context=0, caret_style="note"))
    return lines


def _summary_line(summary: Summary) -> StyledLine:
    return [(summary.line(), "summary" if summary.total else "passed")]


def wants_color(stream: TextIO | None = None) -> bool:
    """Whether to print in colour on `stream` (default stdout): it is a terminal, ``NO_COLOR``
    is not set (https://no-color.org) and ``TERM`` is not ``dumb``; ``FORCE_COLOR`` forces it."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = stream if stream is not None else sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


_ANSI_CODES = {"bold": "1", "error": "1;31", "warning": "1;33", "note": "1;36", "help": "1;32",
               "dim": "2"}


def paint(text: str, style: str, color: bool) -> str:
    """`text` in `style` (a name of `_ANSI_CODES`) when `color`, else as it is."""
    code = _ANSI_CODES.get(style)
    return f"\x1b[{code}m{text}\x1b[0m" if color and code else text


def _ansi(lines: list[StyledLine]) -> str:
    """The styled lines as text with ANSI colour codes, rendered by rich."""
    import io

    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=True,
        color_system="standard",
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
    )
    for line in lines:
        text = Text.assemble(*((part, _RICH_STYLES.get(style, "")) for part, style in line))
        console.print(text, soft_wrap=True)
    return buffer.getvalue()
