"""`use "path" as alias`: where a target may be, and cycles between patterns.

A pattern file is data, so a `use` may name only another pattern file, and
only where the pattern's author could have put one:

- the target is a relative path ending in `.prose.md`, resolved against the
  folder of the pattern that says `use` (an absolute path is refused);
- after resolving `..` and symbolic links it lies inside one of the *roots*: the
  current folder (the project), the folder of the pattern given to the
  command, or the standard library (`prose.resources.patterns_dir`).

A target outside those is refused before its file is opened, so no byte of
it is read or echoed. Patterns nest at most `MAX_NESTING` deep at run time. The linter (PT305), `prose run` and nested runs all ask
`resolve_use`; `use_cycle` follows the `use`s of a file to find a pattern that
ends up using itself, which the linter reports and the run refuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from prose.errors import ProseError

if TYPE_CHECKING:
    from prose.pattern_file import PatternFiles
    from prose.syntax.nodes import Program

from prose.use_paths import MAX_NESTING, SUFFIX, UseRefused, resolve_use, use_roots

__all__ = ["MAX_NESTING", "SUFFIX", "UseRefused", "resolve_use", "use_cycle", "use_roots"]


def use_cycle(pattern: str | Path, roots: Sequence[Path],
              program: Program | None = None) -> list[str] | None:
    """A chain of files from `pattern` back to a pattern already on it, following `use`s, or
    None. `program` is the pattern's own program when it is not read from its file (the
    text being linted). Targets that are refused, missing or do not parse are not followed
    (other diagnostics report them)."""
    from prose.pattern_file import PatternFiles

    files = PatternFiles()
    start = Path(pattern).resolve()
    path: list[Path] = []
    done: set[Path] = set()

    def visit(current: Path) -> list[str] | None:
        if current in path:
            loop = [*path[path.index(current):], current]
            return [str(item) for item in loop]
        if current in done:
            return None
        path.append(current)
        given = program if current == start and program is not None else None
        for target in _targets(current, files, given):
            try:
                found = resolve_use(target, current, roots)
            except UseRefused:
                continue
            cycle = visit(found)
            if cycle is not None:
                return cycle
        path.pop()
        done.add(current)
        return None

    return visit(start)


def _targets(file: Path, files: PatternFiles, program: Program | None) -> list[str]:
    from prose.syntax import nodes as n

    if program is None:
        try:
            program = files.get(file).program
        except ProseError:
            return []
    return [s.path for s in program.body if isinstance(s, n.Use)] if program is not None else []
