"""Every committed pattern is in canonical form (issue: `prose fmt --check` exits 0)."""

from __future__ import annotations

from tests.conftest import ROOT, run_prose


def test_library_is_canonically_formatted() -> None:
    files = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "patterns").glob("*.prose.md"))
    assert len(files) >= 19
    result = run_prose("fmt", "--check", *files)
    assert result.code == 0, result.output
