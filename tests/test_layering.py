"""The layering of the package: the language's rules live below everything that uses them.

`prose.lang` is the one floor for the rules (issue 12): the linter, the run time and the
audit all import it, and the run time imports nothing from the linter, so a rule cannot
be copied into one of them and drift.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "prose"

# package -> packages it must never import (directly, or lazily inside a function)
FORBIDDEN = {
    "lang": ("prose.check", "prose.runtime", "prose.ledger", "prose.llm", "prose.cli"),
    # runtime still reads files through prose.cli.inputs (issue 13 moves that below it)
    "runtime": ("prose.check", "prose.ledger"),
    "syntax": ("prose.check", "prose.runtime", "prose.ledger", "prose.llm", "prose.cli"),
    "llm": ("prose.check", "prose.runtime", "prose.ledger", "prose.cli"),
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_lower_layer_imports_nothing_from_a_higher_one(package: str) -> None:
    bad = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {module}"
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for line, module in _imports(path)
        if any(module == banned or module.startswith(banned + ".") for banned in FORBIDDEN[package])
    ]
    assert bad == []
