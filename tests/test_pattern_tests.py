"""`prose test`: the test-file format, the subset matcher and the runner's output and exit codes.

The fixtures in tests/fixtures/ledger/ are this suite's own examples:
`pass/` (proposer-adversary, and dialectic with several tests in one file,
one of them a budget stop), `leaky/` (an information-hiding stop, exit 5),
`judged/` (a discretion condition answered by the script) and `fail/` (wrong
expectations, a script that runs out, a misspelt key). The commands run in this
process (`run_prose_in_process`); `prose test` with no argument, which tests
`examples/`, is run once in tests/test_examples.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, run_prose_in_process

from prose.testing import (
    PatternTestError,
    find_test_files,
    load_test_file,
    mismatches,
    run_test_files,
)

LEDGER = FIXTURES / "ledger"


def test_the_passing_fixtures_pass() -> None:
    result = run_prose_in_process("test", str(LEDGER / "pass"), str(LEDGER / "leaky"), str(LEDGER / "judged"))
    assert result.code == 0, result.output
    assert result.stdout.splitlines() == [
        "PASS dialectic: two rounds by default, every round recorded",
        "PASS dialectic: one round when configured",
        "PASS dialectic: a budget stop ends the run with exit code 3",
        "PASS proposer-adversary",
        "PASS an information-hiding stop",
        "PASS judged stops when the judge is satisfied",
        "6 passed, 0 failed",
    ]


def test_failing_expectations_are_each_reported() -> None:
    result = run_prose_in_process("test", str(LEDGER / "fail"))
    assert result.code == 1
    lines = result.stdout.splitlines()
    assert lines[-1] == "0 passed, 3 failed"
    assert (
        "FAIL dialectic with wrong expectations: result.result: expected a list of 1, got a list "
        "of 2; result.verdict: missing (the object has [\"result\"]); `thesis` was "
        "called 2 time(s), expected 3"
    ) in lines
    assert ("FAIL script-too-short: status `error`, expected `ok` (script-exhausted: the script has no "
            "response left for slot `thesis`)") in lines
    misspelt = next(line for line in lines if line.startswith("FAIL missing-expect: "))
    assert "missing-expect.test.yaml:3: unknown key `expected`" in misspelt


def test_one_failure_among_passes_exits_1() -> None:
    result = run_prose_in_process("test", str(LEDGER / "pass" / "proposer-adversary.test.yaml"),
                       str(LEDGER / "fail" / "wrong-expectations.test.yaml"))
    assert result.code == 1
    assert result.stdout.splitlines()[0] == "PASS proposer-adversary"
    assert result.stdout.splitlines()[-1] == "1 passed, 1 failed"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    missing = run_prose_in_process("test", str(tmp_path / "nowhere"))
    assert missing.code == 2 and "no such file or folder" in missing.stderr
    empty = run_prose_in_process("test", str(tmp_path))
    assert empty.code == 2 and "no *.test.yaml files" in empty.stderr
    default = run_prose_in_process("test", cwd=tmp_path)  # no examples/ here
    assert default.code == 2 and "examples" in default.stderr


def test_keyword_filter_and_kept_traces_that_audit_clean(tmp_path: Path) -> None:
    result = run_prose_in_process("test", str(LEDGER / "pass"), "-k", "budget", "--trace-dir", str(tmp_path))
    assert result.code == 0, result.output
    assert result.stdout.splitlines() == ["PASS dialectic: a budget stop ends the run with exit code 3",
                                          "1 passed, 0 failed"]
    (trace,) = tmp_path.glob("*.jsonl")
    audit = run_prose_in_process("audit", str(trace))
    assert audit.code == 0, audit.output


# --- the format -----------------------------------------------------------------------


def test_a_list_of_tests_inherits_the_top_level_keys() -> None:
    tests = load_test_file(LEDGER / "pass" / "dialectic.test.yaml")
    assert [t.name for t in tests] == ["dialectic: two rounds by default, every round recorded",
                                       "dialectic: one round when configured",
                                       "dialectic: a budget stop ends the run with exit code 3"]
    assert {t.instance for t in tests} == {LEDGER / "pass" / "dialectic.yaml"}
    assert tests[0].script == LEDGER / "pass" / "dialectic.script.yaml"
    assert tests[1].script == {"slots": {"thesis": ["For."], "antithesis": ["Against."]}}
    assert tests[1].config == {"rounds": 1}
    assert tests[2].limits == {"max_calls": 3}
    assert tests[2].expect.status == "budget" and tests[2].expect.exit_code == 3
    assert not tests[2].expect.has_result
    assert [t.line for t in tests] == [6, 14, 22]


@pytest.mark.parametrize(("text", "message"), [
    ("instance: a.yaml\nscript: s.yaml\n", ":1: missing `expect`"),
    ("instance: a.yaml\nscript: s.yaml\nexpect: {resutl: 1}\n", ":3: unknown expectation `resutl`"),
    ("instance: a.yaml\nscript: s.yaml\nexpect: {status: fine}\n", ":3: `expect.status` must be one of"),
    ("instance: a.yaml\nscript: s.yaml\nexpect: {calls: {a: -1}}\n", ":3: `expect.calls` must map"),
    ("instance: a.yaml\nscript: 3\nexpect: {}\n", ":2: `script` must be the path"),
    ("instance: a.yaml\nscript: s.yaml\nlimits: {max_turns: 1}\nexpect: {}\n", ":3: unknown limit"),
    ("instance: a.yaml\nscript: s.yaml\ncheck: no-thanks\nexpect: {}\n", ":3: `check` must be true"),
    ("tests: []\n", ":1: `tests` must be a non-empty list"),
    ("script: s.yaml\nexpect: {}\ntests:\n  - instance: a.yaml\n  - {expect: {status: x}}\n",
     ":5: missing `instance`"),
    ("- just a list\n", ":1: a test file is a mapping"),
    ("instance: [unclosed\n", "not valid YAML"),
])
def test_format_errors_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.test.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PatternTestError) as caught:
        load_test_file(path)
    assert message in str(caught.value)


def test_a_broken_test_fails_without_stopping_the_others(tmp_path: Path) -> None:
    (tmp_path / "a.test.yaml").write_text(
        "instance: missing.yaml\nscript: {slots: {}}\nexpect: {}\n", encoding="utf-8")
    (tmp_path / "b.test.yaml").write_text(
        f"instance: {LEDGER / 'pass' / 'proposer-adversary.yaml'}\n"
        "script: {slots: {proposer: ['x'], adversary: [{bad: [1, {2: 3}]}]}}\nexpect: {}\n",
        encoding="utf-8")
    (tmp_path / "c.test.yaml").write_text(
        f"instance: {LEDGER / 'pass' / 'proposer-adversary.yaml'}\n"
        f"script: {LEDGER / 'pass' / 'proposer-adversary.script.yaml'}\n"
        "expect: {calls: {proposer: 1}}\n", encoding="utf-8")
    outcomes = run_test_files(find_test_files([tmp_path]))
    assert [(o.name, o.passed) for o in outcomes] == [("a", False), ("b", False), ("c", True)]
    assert "instance: " in outcomes[0].reasons[0] and "missing.yaml" in outcomes[0].reasons[0]
    assert outcomes[1].reasons[0].startswith("script: ")


def test_a_pattern_with_lint_errors_fails_unless_check_is_false(tmp_path: Path) -> None:
    leaky = LEDGER / "leaky"
    path = tmp_path / "leaky.test.yaml"
    path.write_text(f"instance: {leaky / 'leaky.yaml'}\nscript: {leaky / 'leaky.script.yaml'}\n"
                    "expect: {exit_code: 5}\n", encoding="utf-8")
    (outcome,) = run_test_files([path])
    assert not outcome.passed
    assert outcome.reasons[0].startswith("the pattern has lint errors: ")
    assert "PH606" in outcome.reasons[0] and "check: false" in outcome.reasons[0]


# --- subset matching ------------------------------------------------------------------


def test_subset_matching() -> None:
    actual = {"a": 1, "b": {"c": [1, {"d": "x", "e": True}], "f": None}, "g": 2.0}
    assert mismatches({"a": 1}, actual) == []
    assert mismatches({"b": {"c": [1, {"d": "x"}]}}, actual) == []
    assert mismatches({"g": 2}, actual) == []
    assert mismatches({"b": {"f": None}}, actual) == []
    assert mismatches({"a": True}, actual) == ["result.a: expected true, got 1"]
    assert mismatches({"b": {"c": [1]}}, actual) == [
        "result.b.c: expected a list of 1, got a list of 2"]
    assert mismatches({"b": {"c": [2, {"e": False}]}}, actual) == [
        "result.b.c[0]: expected 2, got 1", "result.b.c[1].e: expected false, got true"]
    assert mismatches({"z": 1}, actual) == [
        'result.z: missing (the object has ["a", "b", "g"])']
    assert mismatches({"a": {"x": 1}}, actual) == ["result.a: expected an object, got a number 1"]
    assert mismatches([1], {"a": 1}) == ['result: expected a list, got an object {"a": 1}']
    assert mismatches("x" * 100, "y") == [f'result: expected "{"x" * 56}..., got "y"']
    assert mismatches(None, None) == [] and mismatches(None, 0) == ["result: expected null, got 0"]
