"""Finds the fenced `prose` block(s) of a `*.prose.md` file's program section.

The section is `### Delegation` in a pattern and `### Execution` in every other kind
(`prose.spec.kinds`; `prose.spec.loader.program_section` reads it from a file). Fences
and sections follow `prose.markdown_blocks`, the rules the spec reader uses too, so
`prose parse` and `prose fmt` find the block `prose lint` finds (CommonMark: a fence
indented 4 spaces is an indented code block, not a fence).
"""

from __future__ import annotations

from dataclasses import dataclass

from prose.markdown_blocks import (
    SECTION_LEVELS,
    fence_opening,
    normalise_section_name,
    section_heading,
)


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
        fence = fence_opening(line)
        if fence:
            start = index + 1
            end = start
            closed = False
            while end < len(lines):
                if fence.closed_by(lines[end]):
                    closed = True
                    break
                end += 1
            if fence.info == "prose":
                block = ProseBlock(fence.body(lines[start:end]), start, index + 1, end + 1, closed)
                out.append((section, block))
            index = end + 1
            continue
        heading = section_heading(line)
        if heading and heading[0] in SECTION_LEVELS:
            section = normalise_section_name(heading[1])
        index += 1
    return out
