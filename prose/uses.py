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

SUFFIX = ".prose.md"
# Nested pattern runs (through `use` or a `pattern:` binding) one run may stack.
MAX_NESTING = 16


class UseRefused(ProseError):
    """A `use` target that is not a pattern file inside the project or the library."""


def use_roots(pattern: str | Path) -> tuple[Path, ...]:
    """Where the targets of `pattern`'s uses (and of theirs) may be."""
    from prose.resources import patterns_dir

    roots = [Path.cwd(), Path(pattern).resolve().parent]
    try:
        roots.append(patterns_dir())
    except FileNotFoundError:  # pragma: no cover - an installation without its data
        pass
    return tuple(dict.fromkeys(root.resolve() for root in roots))


def resolve_use(target: str, using: str | Path, roots: Sequence[Path]) -> Path:
    """The file `use target` names in the pattern file `using`; `UseRefused` if not allowed."""
    if not target.endswith(SUFFIX):
        raise UseRefused(f"`use \"{target}\"`: a `use` names a pattern file (`*{SUFFIX}`)")
    if Path(target).is_absolute():
        raise UseRefused(f"`use \"{target}\"`: an absolute path is refused; give the path "
                         "relative to the pattern's folder")
    resolved = (Path(using).resolve().parent / target).resolve()
    if not any(resolved.is_relative_to(root) for root in roots):
        allowed = ", ".join(str(root) for root in roots)
        raise UseRefused(f"`use \"{target}\"`: {resolved} is outside the project and the "
                         f"library (allowed: {allowed})")
    return resolved


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
