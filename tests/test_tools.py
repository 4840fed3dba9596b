"""`prose.tools`: the deterministic functions plan-conformance binds in its instance file.

- the verification-command runner (`prose.tools.verification`): runs only the
  declared commands, with a shell, in order, under one total deadline, and
  records command, status, exit code, duration and output tail; an invalid
  declaration runs nothing and is a PIPELINE-FAULT;
- the contract gate (`criterion_gate`): MET needs cited evidence and a proving
  test, otherwise at best PARTIAL; a PIPELINE-FAULT evidence entry forces UNMET;
- the verdict (`conformance_verdict`): CONFORMS only when every criterion is
  MET, nothing extra was found and nothing faulted; fail-closed otherwise.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from pathlib import Path
from typing import Any

import pytest

from prose.runtime.services import import_callable
from prose.tools import PIPELINE_FAULT, is_fault
from prose.tools.conformance import conformance_verdict, criterion_gate
from prose.tools.verification import (
    DEADLINE_ENV,
    DEFAULT_DEADLINE,
    NONE_DECLARED,
    DeclarationError,
    deadline_from_env,
    parse_declaration,
    run_checks,
    run_declared,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX shell and process groups")


def run(declared: object, **options: Any) -> dict[str, Any]:
    return asyncio.run(run_declared(declared, **options))


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its reaper counts as exited)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        return "State:\tZ" in status.read_text()
    return False


def wait_until_gone(pid: int, seconds: float = 5.0) -> bool:
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)


# --- the instance-file bindings ---------------------------------------------------------


@pytest.mark.parametrize("ref", [
    "prose.tools.verification:run_checks",
    "prose.tools.conformance:criterion_gate",
    "prose.tools.conformance:conformance_verdict",
])
def test_the_bindings_import_as_instance_files_name_them(ref: str) -> None:
    assert callable(import_callable(ref))


def test_the_runner_takes_only_the_declared_commands() -> None:
    # The bound function has one input: nothing else (a directory, a deadline, a
    # command from a model) can be passed to it by a pattern.
    assert list(inspect.signature(run_checks).parameters) == ["verification_commands"]
    assert inspect.iscoroutinefunction(run_checks)  # awaited: a long command does not block the run


def test_the_gate_and_the_verdict_take_what_the_pattern_passes() -> None:
    assert list(inspect.signature(criterion_gate).parameters) == ["criterion", "finding"]
    assert list(inspect.signature(conformance_verdict).parameters) == [
        "criteria", "criterion_verdicts", "extras", "verification_runs", "faults"]


def test_the_marker() -> None:
    assert PIPELINE_FAULT == "PIPELINE-FAULT:"
    assert is_fault("PIPELINE-FAULT: the checker died")
    assert is_fault("  PIPELINE-FAULT: leading spaces")
    assert not is_fault("evidence: PIPELINE-FAULT: not at the start")
    assert not is_fault(None)
    assert not is_fault(["PIPELINE-FAULT:"])


# --- the declaration --------------------------------------------------------------------


@pytest.mark.parametrize(("declared", "commands"), [
    (["pytest -q", "ruff check ."], ["pytest -q", "ruff check ."]),
    ('["pytest -q", "ruff check ."]', ["pytest -q", "ruff check ."]),  # JSON text, as agent variables arrive
    ([], []),
    ("[]", []),
    (None, []),
])
def test_valid_declarations(declared: object, commands: list[str]) -> None:
    assert parse_declaration(declared) == commands


@pytest.mark.parametrize(("declared", "why"), [
    ("pytest -q", "not a JSON array of strings"),
    ('{"cmd": "pytest"}', "expected a list of command strings, got an object"),
    ({"cmd": "pytest"}, "expected a list of command strings, got an object"),
    ('"pytest -q"', "expected a list of command strings, got a string"),
    ([1], "item 0 is a number, not a command string"),
    (["pytest", None], "item 1 is null, not a command string"),
    (["pytest", ["ruff"]], "item 1 is a list, not a command string"),
    (["pytest", "  "], "item 1 is an empty command"),
    ([""], "item 0 is an empty command"),
    (True, "expected a list of command strings, got a boolean"),
    (3, "expected a list of command strings, got a number"),
])
def test_invalid_declarations(declared: object, why: str) -> None:
    with pytest.raises(DeclarationError, match=why):
        parse_declaration(declared)


@posix_only
def test_an_invalid_declaration_runs_nothing_and_is_a_fault(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    record = run([f"touch {marker}", 7], cwd=tmp_path)
    assert record["runs"] == []
    assert record["note"] == (
        "PIPELINE-FAULT: verification_commands declaration invalid: item 1 is a number, "
        "not a command string; nothing was run")
    assert is_fault(record["note"])
    assert not marker.exists()  # the valid first command did not run either


def test_no_commands_declared_runs_nothing_and_says_so() -> None:
    for declared in ([], None, "[]"):
        assert run(declared) == {"runs": [], "note": NONE_DECLARED}
    assert not is_fault(NONE_DECLARED)


# --- running ------------------------------------------------------------------------------


@posix_only
def test_commands_run_once_in_order_with_a_shell(tmp_path: Path) -> None:
    log = tmp_path / "log"
    record = run([f"echo one >> {log}", f"echo two >> {log} && echo to-stderr >&2; exit 3",
                  f"echo three >> {log}"], cwd=tmp_path)
    assert log.read_text() == "one\ntwo\nthree\n"  # each once, in declaration order
    runs = record["runs"]
    assert [r["command"] for r in runs] == [f"echo one >> {log}",
                                           f"echo two >> {log} && echo to-stderr >&2; exit 3",
                                           f"echo three >> {log}"]
    assert [(r["status"], r["exit_code"]) for r in runs] == [("PASS", 0), ("FAIL", 3), ("PASS", 0)]
    assert runs[1]["output_tail"] == "to-stderr\n"  # stderr is recorded with stdout
    assert all(isinstance(r["duration_seconds"], float) and r["duration_seconds"] >= 0 for r in runs)
    assert set(runs[0]) == {"command", "status", "exit_code", "duration_seconds", "output_tail"}
    assert record["note"] == "3 declared command(s) run once, in order: 2 PASS, 1 FAIL"


@posix_only
def test_a_failing_command_does_not_stop_the_others() -> None:
    record = run(["exit 1", "echo after"])
    assert [r["status"] for r in record["runs"]] == ["FAIL", "PASS"]
    assert record["runs"][1]["output_tail"] == "after\n"


@posix_only
def test_commands_run_in_the_given_directory(tmp_path: Path) -> None:
    (tmp_path / "here.txt").write_text("x")
    record = run(["test -f here.txt"], cwd=tmp_path)
    assert record["runs"][0]["status"] == "PASS"


@posix_only
def test_the_output_tail_is_the_last_characters_only() -> None:
    record = run(["i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); done"], tail_chars=20)
    tail = record["runs"][0]["output_tail"]
    assert len(tail) == 20
    assert tail.endswith("line2999\n")


@posix_only
def test_undecodable_output_is_replaced_not_fatal() -> None:
    record = run(["printf 'ok \\377\\376 done'"])
    assert record["runs"][0]["status"] == "PASS"
    assert record["runs"][0]["output_tail"] == "ok \ufffd\ufffd done"


@posix_only
def test_the_deadline_kills_the_running_command_and_skips_the_rest(tmp_path: Path) -> None:
    started = time.monotonic()
    record = run(["echo first", f"echo $$ > {tmp_path / 'pid'}; exec sleep 300", "echo never"],
                 deadline=1.0)
    assert time.monotonic() - started < 120  # killed at the deadline, not after the 300 s sleep
    first, slow, skipped = record["runs"]
    assert first["status"] == "PASS"
    assert slow["status"] == "TIMEOUT"
    assert slow["exit_code"] is None
    assert "killed at the deadline" in slow["output_tail"]
    assert 0.5 <= slow["duration_seconds"] < 120
    assert skipped == {"command": "echo never", "status": "SKIPPED", "exit_code": None,
                       "duration_seconds": 0.0,
                       "output_tail": "not started: the deadline had passed"}
    assert record["note"] == "3 declared command(s) run once, in order: 1 PASS, 1 TIMEOUT, 1 SKIPPED"
    assert wait_until_gone(int((tmp_path / "pid").read_text()))


def test_a_passed_deadline_skips_every_command() -> None:
    ticks = iter([0.0, 10.0, 10.0, 10.0])
    record = run(["echo a", "echo b"], deadline=5.0, clock=lambda: next(ticks))
    assert [r["status"] for r in record["runs"]] == ["SKIPPED", "SKIPPED"]


@posix_only
def test_nothing_a_command_starts_outlives_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    record = run([f"sleep 30 & echo $! > {pid_file}; echo started"])
    assert record["runs"][0]["status"] == "PASS"
    assert record["runs"][0]["output_tail"] == "started\n"
    assert wait_until_gone(int(pid_file.read_text()))


@posix_only
def test_cancelling_the_run_kills_the_command(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"

    async def cancel_soon() -> None:
        task = asyncio.create_task(run_declared([f"echo $$ > {pid_file}; exec sleep 30"]))
        for _ in range(100):
            await asyncio.sleep(0.05)
            if pid_file.exists() and pid_file.read_text().strip():
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    assert wait_until_gone(int(pid_file.read_text()))


@posix_only
def test_run_checks_is_the_bound_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEADLINE_ENV, raising=False)
    record = asyncio.run(run_checks(verification_commands=["echo bound"]))
    assert record["runs"][0]["output_tail"] == "bound\n"


def test_the_deadline_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEADLINE_ENV, raising=False)
    assert deadline_from_env() == DEFAULT_DEADLINE == 3300.0
    monkeypatch.setenv(DEADLINE_ENV, "12.5")
    assert deadline_from_env() == 12.5
    for bad in ("soon", "0", "-3"):
        monkeypatch.setenv(DEADLINE_ENV, bad)
        with pytest.raises(ValueError, match=DEADLINE_ENV):
            deadline_from_env()


# --- the gate ---------------------------------------------------------------------------


def finding(status: str = "MET", evidence: object = ("app.py:12",), tests: object = ("test_app",),
            **more: Any) -> dict[str, Any]:
    def listed(value: object) -> object:
        return list(value) if isinstance(value, tuple) else value

    return {"criterion": "c", "status": status, "evidence": listed(evidence),
            "tests": listed(tests), **more}


def test_met_with_evidence_and_a_test_stands() -> None:
    gated = criterion_gate("c", finding())
    assert gated == {"criterion": "c", "status": "MET", "evidence": ["app.py:12"],
                     "tests": ["test_app"], "gate": "", "reported_status": "MET"}


@pytest.mark.parametrize(("evidence", "tests", "note"), [
    (["app.py:12"], [], "MET downgraded to PARTIAL: no proving test cited"),
    (["app.py:12"], ["  "], "MET downgraded to PARTIAL: no proving test cited"),
    (["app.py:12"], None, "MET downgraded to PARTIAL: no proving test cited"),
    ([], ["test_app"], "MET downgraded to PARTIAL: no evidence cited"),
    ([""], ["test_app"], "MET downgraded to PARTIAL: no evidence cited"),
    ([], [], "MET downgraded to PARTIAL: no evidence and no proving test cited"),
])
def test_met_without_evidence_or_a_test_is_at_best_partial(
        evidence: object, tests: object, note: str) -> None:
    gated = criterion_gate("c", finding("MET", evidence, tests))
    assert gated["status"] == "PARTIAL"
    assert gated["gate"] == note
    assert gated["reported_status"] == "MET"
    assert "fault" not in gated


@pytest.mark.parametrize("status", ["MET", "PARTIAL", "DIVERGED", "UNMET"])
def test_a_pipeline_fault_in_the_evidence_forces_unmet(status: str) -> None:
    gated = criterion_gate("c", finding(status, ["app.py:12", "PIPELINE-FAULT: criterion c"],
                                        ["test_app"]))
    assert gated["status"] == "UNMET"
    assert gated["evidence"] == ["app.py:12", "PIPELINE-FAULT: criterion c"]


@pytest.mark.parametrize("status", ["PARTIAL", "UNMET", "DIVERGED"])
def test_the_gate_never_raises_a_status(status: str) -> None:
    assert criterion_gate("c", finding(status))["status"] == status
    assert criterion_gate("c", finding(status, [], []))["status"] == status


def test_status_case_and_spaces_are_normalised() -> None:
    assert criterion_gate("c", finding(" met "))["status"] == "MET"
    assert criterion_gate("c", finding("partial"))["status"] == "PARTIAL"


@pytest.mark.parametrize(("value", "why"), [
    ("MET", "the criterion check returned a string, not a verdict object"),
    (None, "the criterion check returned null, not a verdict object"),
    (["MET"], "the criterion check returned a list, not a verdict object"),
    ({"status": "PASS", "evidence": [], "tests": []}, "the status PASS, not one of MET, PARTIAL"),
    ({"evidence": ["x"], "tests": ["t"]}, "the status null"),
    ({"status": "MET", "evidence": [1], "tests": ["t"]}, "not a list of strings"),
    ({"status": "MET", "evidence": ["x"], "tests": {"t": 1}}, "not a list of strings"),
])
def test_a_malformed_verdict_is_unmet_and_a_fault(value: object, why: str) -> None:
    gated = criterion_gate("c", value)
    assert gated["status"] == "UNMET"
    assert gated["fault"] is True
    assert why in gated["gate"]
    assert len(gated["evidence"]) == 1 and is_fault(gated["evidence"][0])


def test_the_gate_names_the_criterion_it_was_given() -> None:
    gated = criterion_gate("GET /health returns 200", finding(criterion="something else"))
    assert gated["criterion"] == "GET /health returns 200"


def test_a_single_string_of_evidence_counts_as_one_entry() -> None:
    gated = criterion_gate("c", finding("MET", "app.py:12", "test_app"))
    assert (gated["status"], gated["evidence"], gated["tests"]) == ("MET", ["app.py:12"], ["test_app"])


def test_the_gate_is_idempotent() -> None:
    for item in (finding(), finding("MET", [], ["t"]), finding("MET", ["PIPELINE-FAULT: x"]), "bad"):
        once = criterion_gate("c", item)
        twice = criterion_gate("c", once)
        assert twice["status"] == once["status"]
        assert twice["evidence"] == once["evidence"]


# --- the verdict ------------------------------------------------------------------------

RECORD = {"runs": [{"command": "pytest -q", "status": "PASS", "exit_code": 0,
                    "duration_seconds": 1.5, "output_tail": "2 passed"}],
          "note": "1 declared command(s) run once, in order: 1 PASS"}


def met(criterion: str) -> dict[str, Any]:
    return criterion_gate(criterion, finding())


def verdict(criteria: object = ("a", "b"), verdicts: object = None, extras: object = (),
            record: object = RECORD, faults: object = ()) -> dict[str, Any]:
    if isinstance(criteria, tuple):
        criteria = list(criteria)
    if verdicts is None:
        verdicts = [met(c) for c in criteria] if isinstance(criteria, list) else []
    return conformance_verdict(criteria, verdicts,
                               list(extras) if isinstance(extras, tuple) else extras,
                               record, list(faults) if isinstance(faults, tuple) else faults)


def test_all_met_no_extras_no_faults_conforms() -> None:
    report = verdict()
    assert report == {
        "verdict": "CONFORMS",
        "complaints": [],
        "summary": "Criteria: 2/2 met (all with tests).",
        "verification": ["PASS `pytest -q` (exit code 0, 1.5s)",
                         "1 declared command(s) run once, in order: 1 PASS"],
    }


def test_no_verification_commands_declared_does_not_by_itself_diverge() -> None:
    assert verdict(record={"runs": [], "note": NONE_DECLARED})["verdict"] == "CONFORMS"


def test_a_partial_criterion_diverges_with_a_complaint_naming_it() -> None:
    report = verdict(verdicts=[met("a"), criterion_gate("b", finding("MET", ["x.py:1"], []))])
    assert report["verdict"] == "DIVERGES"
    assert report["complaints"] == [
        "Acceptance criterion 'b': PARTIAL: MET downgraded to PARTIAL: no proving test cited"]
    assert report["summary"] == "Criteria: 1/2 met, 1 partial, 0 unmet/diverged. 1 complaint(s)."


def test_faults_diverge_and_come_first() -> None:
    faulted = {"criterion": "b", "status": "UNMET", "tests": [], "fault": True,
               "evidence": ["PIPELINE-FAULT: criterion check failed: timeout"]}
    report = verdict(verdicts=[met("a"), faulted],
                     faults=["PIPELINE-FAULT: criterion not checked: b"], extras=["scope drift"])
    assert report["verdict"] == "DIVERGES"
    assert report["complaints"] == [
        "PIPELINE-FAULT: criterion not checked: b",
        "Acceptance criterion 'b': UNMET: PIPELINE-FAULT: criterion check failed: timeout",
        "Beyond the criteria: scope drift",
    ]


def test_a_fault_alone_diverges_even_when_every_criterion_is_met() -> None:
    report = verdict(faults=["PIPELINE-FAULT: holistic pass failed: timeout"])
    assert report["verdict"] == "DIVERGES"
    assert report["complaints"] == ["PIPELINE-FAULT: holistic pass failed: timeout"]


def test_extras_diverge() -> None:
    report = verdict(extras=[{"file": "auth.py:3", "issue": "out of scope"}])
    assert report["verdict"] == "DIVERGES"
    assert report["complaints"] == [
        'Beyond the criteria: {"file": "auth.py:3", "issue": "out of scope"}']


@pytest.mark.parametrize("criteria", [(), None, "a and b", {"a": 1}])
def test_no_criteria_diverges(criteria: object) -> None:
    report = verdict(criteria=criteria, verdicts=[])
    assert report["verdict"] == "DIVERGES"
    assert "acceptance criteria" in report["complaints"][0]


def test_a_missing_plan_diverges() -> None:
    # What the pattern passes when no plan was supplied.
    report = conformance_verdict([], [], [], RECORD, ["PIPELINE-FAULT: no plan was supplied"])
    assert report["verdict"] == "DIVERGES"
    assert report["complaints"] == ["PIPELINE-FAULT: no plan was supplied",
                                    "no acceptance criteria were extracted: nothing can conform"]


def test_an_invalid_command_declaration_diverges() -> None:
    note = "PIPELINE-FAULT: verification_commands declaration invalid: item 0 is a number"
    report = verdict(record={"runs": [], "note": note})
    assert report["verdict"] == "DIVERGES"
    assert report["complaints"] == [note]


@pytest.mark.parametrize("record", [None, "ok", {"note": "no runs key"}])
def test_a_missing_or_broken_verification_record_diverges(record: object) -> None:
    report = verdict(record=record)
    assert report["verdict"] == "DIVERGES"
    assert is_fault(report["complaints"][0])


def test_a_criterion_without_a_verdict_diverges() -> None:
    report = verdict(criteria=["a", "b"], verdicts=[met("a")])
    assert report["verdict"] == "DIVERGES"
    assert report["complaints"] == [
        "PIPELINE-FAULT: 1 criterion verdict(s) for 2 criteria: every criterion needs exactly one"]


def test_a_verdict_about_another_criterion_diverges() -> None:
    report = verdict(criteria=["a", "b"], verdicts=[met("a"), met("c")])
    assert report["verdict"] == "DIVERGES"
    assert report["complaints"] == ["PIPELINE-FAULT: criterion verdict 2 is about 'c', not 'b'"]


def test_the_verdict_applies_the_gate_again() -> None:
    # A verdict list that bypassed the gate (a misbound gate) cannot conform.
    ungated = {"criterion": "a", "status": "MET", "evidence": ["app.py:1"], "tests": []}
    echoed = {"criterion": "b", "status": "MET", "evidence": ["PIPELINE-FAULT: x"], "tests": ["t"]}
    report = verdict(verdicts=[ungated, echoed])
    assert report["verdict"] == "DIVERGES"
    assert report["summary"] == "Criteria: 0/2 met, 1 partial, 1 unmet/diverged. 2 complaint(s)."


@pytest.mark.parametrize("position", range(5))
@pytest.mark.parametrize("garbage", [None, "x", 3, {"a": 1}, [None], [["x"]], [{"status": 5}]])
def test_bad_input_is_a_complaint_never_an_exception(position: int, garbage: object) -> None:
    arguments: list[object] = [["a"], [met("a")], [], RECORD, []]
    arguments[position] = garbage
    report = conformance_verdict(*arguments)
    lenient = garbage is None and position in (2, 4)  # null extras or faults: none found
    assert report["verdict"] == ("CONFORMS" if lenient else "DIVERGES")
    assert report["complaints"] or lenient


@posix_only
def test_a_command_that_cannot_start_is_recorded_as_an_error(tmp_path: Path) -> None:
    record = run(["echo a", "echo b"], cwd=tmp_path / "missing")
    assert [r["status"] for r in record["runs"]] == ["ERROR", "ERROR"]
    assert record["runs"][0]["output_tail"].startswith("could not start: ")
    assert record["note"] == "2 declared command(s) run once, in order: 2 ERROR"
