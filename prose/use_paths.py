"""Where a `use` target may be: the one resolution `prose.uses` (cycles, the linter, the
run) and `prose.use_blocks` (blocks imported across files) share.

See `prose.uses` for the rules; this module imports nothing of the pattern loader, so
the loader may use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prose.errors import ProseError

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
