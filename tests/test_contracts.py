"""Every contract kind is read, linted by its own rules, and run or refused (issue 15).

The fixtures under tests/fixtures/contracts are our own: a `newsroom/` program
folder (functions calling a sibling file and a `## name` node, a
responsibility, a gateway, a test, a retired `service`), an unknown kind and a
pattern written with OpenProse's keyed config bullets and a conditional result key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, run_prose, run_prose_in_process

from prose.check import lint_pattern
from prose.diagnostics.model import Severity
from prose.pattern_file import read_pattern

CONTRACTS = FIXTURES / "contracts"
NEWSROOM = CONTRACTS / "newsroom"


def _codes(path: Path) -> list[str]:
    return [d.code for d in lint_pattern(read_pattern(path)).diagnostics]


def _errors(path: Path) -> list[str]:
    return [
        f"{d.span.line}:{d.span.column} {d.code}"
        for d in lint_pattern(read_pattern(path)).diagnostics
        if d.severity is Severity.ERROR
    ]


@pytest.mark.parametrize(
    "name",
    ["condense", "headline-desk", "front-page", "wire", "condense.test"],
)
def test_each_kind_lints_without_a_finding_of_another_kind(name: str) -> None:
    codes = _codes(NEWSROOM / f"{name}.prose.md")
    assert codes == []  # no PS106 (kind), PS110 (slots), PS111 (delegation), PS108 (title)


def test_a_function_reads_inputs_written_as_backticked_name_and_description() -> None:
    spec = read_pattern(NEWSROOM / "condense.prose.md").spec
    assert spec is not None and spec.kind == "function"
    article, audience = spec.parameters
    assert (article.name, article.type, article.optional) == ("article", None, False)
    assert article.description == "the full text of a news article"
    assert (audience.name, audience.optional) == ("audience", True)
    assert [key.name for key in spec.returns] == ["gist"]


def test_a_responsibility_reads_goal_requires_maintains_facets_and_continuity() -> None:
    spec = read_pattern(NEWSROOM / "front-page.prose.md").spec
    assert spec is not None and spec.program_section == "execution"
    assert spec.goal is not None and spec.goal.startswith("The front page always")
    assert [(s.name, s.span.line) for s in spec.subscriptions] == [("wire-stories", 13)]
    assert [(f.name, f.span.line) for f in spec.facets] == [("lead", 19), ("sidebar", 22)]
    assert spec.facets[0].text.startswith("The lead story")
    assert spec.continuity == "self-driven: re-check every hour"
    # the render reads what it subscribes to and the last value of what it maintains
    assert [(p.name, p.optional) for p in spec.parameters] == [
        ("wire-stories", False), ("page", True)]


def test_a_gateway_takes_its_continuity_from_the_heading() -> None:
    spec = read_pattern(NEWSROOM / "wire.prose.md").spec
    assert spec is not None and spec.kind == "gateway"
    assert spec.continuity == "external-driven"


def test_a_test_reads_subject_fixtures_and_expectations() -> None:
    spec = read_pattern(NEWSROOM / "condense.test.prose.md").spec
    assert spec is not None and spec.subject == "condense"
    assert spec.fixtures == {
        "article": "The council approved 12 new bus lines and a budget of 3 million.",
        "audience": "commuters",
    }
    assert [(e.subject, e.negated) for e in spec.expectations] == [("gist", False), ("gist", True)]
    assert spec.expectations[1].statement.startswith("`gist` must not satisfy: invents")


def test_a_retired_kind_is_one_warning_naming_its_replacement() -> None:
    diagnostics = lint_pattern(read_pattern(NEWSROOM / "legacy-desk.prose.md")).diagnostics
    assert [(d.code, d.severity) for d in diagnostics] == [("PS118", Severity.WARNING)]
    assert "`kind: function`" in diagnostics[0].message


def test_an_unknown_kind_is_one_warning_not_three_errors() -> None:
    diagnostics = lint_pattern(read_pattern(CONTRACTS / "unknown-kind.prose.md")).diagnostics
    assert [(d.code, d.severity.value) for d in diagnostics] == [
        ("PS106", "warning"), ("PS115", "info")]


def test_keyed_config_bullets_and_a_conditional_result_key() -> None:
    pattern = read_pattern(CONTRACTS / "keyed-pattern.prose.md")
    spec = pattern.spec
    assert spec is not None
    passes = spec.config_param("max_passes")
    assert passes is not None and (passes.type, passes.default) == ("integer", 2)
    stopped = next(key for key in spec.returns if key.name == "stopped_because")
    assert stopped.conditional and stopped.condition is not None
    # `return { result: current }` leaves out only the conditional key: no PK501
    assert _errors(CONTRACTS / "keyed-pattern.prose.md") == []


def test_calls_resolve_to_a_sibling_file_and_an_inline_node() -> None:
    spec = read_pattern(NEWSROOM / "headline-desk.prose.md").spec
    assert spec is not None
    assert spec.callees == {
        "condense": str((NEWSROOM / "condense.prose.md").resolve()),
        "headline-writer": "#headline-writer",
    }
    condense = spec.slot("condense")
    assert condense is not None and condense.requires_declared
    assert [(r.name, r.optional) for r in condense.requires] == [
        ("article", False), ("audience", True)]
    assert [node.name for node in spec.inline_nodes] == ["headline-writer"]


def test_a_call_is_checked_against_its_callee_and_a_name_found_nowhere_is_an_error() -> None:
    found = _errors(NEWSROOM / "broken-desk.prose.md")
    # `author` is no parameter of condense (a leak); `fact-checker` exists nowhere
    assert found == ["19:3 PH601", "20:20 PN102"]


def test_a_function_without_a_program_runs_as_one_call(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text('slots:\n  condense: [{gist: "Twelve bus lines."}]\n', encoding="utf-8")
    result = run_prose_in_process(
        "run", str(NEWSROOM / "condense.prose.md"), "--script", str(script),
        "--input", "article=The council approved 12 new bus lines.", "--json", "-q",
        "--trace", str(tmp_path / "trace.jsonl"))
    assert result.code == 0, result.output
    assert json.loads(result.stdout) == {"gist": "Twelve bus lines."}


def test_a_function_calling_a_sibling_and_an_inline_node_runs(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        "slots:\n  condense: [\"12 bus lines approved.\"]\n"
        "  headline-writer: [\"Twelve new bus lines\"]\n", encoding="utf-8")
    result = run_prose_in_process(
        "run", str(NEWSROOM / "headline-desk.prose.md"), "--script", str(script),
        "--input", "article=long text", "--json", "-q", "--trace", str(tmp_path / "t.jsonl"))
    assert result.code == 0, result.output
    assert json.loads(result.stdout) == {
        "gist": "12 bus lines approved.", "headline": "Twelve new bus lines"}


def test_running_a_responsibility_exits_2_and_says_what_it_is() -> None:
    result = run_prose("run", str(NEWSROOM / "front-page.prose.md"))
    assert result.code == 2
    assert "is a responsibility: a standing job" in result.stderr
    assert "requires: `wire-stories`" in result.stderr
    assert "maintains: `page`, facet `lead`, facet `sidebar`" in result.stderr
    assert "continuity: self-driven" in result.stderr


def test_lint_kind_selects_kinds_and_the_summary_counts_each_kind() -> None:
    result = run_prose_in_process("lint", "--kind", "function", "--kind", "test", str(NEWSROOM))
    assert result.code == 1  # broken-desk
    assert "in 8 files" in result.stdout
    assert "kinds: function 7 (1 with errors), test 1 (0 with errors)" in result.stdout
    assert "wire.prose.md" not in result.stdout


def test_lint_of_a_missing_file_does_not_say_all_checks_passed(tmp_path: Path) -> None:
    result = run_prose("lint", str(tmp_path / "missing.prose.md"))
    assert result.code == 2
    assert "no such file" in result.stderr
    assert "All checks passed" not in result.output


def test_prose_test_runs_a_kind_test_contract_with_its_script() -> None:
    result = run_prose_in_process("test", str(NEWSROOM))
    assert result.code == 0, result.output
    assert result.stdout.splitlines() == ["PASS condense-keeps-numbers", "1 passed, 0 failed"]


def test_a_failing_assertion_and_a_missing_verdict_fail_the_test(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        "slots:\n  condense: [{gist: \"Some bus lines.\"}]\n"
        "conditions:\n  \"mentions the 12 bus lines\": [false]\n", encoding="utf-8")
    result = run_prose_in_process("test", str(NEWSROOM / "condense.test.prose.md"),
                                  "--script", str(script))
    assert result.code == 1
    assert "FAIL condense-keeps-numbers: 14: `gist` must satisfy: mentions the 12 bus lines " \
        "(the judge: it does not hold)" in result.stdout
    assert "18: no scripted verdict for `invents a number" in result.stdout


def test_a_test_of_a_result_without_the_key_fails_without_asking_the_judge(
        tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("slots:\n  condense: [{summary: \"x\"}]\n", encoding="utf-8")
    result = run_prose_in_process("test", str(NEWSROOM / "condense.test.prose.md"),
                                  "--script", str(script))
    assert result.code == 1
    assert "14: the result has no `gist`" in result.stdout


def test_explain_shows_a_responsibilitys_subscriptions_facets_and_callees() -> None:
    result = run_prose_in_process("explain", str(NEWSROOM / "front-page.prose.md"))
    assert result.code == 0, result.output
    out = result.stdout
    assert "responsibility `front-page`" in out
    assert "13: `wire-stories` the latest stories from the wire gateway" in out
    assert "19: facet `lead`" in out and "22: facet `sidebar`" in out
    assert "Continuity: self-driven" in out
    assert "`condense` -> " in out and "condense.prose.md" in out


def test_explain_of_a_gateway_without_a_program() -> None:
    result = run_prose_in_process("explain", "--format", "json", str(NEWSROOM / "wire.prose.md"))
    assert result.code == 0, result.output
    contract = json.loads(result.stdout)["contract"]
    assert contract["kind"] == "gateway" and contract["continuity_mode"] == "external-driven"
    assert contract["subscriptions"] == []
    assert [item["name"] for item in contract["maintains"]] == ["wire-stories"]


def test_a_callee_with_its_own_program_runs_as_a_nested_pattern(tmp_path: Path) -> None:
    spec = read_pattern(NEWSROOM / "front-desk.prose.md").spec
    assert spec is not None and spec.callees["checked-gist"].endswith("checked-gist.prose.md")
    script = tmp_path / "script.yaml"
    # the nested program's slots are answered as OUTER.INNER
    script.write_text("slots:\n  checked-gist.condense: [\"12 bus lines.\"]\n"
                      "  checked-gist.number-check: [true]\n", encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    result = run_prose_in_process(
        "run", str(NEWSROOM / "front-desk.prose.md"), "--script", str(script),
        "--input", "article=x", "--json", "-q", "--trace", str(trace))
    assert result.code == 0, result.output
    assert json.loads(result.stdout) == {"gist": "12 bus lines.", "verdict": True}
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    inner = [(e["slot"], Path(e["file"]).name, e["model"].split("#")[0])
             for e in events if e.get("type") == "call" and e.get("slot") != "checked-gist"]
    assert inner == [
        ("condense", "checked-gist.prose.md", "prose-script/slot:checked-gist.condense"),
        ("number-check", "checked-gist.prose.md", "prose-script/slot:checked-gist.number-check"),
    ]


def test_a_patterns_instance_is_a_callee_run_with_its_config(tmp_path: Path) -> None:
    spec = read_pattern(NEWSROOM / "opinion-desk.prose.md").spec
    assert spec is not None
    [instance] = spec.pattern_instances
    assert (instance.name, instance.pattern, instance.config) == (
        "two-readings", "second-opinion", {"readings": 2})
    assert _errors(NEWSROOM / "opinion-desk.prose.md") == []
    script = tmp_path / "script.yaml"
    script.write_text('slots:\n  two-readings.reader: ["too long", "fine"]\n', encoding="utf-8")
    result = run_prose_in_process(
        "run", str(NEWSROOM / "opinion-desk.prose.md"), "--script", str(script),
        "--input", "article=x", "--json", "-q", "--trace", str(tmp_path / "t.jsonl"))
    assert result.code == 0, result.output
    assert json.loads(result.stdout) == {"comments": ["too long", "fine"]}  # readings: 2


def test_running_a_test_contract_points_to_prose_test() -> None:
    result = run_prose_in_process("run", str(NEWSROOM / "condense.test.prose.md"))
    assert result.code == 2
    assert "is a test of `condense`: run it with `prose test" in result.stderr


def test_a_callee_with_several_result_keys_gives_an_object_of_them() -> None:
    spec = read_pattern(NEWSROOM / "front-desk.prose.md").spec
    assert spec is not None
    several = spec.slot("checked-gist")
    assert several is not None and several.output_schema == {"gist": "any", "verdict": "any"}
    single = read_pattern(NEWSROOM / "headline-desk.prose.md").spec
    assert single is not None
    condense = single.slot("condense")
    assert condense is not None and condense.output_schema is None  # one key: the value itself


def test_lint_kind_that_matches_no_file_is_a_usage_error() -> None:
    result = run_prose_in_process("lint", "--kind", "functions", str(NEWSROOM))
    assert result.code == 2
    assert "no file of kind functions" in result.stderr
    assert "All checks passed" not in result.stdout


def test_a_node_with_its_own_program_runs_as_a_nested_pattern(tmp_path: Path) -> None:
    spec = read_pattern(NEWSROOM / "step-desk.prose.md").spec
    assert spec is not None and spec.callees == {"two-step": "#two-step"}
    script = tmp_path / "script.yaml"
    # the node's own calls (a sibling file, another node of the file) are TWO-STEP.INNER
    script.write_text("slots:\n  two-step.condense: [\"12 bus line approved\"]\n"
                      "  two-step.polish: [\"Twelve bus lines approved.\"]\n", encoding="utf-8")
    result = run_prose_in_process(
        "run", str(NEWSROOM / "step-desk.prose.md"), "--script", str(script),
        "--input", "article=x", "--json", "-q", "--trace", str(tmp_path / "t.jsonl"))
    assert result.code == 0, result.output
    assert json.loads(result.stdout) == {"gist": "Twelve bus lines approved."}
