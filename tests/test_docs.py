"""Generated documentation and golden files are up to date (regenerate with the commands below)."""

from __future__ import annotations

from tests.conftest import ROOT


def test_cli_reference_is_current() -> None:
    from prose.cli.docgen import render

    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == render(), "run `python -m prose.cli.docgen` to regenerate docs/cli.md"


def test_pattern_catalogue_is_current() -> None:
    from prose.cli.patterns_doc import render

    current = (ROOT / "docs" / "patterns.md").read_text(encoding="utf-8")
    assert current == render(), "run `python -m prose.cli.patterns_doc` to regenerate docs/patterns.md"


def test_every_command_is_documented() -> None:
    from prose.cli.main import COMMANDS

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f"## prose {name}" in text, name


def test_flow_table_in_the_language_reference_is_current() -> None:
    from prose.lang.flows import markdown_table

    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    start = text.index("<!-- flow-table:start -->") + len("<!-- flow-table:start -->")
    end = text.index("<!-- flow-table:end -->")
    assert text[start:end].strip() == markdown_table(), "regenerate: python -m prose.lang.flows"


def test_builtins_table_in_the_language_reference_is_current() -> None:
    from prose.lang.builtins import markdown_table

    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    start = text.index("<!-- builtins-table:start -->") + len("<!-- builtins-table:start -->")
    end = text.index("<!-- builtins-table:end -->")
    assert text[start:end].strip() == markdown_table(), "regenerate: python -m prose.lang.builtins"


def test_golden_files_are_current() -> None:
    # tests/test_syntax.py compares each golden node by node; this names the command.
    from tests.make_golden import COMMAND, stale

    found = [path.name for path in stale()]
    assert found == [], f"run `{COMMAND}` to regenerate {', '.join(found)}"
