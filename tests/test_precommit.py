"""The pre-commit hook definitions point at real commands."""

from __future__ import annotations

import yaml

from tests.conftest import ROOT, run_prose


def test_hooks_run_the_cli_on_pattern_files() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {hook["id"] for hook in hooks} == {"prose-lint", "prose-fmt"}
    for hook in hooks:
        assert hook["entry"].startswith("prose ")
        assert hook["files"] == r"\.prose\.md$"
        args = hook["entry"].split()[1:]
        result = run_prose(*args, "patterns/dialectic.prose.md")
        assert result.code == 0, result.output
