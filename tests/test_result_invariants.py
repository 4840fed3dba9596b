"""`` the result satisfies `EXPR` ``: parsed, judged by the run time on the returned object
(R061) and by the audit on the result `run_end` records.

One fallback pattern, two scripts: every service failing (the result must be null) and
one succeeding. The violating program returns the last failure's message as its result;
its twin returns null. The clean run's trace is then forged (its recorded result changed,
the chain recomputed) so that only the result check can catch it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from conftest import run_prose, run_prose_in_process
from test_ledger_audit import events_of, write_chained
from test_rules import build_pattern

from prose.lang.policy import Policy, compile_policy
from prose.lang.results import ResultRule, parse_result_expression
from prose.runtime.results import broken_results, evaluate_now
from prose.spec import load_spec
from prose.spec.invariants import ResultSatisfies, parse_invariant_form

INVARIANT = ("the result satisfies `winner is not null or (result is null and "
             "length(failures) == attempts)` (if every service fails, nothing is returned)")
SECTIONS = {
    "slots": "- `chain` (list)\n  - requires: brief\n  - ensures: result for the task",
    "config": None,
    "invariants": f"- {INVARIANT}",
    "parameters": "- `brief`: string -- the task",
    "returns": ("- `result`: the first success, or null\n"
                "- `winner`: its position, or null\n"
                "- `attempts`: how many services were tried\n"
                "- `failures`: one message per failed service"),
}
PROGRAM = """\
let failures = []
let last = null
for delegate, position in chain:
  try:
    let answer = call delegate
      brief: brief
    return { result: answer, winner: position, attempts: position + 1, failures: failures }
  catch as err:
    record err.message in failures
    last = err.message
return { result: RESULT, winner: null, attempts: length(chain), failures: failures }
"""
FAILING = {"chain": [[{"$error": "not loaded"}], [{"$error": "no answer"}]]}
SUCCEEDING = {"chain": [[{"$error": "not loaded"}], ["the answer"]]}


def _pattern(folder: Path, result: str) -> Path:
    path = folder / "fallback.prose.md"
    path.write_text(build_pattern(PROGRAM.replace("RESULT", result), SECTIONS, "fallback").text,
                    encoding="utf-8")
    return path


def _script(folder: Path, slots: dict[str, Any]) -> Path:
    path = folder / "fallback.script.yaml"
    path.write_text(yaml.safe_dump({"slots": slots}), encoding="utf-8")
    return path


def test_the_form_parses_with_its_names_and_an_optional_gloss() -> None:
    form = parse_invariant_form(INVARIANT)
    assert form == ResultSatisfies(
        "winner is not null or (result is null and length(failures) == attempts)",
        ("winner", "result", "failures", "attempts"))
    assert parse_invariant_form("The result satisfies `ok == true`.") == ResultSatisfies(
        "ok == true", ("ok",))
    assert parse_invariant_form("the result satisfies `ok` (not machine-checked: no)") is None
    broken = parse_invariant_form("the result satisfies `call x`")
    assert isinstance(broken, ResultSatisfies) and broken.problem


def test_the_evaluator_is_the_languages() -> None:
    rules = (ResultRule("not (status == \"complete\") or passes >= 2", 7),
             ResultRule("result in [\"a\", \"b\"] and length(result) == 1", 8),
             ResultRule("missing is null", 9))
    assert evaluate_now(broken_results(rules, {"status": "complete", "passes": 2,
                                               "result": "a"})) == []
    found = evaluate_now(broken_results(rules, {"status": "complete", "passes": 1,
                                                "result": "c", "missing": 0}))
    assert [item.rule.line for item in found] == [7, 8, 9]
    assert "`passes` = 1" in found[0].message
    # An expression that cannot be evaluated on the result is no proof that it holds.
    wrong = evaluate_now(broken_results((ResultRule("passes > 1", 3),), {"passes": "two"}))
    assert len(wrong) == 1 and "cannot be evaluated" in wrong[0].message
    assert parse_result_expression("do x()").problem
    # A parameter or config key the rule names reads the run's value; a result key wins.
    threshold = ResultRule("not met or score >= threshold", 4, given=("threshold",))
    assert evaluate_now(broken_results((threshold,), {"met": True, "score": 0.9,
                                                      "threshold": 0.1}, {"threshold": 0.8})) == []
    assert evaluate_now(broken_results((threshold,), {"met": True, "score": 0.7},
                                       {"threshold": 0.8}))


def test_the_policy_records_the_rule_and_reads_it_back(tmp_path: Path) -> None:
    spec = load_spec(_pattern(tmp_path, "null").read_text(encoding="utf-8"),
                     "fallback.prose.md").spec
    assert spec is not None
    policy = compile_policy(spec)
    assert [rule.expression for rule in policy.results] == [
        "winner is not null or (result is null and length(failures) == attempts)"]
    assert Policy.from_dict(json.loads(json.dumps(policy.to_dict()))) == policy
    assert policy.results[0].given == ()


def test_a_returned_result_that_breaks_it_fails_the_run(tmp_path: Path) -> None:
    pattern = _pattern(tmp_path, "last")
    assert run_prose_in_process("lint", str(pattern)).code == 0  # not proven statically
    trace = tmp_path / "t.jsonl"
    result = run_prose("run", str(pattern), "--script", str(_script(tmp_path, FAILING)),
                       "--input", "brief=go", "--trace", str(trace), "-q")
    assert result.code == 1, result.output
    assert "R061" in result.output and "`result` = " in result.output
    line = pattern.read_text(encoding="utf-8").splitlines().index(f"- {INVARIANT}") + 1
    assert f"fallback.prose.md:{line}:3" in result.output
    events = events_of(trace)
    errors = [e for e in events if e["type"] == "error"]
    assert [(e["code"], e["line"]) for e in errors] == [("R061", line)]
    assert events[-1]["type"] == "run_end" and events[-1]["status"] == "error"
    assert events[-1]["result"]["result"] is not None  # what it returned is recorded
    audited = run_prose_in_process("audit", str(trace))
    assert audited.code == 0, audited.output  # sealed, and a failed run is not judged again


def test_the_clean_twin_runs_and_a_forged_result_is_found(tmp_path: Path) -> None:
    pattern = _pattern(tmp_path, "null")
    for slots in (FAILING, SUCCEEDING):
        trace = tmp_path / "t.jsonl"
        result = run_prose_in_process("run", str(pattern), "--script",
                                      str(_script(tmp_path, slots)), "--input", "brief=go",
                                      "--trace", str(trace), "-q")
        assert result.code == 0, result.output
        assert run_prose_in_process("audit", str(trace)).code == 0
    events = events_of(tmp_path / "t.jsonl")  # the run where the second service answered
    events[-1]["result"] = {**events[-1]["result"], "winner": None}  # as if every one failed
    forged = write_chained(tmp_path / "forged.jsonl", events)
    report = run_prose_in_process("audit", str(forged), "--json")
    findings = json.loads(report.stdout)["findings"]
    assert [f["rule"] for f in findings] == ["result-satisfies"], findings
    assert findings[0]["line"] == len(events)
    assert "`winner` = null" in findings[0]["message"]


def test_explain_says_it_is_checked_at_run_time_not_proven(tmp_path: Path) -> None:
    pattern = _pattern(tmp_path, "null")
    shown = run_prose_in_process("explain", str(pattern)).stdout
    assert f"[checked at run time and by the audit] {INVARIANT}" in shown
    pattern.write_text(pattern.read_text(encoding="utf-8").replace(
        "length(failures)", "length(failurez)"), encoding="utf-8")
    assert "[invalid form] the result satisfies" in run_prose_in_process(
        "explain", str(pattern)).stdout
    linted = run_prose_in_process("lint", str(pattern))
    assert linted.code == 1 and "PH638" in linted.output and "`failurez`" in linted.output


EVERY = "every `failure` of `failures` satisfies `failure != \"\" and (winner is null or winner > 0)`"


def test_every_item_of_a_returned_list_is_judged() -> None:
    form = parse_invariant_form(EVERY + " (each recorded failure says why)")
    assert form == ResultSatisfies('failure != "" and (winner is null or winner > 0)',
                                   ("failures", "winner"), "", "failure", "failures")
    rule = ResultRule(form.expression, 5, item="failure", items="failures")
    assert evaluate_now(broken_results((rule,), {"failures": ["a", "b"], "winner": 2})) == []
    assert evaluate_now(broken_results((rule,), {"failures": [], "winner": 0})) == []
    found = evaluate_now(broken_results((rule,), {"failures": ["a", ""], "winner": None}))
    assert len(found) == 1 and "false of `failures[1]` (`failure` = \"\")" in found[0].message
    not_a_list = evaluate_now(broken_results((rule,), {"failures": "a"}))
    assert "`failures` of the result is not a list" in not_a_list[0].message
    assert parse_invariant_form("every `x` of `x` satisfies `x`").problem  # type: ignore[union-attr]


def test_every_item_at_run_time_and_in_the_audit(tmp_path: Path) -> None:
    sections = {**SECTIONS, "invariants": f"- {EVERY}"}
    path = tmp_path / "fallback.prose.md"
    path.write_text(build_pattern(PROGRAM.replace("RESULT", "null").replace(
        "record err.message in failures", "record \"\" in failures"), sections,
        "fallback").text, encoding="utf-8")
    result = run_prose_in_process("run", str(path), "--script",
                                  str(_script(tmp_path, FAILING)), "--input", "brief=go", "-q")
    assert result.code == 1 and "R061" in result.output
    assert "false of `failures[0]`" in result.output
    path.write_text(build_pattern(PROGRAM.replace("RESULT", "null"), sections,
                                  "fallback").text, encoding="utf-8")
    trace = tmp_path / "t.jsonl"
    result = run_prose_in_process("run", str(path), "--script", str(_script(tmp_path, FAILING)),
                                  "--input", "brief=go", "--trace", str(trace), "-q")
    assert result.code == 0, result.output
    assert run_prose_in_process("audit", str(trace)).code == 0
    events = events_of(trace)
    events[-1]["result"] = {**events[-1]["result"], "failures": ["not loaded", ""]}
    forged = write_chained(tmp_path / "forged.jsonl", events)
    findings = json.loads(run_prose_in_process("audit", str(forged), "--json").stdout)["findings"]
    assert [f["rule"] for f in findings] == ["result-satisfies"], findings
    assert "`failures[1]`" in findings[0]["message"]


CARRIES = {
    "slots": ("- `mapper` (primary)\n  - ensures: a partial result\n"
              "- `reducer`\n  - ensures: the merged result"),
    "config": None,
    "invariants": "- the returned `result` carries only `reducer` (the merged result is the reducer's)",
    "parameters": "- `brief`: string -- the task",
    "returns": "- `result`: the merged result\n- `partial`: the mapper's output",
}
CARRIES_PROGRAM = """\
let partial = call mapper
  brief: brief
let merged = call reducer
  partial: partial
return { result: RESULT, partial: partial }
"""


def test_the_returned_key_carries_only_the_slots_named(tmp_path: Path) -> None:
    """`the returned ... carries only`: the linter finds the return (PH642); a run under
    `--no-check` is failed by the run time on the returned value's labels (R061)."""
    path = tmp_path / "merge.prose.md"
    script = tmp_path / "merge.script.yaml"
    script.write_text(yaml.safe_dump({"slots": {"mapper": ["part"], "reducer": ["whole"]}}),
                      encoding="utf-8")
    path.write_text(build_pattern(CARRIES_PROGRAM.replace("RESULT", "partial"), CARRIES,
                                  "merge").text, encoding="utf-8")
    linted = run_prose_in_process("lint", str(path))
    assert linted.code == 1 and "PH642" in linted.output
    run = run_prose_in_process("run", str(path), "--script", str(script), "--input",
                               "brief=go", "--no-check", "-q")
    assert run.code == 1 and "R061" in run.output
    assert "may carry the output of `mapper`" in run.output
    path.write_text(build_pattern(CARRIES_PROGRAM.replace("RESULT", "merged"), CARRIES,
                                  "merge").text, encoding="utf-8")
    assert run_prose_in_process("lint", str(path)).code == 0
    run = run_prose_in_process("run", str(path), "--script", str(script), "--input",
                               "brief=go", "-q")
    assert run.code == 0, run.output
