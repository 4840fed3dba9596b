"""Syntax: the grammar, the AST and the markdown block extraction.

This is the only package that imports Lark (its parser runs from a module generated
from the grammar, `generate_parser.py`); nothing it returns holds a Lark object.
"""

from __future__ import annotations

from prose.errors import ProseSyntaxError
from prose.source import Span
from prose.syntax import nodes
from prose.syntax.markdown import ProseBlock, delegation_blocks, is_markdown, missing_program
from prose.syntax.nodes import Program

__all__ = [
    "ProseBlock",
    "ProseSyntaxError",
    "delegation_blocks",
    "is_markdown",
    "nodes",
    "parse",
    "parse_program",
]


def parse_program(source: str, filename: str = "<string>", line_offset: int = 0) -> Program:
    """Parse prose source (the inside of a block). See `parser.parse_program`."""
    from prose.syntax.parser import parse_program as _parse

    return _parse(source, filename, line_offset)


def parse(text: str, filename: str = "<string>", section: str = "delegation") -> Program:
    """Parse a pattern file's program: a `*.prose.md` file's block under `### <section>`
    (`delegation` in a pattern, `execution` in other kinds), or bare prose.

    Positions are in the file `text` came from. Raises ProseSyntaxError.
    """
    if not is_markdown(filename):
        if not text.strip():
            raise ProseSyntaxError.at(Span.point(filename, 1, 1), "the file is empty")
        return parse_program(text, filename)
    if not text.strip():
        raise ProseSyntaxError.at(Span.point(filename, 1, 1), "the file is empty")
    blocks = delegation_blocks(text, section)
    if not blocks:
        raise ProseSyntaxError.at(Span.point(filename, 1, 1), missing_program(section))
    block = blocks[0]
    if not block.closed:
        raise ProseSyntaxError.at(
            Span.point(filename, block.fence_line, 1),
            f"the ```prose block opened at {block.fence_line}:1 is not closed",
            text,
        )
    return parse_program(block.source, filename, block.line_offset)
