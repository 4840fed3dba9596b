"""Syntax: the grammar, the AST and the markdown block extraction.

This is the only package that imports Lark; nothing it returns holds a Lark
object.
"""

from __future__ import annotations

import sys

if "lark" not in sys.modules and "regex" not in sys.modules:
    # Lark imports the third-party `regex` module whenever it is installed (LiteLLM's
    # tiktoken brings it), only to read Unicode categories (`\p{L}`) in a grammar's
    # terminals; prose's grammar has none, and Lark parses with `re`. Importing `regex`
    # was 20-60 ms of a cold `prose lint` (docs/benchmarks.md, cold lint), so it is hidden
    # while Lark loads, and importable again right after (for LiteLLM).
    sys.modules["regex"] = None  # type: ignore[assignment]
    try:
        import lark.utils  # noqa: F401  (where Lark looks for `regex`)
    finally:
        del sys.modules["regex"]

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
