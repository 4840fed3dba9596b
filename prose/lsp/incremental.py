"""Pattern files read from a document's text, reparsing only the statements an edit touched.

The program is cut at its top-level statements (a line that starts in column 1 and is
not a comment, a closing bracket or an `elif`/`else`/`catch`/`finally` clause); each
piece is parsed by the real parser (`prose.syntax.parse_program`) and remembered by its
text. An edit then reparses the pieces it changed; a piece that only moved (lines
inserted above it) is reused with its positions moved. When every piece parses, their
statements, concatenated, are the program the whole block parses to
(tests/test_lsp_analysis.py checks it, positions included, for every pattern in
`patterns/` and across edits). When some do not, the file's syntax errors are those of
the pieces that failed, each reported by the parser at its own line: the statement being
edited, rather than everything the whole-block parse's recovery would retry after it
(`prose lint` may word an error that spans statements differently, such as an unclosed
triple-quoted string).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.walk import map_spans

if TYPE_CHECKING:
    from prose.errors import ProseSyntaxError, SyntaxProblem
    from prose.pattern_file import PatternFile

_CLAUSE = re.compile(r"(elif|else|catch|finally)\b")


class ProgramCache:
    """The last `PatternFile` per path, and the parsed pieces of its program."""

    def __init__(self) -> None:
        self._last: dict[str, PatternFile] = {}
        # path -> piece text -> (line offset it was parsed at, statements, comments)
        self._pieces: dict[str, dict[str, tuple[int, tuple[n.Stmt, ...], tuple[n.Comment, ...]]]] = {}

    def pattern(self, text: str, path: str) -> PatternFile:
        """The pattern file of `text`, as `prose.pattern_file.pattern_from_text` returns it."""
        last = self._last.get(path)
        if last is not None and last.text == text:
            return last
        found = self._last[path] = self._read(text, path)
        return found

    def forget(self, path: str) -> None:
        self._last.pop(path, None)
        self._pieces.pop(path, None)

    def _read(self, text: str, path: str) -> PatternFile:
        from prose.errors import ProseSyntaxError
        from prose.pattern_file import PatternFile
        from prose.spec.loader import load_spec
        from prose.syntax import delegation_blocks, parse

        loaded = load_spec(text, path)
        if loaded.spec is None or not loaded.spec.delegation_blocks:
            return PatternFile(path, text, loaded, None)
        section = loaded.spec.program_section  # `### Execution` in kinds other than a pattern
        blocks = delegation_blocks(text, section)
        if blocks and blocks[0].closed:
            found = self._program(blocks[0].source, path, blocks[0].line_offset)
            if isinstance(found, n.Program):
                return PatternFile(path, text, loaded, found)
            return PatternFile(path, text, loaded, None, found)
        try:  # no block, or an unclosed one: the parser says so
            return PatternFile(path, text, loaded, parse(text, path, section))
        except ProseSyntaxError as error:
            return PatternFile(path, text, loaded, None, error)

    def _program(self, source: str, path: str, offset: int) -> n.Program | ProseSyntaxError:
        """The program of a closed block parsed piece by piece, or the pieces' syntax errors."""
        from prose.errors import ProseSyntaxError
        from prose.syntax import parse_program
        from prose.syntax.parser import MAX_REPORTED_ERRORS

        known = self._pieces.get(path, {})
        kept: dict[str, tuple[int, tuple[n.Stmt, ...], tuple[n.Comment, ...]]] = {}
        body: list[n.Stmt] = []
        comments: list[n.Comment] = []
        problems: list[SyntaxProblem] = []
        for start, piece in pieces(source):
            at = offset + start
            cached = known.get(piece) or kept.get(piece)
            if cached is not None and cached[0] == at:
                statements, notes = cached[1], cached[2]
            elif cached is not None:
                delta = at - cached[0]
                statements = tuple(moved(s, delta) for s in cached[1])
                notes = tuple(moved(c, delta) for c in cached[2])
            else:
                try:
                    parsed = parse_program(piece, path, at)
                except ProseSyntaxError as error:
                    problems.extend(error.problems)
                    continue
                statements, notes = parsed.body, parsed.comments
            kept[piece] = (at, statements, notes)
            body.extend(statements)
            comments.extend(notes)
        self._pieces[path] = kept
        if problems:
            return ProseSyntaxError(problems[:MAX_REPORTED_ERRORS])
        text = source if source.endswith("\n") else source + "\n"
        span = Span(path, offset + 1, 1, offset + text.count("\n"), 1)
        return n.Program(tuple(body), tuple(comments), source, span=span)


def pieces(source: str) -> list[tuple[int, str]]:
    """The source cut before each top-level statement: (0-based first line, text)."""
    lines = source.split("\n")
    starts = [0] + [index for index, line in enumerate(lines)
                    if index and line and line[0] not in " \t#)]}\"\r" and not _CLAUSE.match(line)]
    out = []
    for number, first in enumerate(starts):
        stop = starts[number + 1] if number + 1 < len(starts) else len(lines)
        text = "\n".join(lines[first:stop])
        out.append((first, text + "\n" if stop < len(lines) else text))
    return out


def moved(node: Any, delta: int) -> Any:
    """`node` with every position `delta` lines further down (a new node; nodes are frozen).
    A position of line 0 (none) stays."""

    def down(span: Span) -> Span:
        if span.line == 0:
            return span
        return Span(span.file, span.line + delta, span.column, span.end_line + delta,
                    span.end_column)

    return map_spans(node, down)
