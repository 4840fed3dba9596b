"""The linter: rules over a pattern's spec and program, returning diagnostics.

`check(spec, program)` never raises for a finding. `lint_text(text, path)`
runs the whole pipeline on a file's text: spec loading, parsing, the rules,
inline suppressions and the profile.
"""

from __future__ import annotations

from prose.check.lint import LintResult, check, lint_pattern, lint_text

__all__ = ["LintResult", "check", "lint_pattern", "lint_text"]
