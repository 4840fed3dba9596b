"""A pattern file read, its spec loaded and its program parsed: once.

`prose run` hands one `PatternFile` from the command through the lint gate,
the policy and the interpreter; `prose lint`, `prose test` and nested
patterns use the same object, so no stage reads, loads or parses the file
again (tests/test_route.py counts it).

    pattern = read_pattern("patterns/dialectic.prose.md")
    pattern.spec        # prose.spec.model.PatternSpec, or None if the file is empty
    pattern.program     # the parsed prose block, or None (see `syntax_error`)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.errors import ProseSyntaxError

if TYPE_CHECKING:
    from prose.diagnostics.model import Diagnostic
    from prose.spec.model import PatternSpec, SpecResult
    from prose.syntax.nodes import Program


@dataclass(frozen=True)
class PatternFile:
    """One pattern file: its text, spec (with the spec's findings) and parsed program."""

    path: str
    text: str
    loaded: SpecResult
    program: Program | None
    # Why `program` is None when the spec has a prose block (a syntax error).
    syntax_error: ProseSyntaxError | None = None
    # What was worked out from this file once, for every later stage of the command:
    # `prose.check.lint` keeps the file's checking context and default lint here, so
    # `prose run --report`'s gate, audit and graph analyse the program once.
    analyses: dict[tuple[Any, ...], Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def spec(self) -> PatternSpec | None:
        return self.loaded.spec

    @property
    def spec_errors(self) -> list[Diagnostic]:
        return list(self.loaded.errors)

    @property
    def spec_diagnostics(self) -> list[Diagnostic]:
        return list(self.loaded.diagnostics)


def pattern_from_text(text: str, path: str) -> PatternFile:
    """Load and parse a pattern file's text (never raises for a problem in it).

    The program is the first ```prose block of the kind's program section
    (`### Delegation` or `### Execution`). A contract's `call name` to a sibling
    contract or a `## name` node makes `name` a slot with that contract
    (`prose.contracts.with_callees`); a function with no program is one call
    to itself.
    """
    from prose.spec.loader import load_spec
    from prose.syntax import parse
    from prose.syntax.markdown import is_markdown

    loaded = load_spec(text, path)
    program: Program | None = None
    syntax_error: ProseSyntaxError | None = None
    spec = loaded.spec
    if spec is not None and spec.delegation_blocks:
        try:
            # A pattern's program is `### Delegation`'s block, which `parse` finds; any
            # other kind's is its program section's block (`### Execution`).
            program = (
                _parse_block(spec, text, path)
                if is_markdown(path) and spec.program_section != "delegation"
                else parse(text, path)
            )
        except ProseSyntaxError as error:
            syntax_error = error
    if program is not None:  # `do vote.majority(...)`: the blocks other files export
        from prose.use_blocks import import_blocks

        program, problems = import_blocks(program, path)
        if problems:
            loaded = loaded.model_copy(update={"diagnostics": [*loaded.diagnostics, *problems]})
    if spec is not None and not spec.is_pattern and syntax_error is None:
        from prose.contracts import with_callees

        spec, program = with_callees(spec, program)
        loaded = loaded.model_copy(update={"spec": spec})
    return PatternFile(path, text, loaded, program, syntax_error)


def _parse_block(spec: PatternSpec, text: str, path: str) -> Program:
    from prose.source import Span
    from prose.syntax import parse_program

    block = spec.delegation_blocks[0]
    if not block.closed:
        raise ProseSyntaxError.at(
            Span.point(path, block.fence_line, 1),
            f"the ```prose block opened at {block.fence_line}:1 is not closed",
            text,
        )
    return parse_program(block.source, path, block.line_offset)


def read_pattern(path: str | Path) -> PatternFile:
    """Read, load and parse a pattern file.

    Raises `InputReadError` when it cannot be read and `ProseSyntaxError` when
    it is not UTF-8 text or is empty (`prose.files.read_text`); a problem in
    the text is in the result, never raised.
    """
    from prose.files import read_text

    name = str(path)
    file, sep, node = name.partition(NODE_MARK)
    if sep and file.endswith(".md") and not Path(name).exists():
        return node_of(pattern_from_text(read_text(file), file), node)
    return pattern_from_text(read_text(name), name)


NODE_MARK = "#"


def node_of(pattern: PatternFile, node: str) -> PatternFile:
    """The `## node` of a contract file as a program of its own (`FILE#node`): a callee
    with its own program runs as a nested pattern (`prose.contracts`). Its calls resolve
    to the file's other nodes and its siblings."""
    from prose.contracts import with_callees
    from prose.source import Span

    spec = pattern.spec
    found = spec.inline_node(node) if spec is not None else None
    name = f"{pattern.path}{NODE_MARK}{node}"
    if spec is None or found is None:
        raise ProseSyntaxError.at(Span.point(pattern.path, 1, 1), f"no `## {node}` in this file")
    found = found.model_copy(update={"inline_nodes": spec.inline_nodes})
    program: Program | None = None
    syntax_error: ProseSyntaxError | None = None
    if found.delegation_blocks:
        try:
            program = _parse_block(found, pattern.text, pattern.path)
        except ProseSyntaxError as error:
            syntax_error = error
    if syntax_error is None:
        found, program = with_callees(found, program)
    loaded = pattern.loaded.model_copy(update={"spec": found})
    return PatternFile(name, pattern.text, loaded, program, syntax_error)


class PatternFiles:
    """Pattern files read once each, by path: one command's cache.

    `spec_result` is a `prose.spec.instance_loader.SpecLoader`, so loading an
    instance file reads its pattern here, and the run then takes the same
    `PatternFile` from `get`.
    """

    def __init__(self) -> None:
        self._files: dict[str, PatternFile] = {}

    def get(self, path: str | Path) -> PatternFile:
        """The pattern file at `path`, read on first use (raises as `read_pattern`)."""
        name = str(Path(path))  # `./a.prose.md` and `a.prose.md` are one file
        found = self._files.get(name)
        if found is None:
            found = self._files[name] = read_pattern(name)
        return found

    def paths(self) -> list[str]:
        """The paths of the pattern files read so far (the used ones included, once checked)."""
        return list(self._files)

    def spec_result(self, path: Path) -> SpecResult:
        """The loaded spec of `path`; a file that is not UTF-8 text or is empty is a finding."""
        from prose.spec.loader import load_spec_file

        try:
            return self.get(path).loaded
        except ProseSyntaxError:
            return load_spec_file(path)  # it reports that problem as a PS1xx finding
