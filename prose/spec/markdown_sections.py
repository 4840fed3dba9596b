"""Line-level markdown structure of a pattern file: frontmatter, title, sections, bullets.

This module knows markdown, not the meaning of sections. Lines are numbered
from 1 and columns from 1, as in every `Span`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prose.markdown_blocks import HEADING as _HEADING
from prose.markdown_blocks import SECTION_LEVELS, FenceOpening, fence_opening
from prose.markdown_blocks import normalise_section_name as normalise_section_name

_BULLET = re.compile(r"^([ \t]*)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*?))?[ \t]*$")



@dataclass(slots=True)
class Fence:
    """A fenced code block: info word, opening line, closing line (None if unclosed)."""

    info: str
    open_line: int
    close_line: int | None
    section: str


@dataclass(slots=True)
class RawSection:
    """A section as found: heading, normalised name and its body lines."""

    heading: str
    name: str
    line: int
    heading_column: int
    lines: list[tuple[int, str]] = field(default_factory=list)
    fenced: set[int] = field(default_factory=set)
    level: int = 3

    @property
    def end_line(self) -> int:
        return self.lines[-1][0] if self.lines else self.line


@dataclass(slots=True)
class Document:
    """The body of a pattern file split into title, summary, sections and fences."""

    title: str | None = None
    title_line: int | None = None
    summary: str | None = None
    sections: list[RawSection] = field(default_factory=list)
    fences: list[Fence] = field(default_factory=list)


@dataclass(slots=True)
class Bullet:
    """A list item: its first line, its continuation lines and its nested items.

    `column` is the 1-based column where `text` starts; each continuation is
    `(line, column, text)` with the text stripped of its indentation.
    """

    line: int
    indent: int
    column: int
    text: str
    continuation: list[tuple[int, int, str]] = field(default_factory=list)
    children: list[Bullet] = field(default_factory=list)

    @property
    def full_text(self) -> str:
        """The first line and the continuation lines joined by single spaces."""
        return " ".join([self.text, *(text for _, _, text in self.continuation)]).strip()

    @property
    def end_line(self) -> int:
        last = self.continuation[-1][0] if self.continuation else self.line
        for child in self.children:
            last = max(last, child.end_line)
        return last


def split_frontmatter(lines: list[str]) -> tuple[int, int | None, int]:
    """Where the frontmatter is: `(open_index, close_index, body_index)`, 0-based.

    `open_index` is -1 when there is no frontmatter; `close_index` is None when
    it is not terminated.
    """
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start >= len(lines) or lines[start].strip() != "---":
        return -1, None, 0
    for index in range(start + 1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return start, index, index + 1
    return start, None, start + 1


def split_document(lines: list[str], body_index: int) -> Document:
    """Title, summary, `##`/`###` sections and fenced blocks of the body."""
    doc = Document()
    current: RawSection | None = None
    fence: tuple[FenceOpening, Fence] | None = None
    lead: list[str] = []
    lead_done = False
    for index in range(body_index, len(lines)):
        number = index + 1
        line = lines[index]
        if fence is not None:
            opening, record = fence
            if opening.closed_by(line):
                record.close_line = number
                fence = None
            if current is not None:
                current.lines.append((number, line))
                current.fenced.add(number)
            continue
        opened = fence_opening(line)
        if opened:
            record = Fence(opened.info, number, None, current.name if current else "")
            doc.fences.append(record)
            fence = (opened, record)
            if current is not None:
                current.lines.append((number, line))
                current.fenced.add(number)
            continue
        heading = _HEADING.match(line)
        level = len(heading.group(1)) if heading else 0
        if heading and level == 1 and doc.title is None and current is None:
            doc.title, doc.title_line = heading.group(2).strip(), number
            continue
        if heading and level in SECTION_LEVELS:
            text = heading.group(2).strip()
            current = RawSection(
                text, normalise_section_name(text), number, len(heading.group(1)) + 2, level=level
            )
            doc.sections.append(current)
            continue
        if current is not None:
            current.lines.append((number, line))
        elif not lead_done and doc.title is not None:
            if line.strip():
                lead.append(line.strip())
            elif lead:
                lead_done = True
    if lead:
        doc.summary = " ".join(lead)
    return doc


def section_text(section: RawSection) -> str:
    """The section's body as written, without leading and trailing blank lines."""
    return "\n".join(line for _, line in section.lines).strip("\n")


def paragraphs(section: RawSection) -> str:
    """The body's text outside fences, blank-line paragraphs joined, stripped."""
    rows = [line for number, line in section.lines if number not in section.fenced]
    return "\n".join(rows).strip()


def parse_bullets(section: RawSection) -> list[Bullet]:
    """The section's list items as a tree (fenced lines and paragraphs are skipped).

    A non-bullet line indented deeper than an open item continues the deepest
    such item; an unindented line directly under an item (no blank line) is a
    lazy continuation; any other text ends the list.
    """
    roots: list[Bullet] = []
    stack: list[Bullet] = []
    previous_blank = True
    for number, raw in section.lines:
        if number in section.fenced:
            stack.clear()
            previous_blank = True
            continue
        line = raw.replace("\t", "    ")
        if not line.strip():
            previous_blank = True
            continue
        match = _BULLET.match(line)
        indent = len(line) - len(line.lstrip(" "))
        if match:
            text = match.group(3) or ""
            column = (match.start(3) + 1) if match.group(3) else len(line) + 1
            item = Bullet(number, indent, column, text)
            while stack and stack[-1].indent >= indent:
                stack.pop()
            (stack[-1].children if stack else roots).append(item)
            stack.append(item)
        elif stack and (indent > stack[0].indent or not previous_blank):
            owner = stack[-1]
            for candidate in reversed(stack):
                if candidate.indent < indent:
                    owner = candidate
                    break
            owner.continuation.append((number, indent + 1, line.strip()))
        else:
            stack.clear()
        previous_blank = False
    return roots


@dataclass(frozen=True, slots=True)
class FencedProse:
    """A ```prose block inside a section: its dedented source and where it sits."""

    source: str
    line_offset: int
    fence_line: int
    end_line: int
    closed: bool


def prose_fences(section: RawSection) -> list[FencedProse]:
    """The ```prose blocks of a section, dedented by their fence's indentation."""
    out: list[FencedProse] = []
    rows = section.lines
    index = 0
    while index < len(rows):
        number, line = rows[index]
        opened = fence_opening(line)
        if not opened or number not in section.fenced:
            index += 1
            continue
        end = index + 1
        closed = False
        while end < len(rows):
            if opened.closed_by(rows[end][1]):
                closed = True
                break
            end += 1
        if opened.info == "prose":
            body = opened.body(row for _, row in rows[index + 1 : end])
            last = rows[end][0] if end < len(rows) else (rows[-1][0] if rows else number)
            out.append(FencedProse(body, number, number, last, closed))
        index = end + 1
    return out


def facet_headings(section: RawSection) -> list[tuple[int, str, list[str]]]:
    """The `####` sub-headings of a section outside fences: `(line, name, body lines)`."""
    out: list[tuple[int, str, list[str]]] = []
    for number, line in section.lines:
        if number in section.fenced:
            continue
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) >= 4:
            out.append((number, heading.group(2).strip().strip("`"), []))
        elif out and line.strip():
            out[-1][2].append(line.strip())
    return out


def walk(bullets: list[Bullet]) -> list[Bullet]:
    """Every bullet of the tree, depth first, in file order."""
    out: list[Bullet] = []
    for bullet in bullets:
        out.append(bullet)
        out.extend(walk(bullet.children))
    return out
