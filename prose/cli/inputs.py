"""Exit codes and path expansion for commands (reading a file is `prose.files.read_text`)."""

from __future__ import annotations

from pathlib import Path

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def expand_paths(paths: tuple[str, ...], pattern: str = "*.prose.md") -> list[str]:
    """Files as given; folders searched recursively for `pattern`, sorted."""
    out: list[str] = []
    for path in paths:
        candidate = Path(path)
        if candidate.is_dir():
            out.extend(str(found) for found in sorted(candidate.rglob(pattern)))
        else:
            out.append(path)
    return out
