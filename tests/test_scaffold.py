"""`prose new` (a pattern that lints clean and a test that passes as written) and `prose list`.

The commands run in this process (`run_prose_in_process`); tests/test_cli_parse.py
and tests/test_runtime_cli.py run the real console script in a new one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, run_prose_in_process

from prose.scaffold import NAME, examples_dir_for, plan_new, title_of, write_plan


def lint_counts(path: Path, cwd: Path) -> dict[str, int]:
    result = run_prose_in_process("lint", "--format", "json", str(path), cwd=cwd)
    assert result.code == 0, result.output
    summary: dict[str, int] = json.loads(result.stdout)["summary"]
    return summary


def test_new_scaffolds_a_pattern_that_lints_clean_and_a_test_that_passes(tmp_path: Path) -> None:
    (tmp_path / "patterns").mkdir()
    result = run_prose_in_process("new", "code-review", cwd=tmp_path)
    assert result.code == 0, result.output
    assert result.stdout.splitlines()[:4] == [
        "created patterns/code-review.prose.md",
        "created examples/code-review.yaml",
        "created examples/code-review.script.yaml",
        "created examples/code-review.test.yaml",
    ]
    pattern = tmp_path / "patterns" / "code-review.prose.md"
    text = pattern.read_text(encoding="utf-8")
    assert text.startswith("---\nname: code-review\nkind: pattern\nversion: 0.1.0\n---\n\n# Code Review\n")
    summary = lint_counts(pattern, tmp_path)
    assert (summary["errors"], summary["warnings"]) == (0, 0)
    lint = run_prose_in_process("lint", str(pattern), cwd=tmp_path)
    assert "invariants: 4 checked, 0 prose-only" in lint.stdout
    tested = run_prose_in_process("test", "examples/code-review.test.yaml", cwd=tmp_path)
    assert tested.code == 0, tested.output
    assert tested.stdout.splitlines() == ["PASS code-review converges in two rounds", "1 passed, 0 failed"]
    ran = run_prose_in_process("run", "examples/code-review.yaml", "--script", "examples/code-review.script.yaml",
                    "--json", "-q", cwd=tmp_path)
    assert ran.code == 0, ran.output
    assert json.loads(ran.stdout)["verdict"] == {"issues": [], "no_issues_found": True}


def test_new_refuses_to_overwrite(tmp_path: Path) -> None:
    assert run_prose_in_process("new", "twice", cwd=tmp_path).code == 0
    before = (tmp_path / "twice.prose.md").read_text(encoding="utf-8")
    again = run_prose_in_process("new", "twice", cwd=tmp_path)
    assert again.code == 1
    assert again.stderr.startswith("error: refusing to overwrite twice.prose.md, examples/twice.yaml")
    assert (tmp_path / "twice.prose.md").read_text(encoding="utf-8") == before
    (tmp_path / "other.prose.md").write_text("mine", encoding="utf-8")
    one = run_prose_in_process("new", "other", cwd=tmp_path)
    assert one.code == 1 and "refusing to overwrite other.prose.md: remove it" in one.stderr
    assert not (tmp_path / "examples" / "other.yaml").exists()  # nothing written at all


def test_new_without_a_patterns_folder_writes_here_and_examples_below(tmp_path: Path) -> None:
    result = run_prose_in_process("new", "solo", cwd=tmp_path)
    assert result.code == 0
    assert (tmp_path / "solo.prose.md").is_file()
    assert (tmp_path / "examples" / "solo.yaml").read_text(encoding="utf-8").splitlines()[1] == \
        "pattern: ../solo.prose.md"


def test_new_with_dir_and_examples(tmp_path: Path) -> None:
    result = run_prose_in_process("new", "triage", "--dir", "src/pats", "--examples", "src/ex", cwd=tmp_path)
    assert result.code == 0, result.output
    assert (tmp_path / "src" / "pats" / "triage.prose.md").is_file()
    instance = (tmp_path / "src" / "ex" / "triage.yaml").read_text(encoding="utf-8")
    assert "pattern: ../pats/triage.prose.md" in instance
    assert run_prose_in_process("test", "src/ex", cwd=tmp_path).code == 0


@pytest.mark.parametrize("name", ["Bad Name", "1st", "x--y", "x-", "x.prose.md"])
def test_new_rejects_a_bad_name(tmp_path: Path, name: str) -> None:
    result = run_prose_in_process("new", name, cwd=tmp_path)
    assert result.code == 2
    assert "is not a pattern name" in result.stderr
    assert not any(tmp_path.iterdir())


def test_new_from_a_library_pattern(tmp_path: Path) -> None:
    result = run_prose_in_process("new", "my-debate", "--from", "dialectic", cwd=tmp_path)
    assert result.code == 0, result.output
    copy = (tmp_path / "my-debate.prose.md").read_text(encoding="utf-8")
    original = (ROOT / "patterns" / "dialectic.prose.md").read_text(encoding="utf-8")
    assert "name: my-debate" in copy and "# My Debate" in copy
    assert copy.replace("name: my-debate", "name: dialectic").replace("# My Debate", "# Dialectic") \
        == original
    summary = lint_counts(tmp_path / "my-debate.prose.md", tmp_path)
    assert (summary["errors"], summary["warnings"]) == (0, 0)
    assert (tmp_path / "examples" / "my-debate.yaml").is_file()
    library_examples = ROOT / "examples" / "dialectic.test.yaml"
    if library_examples.is_file():
        assert run_prose_in_process("test", "examples/my-debate.test.yaml", cwd=tmp_path).code == 0
    else:
        assert "note: the library has no example script and test" in result.stdout


def test_new_from_an_unknown_pattern(tmp_path: Path) -> None:
    result = run_prose_in_process("new", "x", "--from", "no-such-pattern", cwd=tmp_path)
    assert result.code == 2
    assert "no pattern `no-such-pattern`" in result.stderr


def test_copy_rewrites_the_example_references(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    (library / "patterns").mkdir(parents=True)
    (library / "examples").mkdir()
    source = library / "patterns" / "base.prose.md"
    source.write_text((ROOT / "patterns" / "dialectic.prose.md").read_text(encoding="utf-8")
                      .replace("name: dialectic", "name: base"), encoding="utf-8")
    (library / "examples" / "base.yaml").write_text(
        "pattern: ../patterns/base.prose.md\nwith:\n  thesis: { model: a }\n  antithesis: { model: b }\n"
        "inputs:\n  task_brief: Is it?\n", encoding="utf-8")
    (library / "examples" / "base.script.yaml").write_text(
        "slots: { thesis: [T1, T2], antithesis: [A1, A2] }\n", encoding="utf-8")
    (library / "examples" / "base.test.yaml").write_text(
        "instance: base.yaml\nscript: base.script.yaml\nexpect: { calls: { thesis: 2 } }\n",
        encoding="utf-8")
    plan = plan_new("fork", tmp_path / "out" / "patterns", tmp_path / "out" / "examples", str(source))
    written = write_plan(plan)
    assert [p.name for p in written] == ["fork.prose.md", "fork.yaml", "fork.script.yaml", "fork.test.yaml"]
    test = (tmp_path / "out" / "examples" / "fork.test.yaml").read_text(encoding="utf-8")
    assert test.startswith("instance: fork.yaml\nscript: fork.script.yaml\n")
    instance = (tmp_path / "out" / "examples" / "fork.yaml").read_text(encoding="utf-8")
    assert instance.startswith("pattern: ../patterns/fork.prose.md\n")
    result = run_prose_in_process("test", str(tmp_path / "out" / "examples"))
    assert result.code == 0, result.output


def test_names_and_titles() -> None:
    assert title_of("code-review") == "Code Review" and title_of("a_b") == "A B"
    assert NAME.match("two-reviewer-gate") and not NAME.match("Two")
    assert examples_dir_for(Path("patterns")) == Path("examples")
    assert examples_dir_for(Path("src")) == Path("src/examples")


# --- prose list -------------------------------------------------------------------------


def test_list_shows_every_library_pattern_one_line_each() -> None:
    result = run_prose_in_process("list")
    assert result.code == 0, result.output
    lines = result.stdout.splitlines()
    files = sorted(p.name.removesuffix(".prose.md") for p in (ROOT / "patterns").glob("*.prose.md"))
    assert [line.split()[0] for line in lines] == files
    dialectic = next(line for line in lines if line.startswith("dialectic "))
    assert dialectic.split()[1] == "0.1.0"
    assert dialectic.endswith("Two services argue for and against a position for a fixed number of "
                              "rounds; the exchange is the result.")


def test_list_json() -> None:
    result = run_prose_in_process("list", "--json")
    assert result.code == 0
    entries = json.loads(result.stdout)
    names = [entry["name"] for entry in entries]
    assert names == sorted(names) and "proposer-adversary" in names
    assert set(entries[0]) == {"name", "version", "summary", "path"}
