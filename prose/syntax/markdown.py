"""Finds the fenced `prose` block(s) of a `*.prose.md` file's program section.

The section is `### Delegation` in a pattern and `### Execution` in every other kind
(`prose.spec.kinds`; `prose.spec.loader.program_section` reads it from a file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$")


@dataclass(frozen=True, slots=True)
class ProseBlock:
    """A fenced prose block: its source and where it sits in the file.

    `line_offset` is the number of file lines before the block's first line;
    `fence_line` is the 1-based line of the opening fence.
    """

    source: str
    line_offset: int
    fence_line: int
    end_line: int
    closed: bool = True


def is_markdown(filename: str) -> bool:
    return filename.endswith((".md", ".markdown"))


def delegation_blocks(text: str, section: str = "delegation") -> list[ProseBlock]:
    """Every fenced `prose` block under a `### Delegation` heading (or `### <section>`),
    in order."""
    return [block for name, block in _fenced_blocks(text) if name == section]


def missing_program(section: str) -> str:
    """The error for a markdown file with no program block in `section`."""
    return f"no `### {section.capitalize()}` section with a ```prose block in this file"


def _fenced_blocks(text: str) -> list[tuple[str, ProseBlock]]:
    lines = text.split("\n")
    section = ""
    out: list[tuple[str, ProseBlock]] = []
    index = 0
    in_frontmatter = bool(lines) and lines[0].strip() == "---"
    if in_frontmatter:
        index = 1
        while index < len(lines) and lines[index].strip() not in ("---", "..."):
            index += 1
        index += 1
    while index < len(lines):
        line = lines[index]
        fence = _FENCE_OPEN.match(line)
        if fence:
            indent, marker, info = fence.group(1), fence.group(2), fence.group(3).lower()
            start = index + 1
            end = start
            closed = False
            while end < len(lines):
                candidate = lines[end].strip()
                if candidate.startswith(marker[0] * len(marker)) and not candidate.strip(marker[0]):
                    closed = True
                    break
                end += 1
            if info == "prose":
                body = [
                    row[len(indent) :] if row.startswith(indent) else row.lstrip()
                    for row in lines[start:end]
                ]
                out.append(
                    (section, ProseBlock("\n".join(body) + "\n", start, index + 1, end + 1, closed))
                )
            index = end + 1
            continue
        heading = _HEADING.match(line)
        if heading:
            section = heading.group(2).strip().lower()
        index += 1
    return out
