"""Scripted people (docs/people.md): `people:` answers in script files and pattern tests."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.test_people import ROOT, _events, prose

EXAMPLE = ROOT / "examples" / "adversarial-review-person.yaml"
SCRIPT = ROOT / "examples" / "adversarial-review-person.script.yaml"
RULING = {"decision": "conditional", "rationale": "Back-test within appetite.",
          "conditions": ["Report the six-month default rate to the committee."]}


def _script(tmp_path: Path, people: dict[str, list[object]]) -> Path:
    data = yaml.safe_load(SCRIPT.read_text(encoding="utf-8"))
    data["people"] = people
    path = tmp_path / "people.script.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_script_answers_for_a_person_on_the_record(tmp_path: Path) -> None:
    script = _script(tmp_path, {"decision_owner": [RULING]})
    done = prose(tmp_path, "run", str(EXAMPLE), "--script", str(script), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["decision"] == "conditional"
    [folder] = list((tmp_path / ".prose" / "runs").iterdir())
    [owner] = [e for e in _events(folder / "trace.jsonl") if e.get("slot") == "decision_owner"]
    assert owner["service"] == "person:credit committee chair"
    assert owner["answered"]["via"] == "script"  # type: ignore[index]
    assert owner["output"] == RULING
    audit = prose(tmp_path, "audit", str(folder / "trace.jsonl"))
    assert audit.returncode == 0, audit.stdout


def test_a_scripted_answer_that_does_not_fit_its_form_is_an_error(tmp_path: Path) -> None:
    script = _script(tmp_path, {"decision_owner": [{"decision": "approve", "rationale": "ok",
                                                    "conditions": "none"}]})
    done = prose(tmp_path, "run", str(EXAMPLE), "--script", str(script))
    assert done.returncode == 1, done.stderr
    assert "the script's answer for the person of `decision_owner` does not fit its form" in (
        done.stderr)
    assert "$.conditions: expected array" in done.stderr


def test_a_script_that_runs_out_of_answers_waits_and_resumes(tmp_path: Path) -> None:
    script = _script(tmp_path, {})
    first = prose(tmp_path, "run", str(EXAMPLE), "--script", str(script), "-q")
    assert first.returncode == 6, first.stderr
    [folder] = list((tmp_path / ".prose" / "runs").iterdir())
    answered = prose(tmp_path, "answer", folder.name, "--as", "bob", "--value", json.dumps(RULING))
    assert answered.returncode == 0, answered.stderr
    done = prose(tmp_path, "run", str(EXAMPLE), "--script", str(script), "--resume", folder.name,
                 "--json")
    assert done.returncode == 0, done.stderr
    [new] = [p for p in (tmp_path / ".prose" / "runs").iterdir() if p != folder]
    [owner] = [e for e in _events(new / "trace.jsonl") if e.get("slot") == "decision_owner"]
    assert owner["answered"]["by"] == "bob"  # type: ignore[index]


def test_a_script_naming_no_slot_for_a_person_is_refused(tmp_path: Path) -> None:
    script = _script(tmp_path, {"decision_ownr": [RULING]})
    done = prose(tmp_path, "run", str(EXAMPLE), "--script", str(script))
    assert done.returncode == 1, done.stderr
    assert "`decision_ownr`" in done.stderr and "did you mean `decision_owner`" in done.stderr


def test_pattern_tests_answer_for_people(tmp_path: Path) -> None:
    done = prose(tmp_path, "test", str(ROOT / "examples" / "adversarial-review-person.test.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_the_report_shows_the_questions_who_answered_and_what_waits(tmp_path: Path) -> None:
    script = _script(tmp_path, {})
    first = prose(tmp_path, "run", str(EXAMPLE), "--script", str(script), "-q")
    assert first.returncode == 6, first.stderr
    [folder] = list((tmp_path / ".prose" / "runs").iterdir())
    waiting = prose(tmp_path, "report", str(folder / "trace.jsonl"))
    assert waiting.returncode == 0, waiting.stderr
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert "Questions to people" in page and "credit committee chair" in page
    assert "waiting for 1 answer(s)" in page

    answered = prose(tmp_path, "answer", folder.name, "--as", "alice", "--note", "minutes 12",
                     "--value", json.dumps(RULING))
    assert answered.returncode == 0, answered.stderr
    done = prose(tmp_path, "run", str(EXAMPLE), "--script", str(script), "--resume", folder.name)
    assert done.returncode == 0, done.stderr
    [new] = [p for p in (tmp_path / ".prose" / "runs").iterdir() if p != folder]
    assert prose(tmp_path, "report", str(new / "trace.jsonl")).returncode == 0
    page = (new / "report.html").read_text(encoding="utf-8")
    assert "alice (prose answer," in page and "note: minutes 12" in page
    assert "Back-test within appetite." in page


def test_require_distinct_models_counts_a_person_who_may_answer_both(tmp_path: Path) -> None:
    """Two independent slots answered by one person are not distinct (nor is a person
    anyone may answer, beside another person); two people with no one in common are."""
    from tests.test_people import PARALLEL

    (tmp_path / "two.prose.md").write_text(PARALLEL)
    (tmp_path / "two.script.yaml").write_text(
        "slots:\n  proposer: [\"Ship it.\"]\npeople:\n  legal: [{ok: true}]\n  risk: [{ok: true}]\n")
    cases = {
        "{ person: { name: legal office, may_answer: [lee, kim] } }": (1, "person kim"),
        "{ person: { name: risk office } }": (1, "person "),
        "{ person: { name: risk office, may_answer: [ana] } }": (0, ""),
    }
    for risk, (code, named) in cases.items():
        (tmp_path / "two.yaml").write_text(
            "pattern: two.prose.md\nwith:\n  proposer: { model: m }\n"
            "  legal: { person: { name: legal, may_answer: [kim] } }\n"
            f"  risk: {risk}\ninputs: {{ task_brief: x }}\n")
        done = prose(tmp_path, "run", "two.yaml", "--script", "two.script.yaml",
                     "--require-distinct-models", "-q")
        assert (done.returncode == 0) == (code == 0), (risk, done.stderr)
        if code:
            assert "are independent but both route to" in done.stderr and named in done.stderr


def test_kill_9_while_a_person_is_being_asked_loses_no_finished_call(tmp_path: Path) -> None:
    """A run killed (SIGKILL) while a question is on the terminal: the calls it finished are
    in its trace, so `--resume` replays them (nothing paid twice) and the question waits."""
    import os
    import signal

    from tests.test_people import Terminal

    script = _script(tmp_path, {})
    terminal = Terminal(tmp_path, "run", str(EXAMPLE), "--script", str(script), "-q",
                        "--as", "alice")
    terminal.expect("decision (one of: ")
    os.kill(terminal.process.pid, signal.SIGKILL)
    assert terminal.wait() == -signal.SIGKILL
    [folder] = list((tmp_path / ".prose" / "runs").iterdir())
    killed = [e for e in _events(folder / "trace.jsonl") if e["type"] == "call"]
    assert len(killed) == 5 and not any(e["type"] == "run_end" for e in killed)
    resumed = prose(tmp_path, "run", str(EXAMPLE), "--script", str(script), "--resume",
                    folder.name, "-q")
    assert resumed.returncode == 6, resumed.stderr  # the question waits; nothing was lost
    [new] = [p for p in (tmp_path / ".prose" / "runs").iterdir() if p != folder]
    calls = [e for e in _events(new / "trace.jsonl") if e["type"] == "call"]
    assert [c["cache_hit"] for c in calls if c["slot"] != "decision_owner"] == [True] * 5
    answered = prose(tmp_path, "answer", new.name, "--as", "alice", "--value", json.dumps(RULING))
    assert answered.returncode == 0, answered.stderr
    done = prose(tmp_path, "run", str(EXAMPLE), "--script", str(script), "--resume", new.name,
                 "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["decision"] == "conditional"


def test_the_approval_gate_runs_its_irreversible_step_only_after_a_person_approves(
    tmp_path: Path,
) -> None:
    """examples/approval-gate-person.yaml: the refund (a Python action) is issued only once
    a person allowed to approve has approved the exact proposal shown to them."""
    example = ROOT / "examples" / "approval-gate-person.yaml"
    script = ROOT / "examples" / "approval-gate.script.yaml"
    ledger = tmp_path / "refunds.log"
    first = prose(tmp_path, "run", str(example), "--script", str(script), "-q")
    assert first.returncode == 6, first.stderr
    assert not ledger.exists()  # nothing irreversible happened while waiting
    [folder] = list((tmp_path / ".prose" / "runs").iterdir())
    assert "support lead on duty" in prose(tmp_path, "pending").stdout
    refused = prose(tmp_path, "answer", folder.name, "--as", "carol",
                    "--value", '{"approved": "yes", "reason": "fine"}')
    assert refused.returncode == 1 and "$.approved: expected boolean" in refused.stderr
    stranger = prose(tmp_path, "answer", folder.name, "--as", "mallory",
                     "--value", '{"approved": true, "reason": "fine"}')
    assert stranger.returncode == 1 and "may not answer" in stranger.stderr
    assert prose(tmp_path, "answer", folder.name, "--as", "carol", "--value",
                 '{"approved": true, "reason": "Under 200 EUR."}').returncode == 0
    done = prose(tmp_path, "run", str(example), "--script", str(script), "--resume",
                 folder.name, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["approved"] is True and "Issued as approved" in result["result"]
    assert ledger.read_text().splitlines() == [result["proposal"]]
    [new] = [p for p in (tmp_path / ".prose" / "runs").iterdir() if p != folder]
    assert prose(tmp_path, "audit", str(new / "trace.jsonl")).returncode == 0
