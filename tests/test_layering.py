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
    "runtime": ("prose.check", "prose.ledger", "prose.cli", "prose.testing"),
    "syntax": ("prose.check", "prose.runtime", "prose.ledger", "prose.llm", "prose.cli",
               "prose.spec"),
    "spec": ("prose.check", "prose.runtime", "prose.ledger", "prose.llm", "prose.cli"),
    "llm": ("prose.check", "prose.runtime", "prose.ledger", "prose.cli"),
    "check": ("prose.runtime", "prose.ledger", "prose.llm", "prose.cli", "prose.testing"),
    "ledger": ("prose.cli", "prose.testing"),  # the audit reads call sites through check
    "testing": ("prose.cli",),
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


# --- the import graph (prose.cli.architecture_doc) --------------------------------------


def test_prose_has_no_import_cycle() -> None:
    # Run-time edges only: module-level imports and imports inside functions (a lazy
    # import still closes a circle); `if TYPE_CHECKING:` imports never run.
    from prose.cli.architecture_doc import build_graph, describe_cycle, find_cycles

    graph = build_graph()
    cycles = find_cycles(graph.run_time())
    report = "\n".join(
        f"{' -> '.join((*cycle, cycle[0]))}\n{describe_cycle(graph, cycle)}" for cycle in cycles
    )
    assert cycles == [], f"{len(cycles)} import cycle(s) in prose/:\n{report}"


def test_architecture_doc_is_current() -> None:
    from prose.cli.architecture_doc import TARGET, render

    current = TARGET.read_text(encoding="utf-8") if TARGET.is_file() else ""
    assert current == render(), (
        "run `python -m prose.cli.architecture_doc` to regenerate docs/architecture.md"
    )


def test_the_cycle_finder_on_a_small_graph() -> None:
    from prose.cli.architecture_doc import find_cycles, strongly_connected

    graph = {
        "a": ["b"], "b": ["c"], "c": ["a", "d"],  # a circle of three
        "d": ["e"], "e": ["d", "f"],  # a circle of two below it
        "f": [], "g": ["g"],  # a leaf; a module importing itself
        "h": ["a", "f"],  # above everything, on no circle
    }
    assert strongly_connected(graph) == [["a", "b", "c"], ["d", "e"], ["f"], ["g"], ["h"]]
    assert find_cycles(graph) == [("g",), ("d", "e"), ("a", "b", "c")]
    # A chord gives a shorter circle through some members: each member's shortest is listed.
    graph["b"] = ["c", "a"]
    assert find_cycles(graph) == [("g",), ("a", "b"), ("d", "e"), ("a", "b", "c")]
    assert find_cycles({"x": ["y"], "y": ["z"], "z": []}) == []


def test_the_graph_resolves_imports_and_tells_when_they_run(tmp_path: Path) -> None:
    from prose.cli.architecture_doc import When, build_graph, find_cycles

    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "base.py": "import json\nimport yaml\n",
        "sub/__init__.py": "from .leaf import thing\n",
        "sub/leaf.py": (
            "from __future__ import annotations\n"
            "from typing import TYPE_CHECKING\n"
            "from .. import base\n"
            "if TYPE_CHECKING:\n"
            "    from pkg.top import Top\n"
            "def later():\n"
            "    from pkg import top\n"
            "    return top\n"
            "thing = 1\n"
        ),
        "top.py": "from pkg.sub.leaf import thing\nimport pkg.base as b\n",
    }
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    graph = build_graph(package)
    assert sorted(graph.modules) == ["pkg", "pkg.base", "pkg.sub", "pkg.sub.leaf", "pkg.top"]
    edges = {(e.source, e.target, e.line, e.when, e.via) for e in graph.edges}
    assert edges == {
        ("pkg.sub", "pkg.sub.leaf", 1, When.IMPORT, None),
        ("pkg.sub.leaf", "pkg.base", 3, When.IMPORT, None),  # `from .. import base`: a module
        ("pkg.sub.leaf", "pkg.top", 5, When.TYPING, None),
        ("pkg.sub.leaf", "pkg.top", 7, When.CALL, None),  # `from pkg import top`: a module
        ("pkg.top", "pkg.sub.leaf", 1, When.IMPORT, None),
        ("pkg.top", "pkg.sub", 1, When.IMPORT, "pkg.sub.leaf"),  # its __init__ runs first
        ("pkg.top", "pkg.base", 2, When.IMPORT, None),
    }
    assert graph.third_party == {"pkg.base": {"yaml"}}
    # leaf -> top only inside a function, top -> leaf at import: still a circle, and
    # one through pkg/sub/__init__.py, which importing pkg.sub.leaf runs first.
    assert find_cycles(graph.run_time()) == [("pkg.sub.leaf", "pkg.top"),
                                             ("pkg.sub", "pkg.sub.leaf", "pkg.top")]
    (package / "sub" / "leaf.py").write_text(files["sub/leaf.py"].replace(
        "def later():\n    from pkg import top\n    return top\n", ""), encoding="utf-8")
    assert find_cycles(build_graph(package).run_time()) == []
