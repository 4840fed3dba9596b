"""Rule documentation: every rule documents itself, has fixtures, and docs/rules is current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from prose.check import docgen
from prose.check.catalogue import RuleEntry, catalogue
from prose.check.registry import all_rules, rule_by_code, rule_table
from prose.check.rule import DOC_SECTIONS
from prose.diagnostics.model import Severity
from tests.conftest import FIXTURES, ROOT

DOCS = ROOT / "docs" / "rules"
REQUIRED = list(docgen.SECTIONS)
_REGENERATE = "docs/rules is out of date: run `python -m prose.check.docgen`"


@pytest.mark.parametrize("code", sorted(rule_table()))
def test_lint_rule_docstring_has_every_section(code: str) -> None:
    rule = rule_by_code(code)
    assert rule is not None
    doc = rule.documentation()
    assert rule.summary() and not rule.summary().startswith("#"), f"{code}: the first line is a summary"
    assert docgen.section_titles(doc) == REQUIRED, (
        f"{code} ({type(rule).__name__}): the docstring needs the sections "
        + " / ".join(DOC_SECTIONS) + ", in that order, as `## ` headings"
    )
    empty = [title for title, body in docgen.doc_sections(doc).items() if not body]
    assert empty == [], f"{code}: empty sections {empty}"


@pytest.mark.parametrize("code", sorted(rule_table()))
def test_lint_rule_has_a_fixture_file(code: str) -> None:
    path = FIXTURES / "rules" / f"{code}.yaml"
    assert path.is_file(), f"{code} has no fixture: create {path.relative_to(ROOT)} (see its README.md)"


@pytest.mark.parametrize("entry", catalogue(), ids=lambda entry: entry.code)
def test_every_code_in_the_catalogue_has_every_section(entry: RuleEntry) -> None:
    assert docgen.section_titles(entry.doc) == REQUIRED, entry.code
    assert entry.summary and entry.name and entry.severity in ("error", "warning", "info")


def test_codes_are_unique() -> None:
    entries = catalogue()
    assert len({entry.code for entry in entries}) == len(entries)


def test_names_are_unique() -> None:
    names = [entry.name for entry in catalogue()]
    assert sorted(name for name in set(names) if names.count(name) > 1) == []


def test_docs_match_the_generator() -> None:
    pages = docgen.render()
    assert docgen.stale(DOCS, pages) == [], _REGENERATE
    on_disk = sorted(path.name for path in DOCS.glob("*"))
    assert on_disk == sorted(pages), _REGENERATE


def test_one_page_per_code_and_an_index() -> None:
    pages = docgen.render()
    codes = [entry.code for entry in catalogue()]
    assert sorted(pages) == sorted([*(f"{code}.md" for code in codes), "README.md"])
    index = pages["README.md"]
    for code in codes:
        assert f"[{code}]({code}.md)" in index
    strict = pages["PN104.md"]
    assert "`error` with `--profile strict`" in strict and "# PN104 `second-let`" in strict
    assert "## Why is this bad?" in pages["PH601.md"]  # the docstring says "Why is this bad"


def test_generator_is_deterministic_and_cleans_up(tmp_path: Path) -> None:
    first = docgen.render()
    assert docgen.render() == first
    stray = tmp_path / "PX999.md"
    stray.write_text(docgen.MARKER + "\n# gone\n", encoding="utf-8")
    mine = tmp_path / "notes.md"
    mine.write_text("# kept: not generated\n", encoding="utf-8")
    docgen.write(tmp_path)
    assert not stray.exists() and mine.exists()
    assert docgen.stale(tmp_path, first) == []
    (tmp_path / "PN101.md").write_text("edited by hand\n", encoding="utf-8")
    assert docgen.stale(tmp_path, first) == ["PN101.md"]


def test_command_line(tmp_path: Path) -> None:
    target = tmp_path / "rules"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "prose.check.docgen", *args], cwd=ROOT,
                              capture_output=True, text=True, check=False, timeout=120)

    assert run("--check", str(target)).returncode == 1
    done = run(str(target))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(path.name for path in target.iterdir()) == sorted(docgen.render())
    checked = run("--check", str(target))
    assert checked.returncode == 0, checked.stderr


# --- the registry ---------------------------------------------------------------------


def test_every_rule_class_is_registered_under_its_code() -> None:
    import prose.check.rules
    from prose.check.rule import Rule

    def subclasses(cls: type[Rule]) -> list[type[Rule]]:
        return [sub for direct in cls.__subclasses__() for sub in (direct, *subclasses(direct))]

    # A base a module's rules share (as `LeakRule`) has subclasses and no code of its own.
    defined = [cls for cls in subclasses(Rule) if cls.__module__.startswith(prose.check.rules.__name__)
               and ("code" in cls.__dict__ or not cls.__subclasses__())]
    table = rule_table()
    assert sorted(table.values(), key=lambda cls: cls.code) == sorted(defined, key=lambda cls: cls.code)
    assert all(table[code].code == code for code in table)
    assert list(table) == sorted(table)
    assert [rule.code for rule in all_rules()] == list(table)


def test_the_decorator_refuses_a_code_taken_twice_or_missing() -> None:
    from prose.check.rule import REGISTERED, Rule, rule

    before = dict(REGISTERED)

    class Twin(Rule):
        code = "PN101"

    class Nameless(Rule):
        pass

    with pytest.raises(RuntimeError, match="rule code PN101 is taken twice: UndefinedName and "):
        rule(Twin)
    with pytest.raises(TypeError, match="sets no `code` of its own"):
        rule(Nameless)
    with pytest.raises(RuntimeError, match="rule code PN101 is taken twice"):
        rule(code="PN101", name="twin", category="names", severity=Severity.ERROR)(Nameless)
    assert before == REGISTERED


def test_the_decorator_holds_the_rules_table_entry() -> None:
    """`@rule(code=..., name=..., category=..., severity=...)` is a rule's entry in the
    registry; a FindingRule's code is its finding's."""
    from prose.check.findings import LetRepeated
    from prose.check.registry import rule_table
    from prose.check.rule import REGISTERED, FindingRule, Rule, rule

    @rule(code="PX999", name="made-up", category="names", severity=Severity.INFO,
          judges_invariants=True, compat_only=True)
    class MadeUp(Rule):
        """A rule made up for this test."""

    try:
        assert REGISTERED["PX999"] is MadeUp
        assert (MadeUp.name, MadeUp.category, MadeUp.severity) == ("made-up", "names", Severity.INFO)
        assert MadeUp.judges_invariants and MadeUp.compat_only
    finally:
        del REGISTERED["PX999"]
    second_let = rule_table()[LetRepeated.code]
    assert issubclass(second_let, FindingRule) and second_let.compat_only


def test_findings_carry_their_code_and_message() -> None:
    """Issue 36 (as pyflakes' messages.py): a finding class names its rule's code and writes
    its own message; a rule that only reports one class is a `FindingRule` with no `check`
    body, and every code a finding names is a registered rule's."""
    import dataclasses
    import typing

    from prose.check import findings
    from prose.check.registry import rule_table
    from prose.check.rule import FindingRule
    from prose.source import Span

    table = rule_table()
    reporters = [cls for cls in table.values() if issubclass(cls, FindingRule)]
    assert len(reporters) >= 9
    for cls in reporters:
        assert "check" not in cls.__dict__, cls.__name__
        assert cls.code == cls.finding.code
    coded = [cls for cls in vars(findings).values() if isinstance(cls, type)
             and issubclass(cls, findings.Finding) and cls.code]
    span = Span("p.prose.md", 1, 1, 1, 2)
    for cls in coded:
        assert cls.code in table, cls.__name__
        hints = typing.get_type_hints(cls)
        values: dict[str, object] = {}
        for field in dataclasses.fields(cls):
            hint = hints[field.name]
            values[field.name] = (span if "Span" in str(hint) else 1 if hint is int
                                  else "read" if field.name == "context" else "break"
                                  if field.name == "keyword" else "x")
        finding = cls(**values)  # type: ignore[arg-type]
        assert finding.message, cls.__name__
        if set(values) - {"span"}:  # a finding that names something names it in backticks
            assert "`" in finding.message + (finding.help or ""), cls.__name__
