"""Markdown's block rules that the spec reader and the program finder share: ATX headings
and fenced code blocks, written once (CommonMark 0.31, sections 4.2 and 4.5).

`prose.spec.markdown_sections` splits a pattern file into sections with them, and
`prose.syntax.markdown` finds a file's ```prose blocks with them, so `prose lint`,
`prose parse` and `prose fmt` agree on where a program is:

- a fence opens with three or more backticks (or tildes) after 0 to 3 spaces; a line
  indented 4 spaces or more (or by a tab) is an indented code block, never a fence;
- a backtick fence's info string holds no backtick; its first word names the language;
- a fence closes at a line of 0 to 3 spaces, at least as many of the same character,
  and nothing else; an unclosed fence runs to the end of the file;
- the body is dedented by the opening fence's indentation;
- a section is opened by a `##` or `###` heading (outside a fence); `####` and deeper
  headings stay inside it.

This module imports nothing from the package.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_OPENING = re.compile(r"^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)(.*)$")
_CLOSING = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t\r]*$")  # a CRLF file split on "\n"
SECTION_LEVELS = (2, 3)


@dataclass(frozen=True, slots=True)
class FenceOpening:
    """An opening fence: its indentation, its run of backticks or tildes, its language."""

    indent: str
    marker: str
    info: str  # the info string's first word, lowercased (`prose`)

    def closed_by(self, line: str) -> bool:
        """Whether `line` closes this fence."""
        found = _CLOSING.match(line)
        return (found is not None and found.group(1)[0] == self.marker[0]
                and len(found.group(1)) >= len(self.marker))

    def body(self, rows: Iterable[str]) -> str:
        """The block's text, each line dedented by the fence's indentation."""
        indent = self.indent
        lines = [row[len(indent):] if row.startswith(indent) else row.lstrip(" ") for row in rows]
        return "\n".join(lines) + "\n"


def fence_opening(line: str) -> FenceOpening | None:
    """The fence `line` opens, if it opens one."""
    found = _OPENING.match(line)
    if found is None:
        return None
    marker = found.group(2)
    if marker[0] == "`" and "`" in found.group(4):
        return None  # a backtick fence's info string cannot hold a backtick
    return FenceOpening(found.group(1), marker, found.group(3).lower())


def normalise_section_name(heading: str) -> str:
    """Lowercase, backticks and trailing colons removed, spaces collapsed.

    Synonyms (`requires` -> `parameters` in a pattern) depend on the file's
    kind and are folded by `prose.spec.kinds.ContractKind.section_name`.
    """
    return " ".join(heading.replace("`", "").strip().rstrip(":").lower().split())


def section_heading(line: str) -> tuple[int, str] | None:
    """`(level, heading text)` when `line` is an ATX heading."""
    found = HEADING.match(line)
    return (len(found.group(1)), found.group(2).strip()) if found else None
