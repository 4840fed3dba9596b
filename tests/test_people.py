"""People as services (docs/people.md): the binding, the question, waiting and answering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prose.spec.instance import PersonService
from prose.spec.instance_loader import load_instance

ROOT = Path(__file__).resolve().parent.parent
PATTERN = ROOT / "patterns" / "adversarial-review.prose.md"


def _instance(binding: str) -> str:
    return (
        f"pattern: {PATTERN}\n"
        "with:\n"
        "  proponent: { model: fast }\n"
        "  critic: { model: strong }\n"
        "  second_critic: { model: strong-alt }\n"
        f"  decision_owner: {binding}\n"
        "inputs: { task_brief: x }\n"
    )


def test_a_person_binding_is_read_with_who_may_answer() -> None:
    text = _instance('{ person: { name: chair, may_answer: [alice, bob], prompt: "Rule." } }')
    result = load_instance(text, "i.yaml")
    assert result.errors == []
    service = result.instance.bindings["decision_owner"].value  # type: ignore[union-attr]
    assert isinstance(service, PersonService)
    assert (service.name, service.may_answer, service.prompt) == ("chair", ["alice", "bob"], "Rule.")


def test_a_bare_person_name_is_the_only_one_who_may_answer() -> None:
    result = load_instance(_instance("{ person: alice }"), "i.yaml")
    service = result.instance.bindings["decision_owner"].value  # type: ignore[union-attr]
    assert isinstance(service, PersonService)
    assert (service.name, service.may_answer) == ("alice", ["alice"])


@pytest.mark.parametrize(
    ("binding", "code", "where", "message"),
    [
        ("{ person: { nme: chair } }", "PS173", "6:31", "unknown key `nme` in the person of "
         "`decision_owner`; did you mean `name`?"),
        ("{ person: 42 }", "PS174", "6:29", "`person` of `decision_owner` must be a name or a mapping"),
        ("{ person: [alice] }", "PS174", "6:29", "must be a name or a mapping"),
        ("{ person: { may_answer: [] } }", "PS174", "6:43", "`may_answer` of `decision_owner` "
         "names nobody"),
        ("{ person: alice, model: fast }", "PS174", "6:19", "gives more than one of"),
    ],
)
def test_a_bad_person_binding_is_an_error_at_its_line_and_column(
    binding: str, code: str, where: str, message: str
) -> None:
    result = load_instance(_instance(binding), "i.yaml")
    found = [(d.code, f"{d.span.line}:{d.span.column}", d.message) for d in result.errors]
    assert any(c == code and w == where and message in m for c, w, m in found), found


def _script(with_owner: bool) -> object:
    import yaml

    from prose.llm import Script

    data = yaml.safe_load((ROOT / "examples" / "adversarial-review.script.yaml").read_text())
    if not with_owner:
        del data["slots"]["decision_owner"]
    return Script.from_mapping(data)


def _run(tmp_path: Path, bindings: dict[str, object], script: object) -> object:
    import asyncio

    from prose.runtime.runner import RunOptions, run_pattern

    options = RunOptions(inputs={"task_brief": "Raise the limit."}, script=script,  # type: ignore[arg-type]
                         bindings=bindings, trace_path=tmp_path / "trace.jsonl")  # type: ignore[arg-type]
    return asyncio.run(run_pattern(PATTERN, options))


def test_the_question_is_the_messages_a_model_would_be_sent(tmp_path: Path) -> None:
    from prose.runtime.services import ModelService
    from prose.runtime.services import PersonService as Person

    role = "You chair the credit committee."
    model_script = _script(with_owner=True)
    model = _run(tmp_path / "model", {"decision_owner": ModelService("m", role)}, model_script)
    assert model.exit_code == 0
    sent = [c for c in model_script.calls if c.key == "slot:decision_owner"]
    person = _run(tmp_path / "person", {"decision_owner": Person("chair", ("alice",), role)},
                  _script(with_owner=False))
    assert person.exit_code == 6
    pending = json.loads((tmp_path / "person" / "pending.json").read_text())
    [question] = pending["questions"]
    assert [(m["role"], m["content"]) for m in question["messages"]] == list(sent[0].messages)
    assert question["schema"]["required"] == ["decision", "rationale", "conditions"]
    assert question["may_answer"] == ["alice"]
    shown = (tmp_path / "person" / "questions" / f"{question['id']}.md").read_text()
    assert role in shown and "## review_log" in shown and "`decision` (\"approve\" | \"conditional\"" in shown


# --- waiting, answering, resuming: the real CLI as a subprocess ----------------------------

def prose(cwd: Path, *args: str) -> Any:
    """`prose ARGS` in a new interpreter (the real CLI); never a traceback."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "from prose.cli.main import main; main()", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _waiting_instance(tmp_path: Path) -> str:
    import yaml

    (tmp_path / "review.yaml").write_text(_instance(
        '{ person: { name: credit committee chair, may_answer: [alice, bob] } }'))
    data = yaml.safe_load((ROOT / "examples" / "adversarial-review.script.yaml").read_text())
    del data["slots"]["decision_owner"]
    (tmp_path / "review.script.yaml").write_text(yaml.safe_dump(data))
    return "review.yaml"


def _events(trace: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


def test_a_run_waits_is_answered_and_resumes_without_repaying(tmp_path: Path) -> None:
    target = _waiting_instance(tmp_path)
    first = prose(tmp_path, "run", target, "--script", "review.script.yaml", "-q")
    assert first.returncode == 6, first.stderr
    assert "Traceback" not in first.stderr
    [run] = [p.name for p in (tmp_path / ".prose" / "runs").iterdir()]
    folder = tmp_path / ".prose" / "runs" / run
    assert f"prose answer {run} c6" in first.stderr
    assert f"--resume {run}" in first.stderr
    assert (folder / "trace.jsonl.sha256").is_file()  # the trace is closed and sealed
    end = _events(folder / "trace.jsonl")[-1]
    assert (end["type"], end["status"], end["exit_code"]) == ("run_end", "waiting", 6)
    assert prose(tmp_path, "audit", str(folder / "trace.jsonl")).returncode == 0
    listed = prose(tmp_path, "pending")
    assert f"{run}" in listed.stdout and "c6  decision_owner" in listed.stdout
    assert "waiting" in listed.stdout

    bad = prose(tmp_path, "answer", run, "c6", "--as", "alice",
                "--value", '{"decision": 3, "rationale": "fine"}')
    assert bad.returncode == 1
    assert "$.decision: expected string, got integer" in bad.stderr
    assert "missing required property `conditions`" in bad.stderr
    assert not (folder / "answers").exists()  # nothing was written
    stranger = prose(tmp_path, "answer", run, "--as", "mallory", "--value",
                     '{"decision": "approve", "rationale": "r", "conditions": []}')
    assert stranger.returncode == 1 and "may not answer" in stranger.stderr
    assert not (folder / "answers").exists()

    (tmp_path / "ruling.json").write_text(json.dumps(
        {"decision": "conditional", "rationale": "Within appetite.", "conditions": ["Report."]}))
    good = prose(tmp_path, "answer", run, "decision_owner", "--file", "ruling.json",
                 "--as", "alice", "--note", "committee minutes 12")
    assert good.returncode == 0, good.stderr
    assert "resume: prose run review.yaml --script review.script.yaml" in good.stdout
    again = prose(tmp_path, "answer", run, "--as", "bob", "--file", "ruling.json")
    assert again.returncode == 1 and "answered already, by alice" in again.stderr

    resumed = prose(tmp_path, "run", target, "--script", "review.script.yaml", "--resume", run,
                    "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["decision"] == "conditional"
    [new] = [p for p in (tmp_path / ".prose" / "runs").iterdir() if p.name != run]
    calls = [e for e in _events(new / "trace.jsonl") if e["type"] == "call"]
    assert [c["cache_hit"] for c in calls if c["slot"] != "decision_owner"] == [True] * 5
    [owner] = [c for c in calls if c["slot"] == "decision_owner"]
    assert owner["service"] == "person:credit committee chair"
    answered = owner["answered"]
    assert isinstance(answered, dict)
    assert (answered["by"], answered["via"], answered["note"]) == (
        "alice", "prose answer", "committee minutes 12")
    audit = prose(tmp_path, "audit", str(new / "trace.jsonl"))
    assert audit.returncode == 0, audit.stdout
    assert "no run is waiting" in prose(tmp_path, "pending").stdout


PARALLEL = """---
name: two-people
kind: pattern
version: 0.1.0
---

# Two people

Two people review one proposal at once.

### Slots

- `proposer` (primary)
  - ensures: proposal text
- `legal`
  - ensures: verdict object with `ok` (boolean)
- `risk`
  - ensures: verdict object with `ok` (boolean)

### Invariants

- `legal` and `risk` are independent

### Parameters

- `task_brief`: string -- the task

### Returns

- `result`: both verdicts

### Delegation

```prose
let proposal = call proposer
  task_brief: task_brief
parallel:
  let a = call legal
    proposal: proposal
  let b = call risk
    proposal: proposal
return { result: [a.ok, b.ok] }
```
"""


def test_the_questions_of_parallel_branches_are_asked_at_once(tmp_path: Path) -> None:
    (tmp_path / "two.prose.md").write_text(PARALLEL)
    (tmp_path / "two.yaml").write_text(
        "pattern: two.prose.md\nwith:\n  proposer: { model: m }\n"
        "  legal: { person: lee }\n  risk: { person: { name: risk office } }\n"
        "inputs: { task_brief: x }\n")
    (tmp_path / "two.script.yaml").write_text("slots:\n  proposer: [\"Ship it.\"]\n")
    first = prose(tmp_path, "run", "two.yaml", "--script", "two.script.yaml", "-q")
    assert first.returncode == 6, first.stderr
    [folder] = list((tmp_path / ".prose" / "runs").iterdir())
    questions = json.loads((folder / "pending.json").read_text())["questions"]
    assert sorted(q["slot"] for q in questions) == ["legal", "risk"]
    assert len(list((folder / "questions").glob("*.md"))) == 2
    for question in questions:
        who = "lee" if question["slot"] == "legal" else "anyone"
        done = prose(tmp_path, "answer", folder.name, question["slot"], "--as", who,
                     "--value", '{"ok": true}')
        assert done.returncode == 0, done.stderr
    resumed = prose(tmp_path, "run", "two.yaml", "--script", "two.script.yaml", "--resume",
                    folder.name, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"] == [True, True]


def test_the_audit_names_an_answer_by_someone_the_binding_does_not_allow(tmp_path: Path) -> None:
    import hashlib

    from prose.lang.policy import compile_policy
    from prose.ledger.audit import audit_trace
    from prose.runtime.integrity import output_sha256
    from prose.runtime.trace import CallEvent, RunEnd, RunStart, Trace
    from prose.spec import load_spec

    text = PATTERN.read_text(encoding="utf-8")
    sha = hashlib.sha256(text.encode()).hexdigest()
    spec = load_spec(text, str(PATTERN)).spec
    assert spec is not None
    policy = compile_policy(spec).to_dict()

    def trace(by: str | None) -> Path:
        path = tmp_path / f"{by}.jsonl"
        out = Trace(path, "r1")
        out.emit(RunStart(pattern=str(PATTERN), pattern_sha256=sha, policy=policy,
                          bindings={"decision_owner": {"kind": "person", "person": "chair",
                                                       "may_answer": ["alice"]}}))
        value = {"decision": "approve", "rationale": "r", "conditions": []}
        out.emit(CallEvent(id="c1", slot="decision_owner", service="person:chair", output=value,
                           sha256=output_sha256(value), key="k",
                           answered={"by": by, "at": "2026-12-06T10:00:00+00:00"} if by else None))
        out.emit(RunEnd(status="ok", exit_code=0))
        out.close()
        return path

    assert not [f for f in audit_trace(trace("alice")).findings if f.rule == "person"]
    [forged] = [f for f in audit_trace(trace("mallory")).findings if f.rule == "person"]
    assert "`mallory` answered `decision_owner`, but only alice may" in forged.message
    [unsigned] = [f for f in audit_trace(trace(None)).findings if f.rule == "person"]
    assert "does not record who gave it" in unsigned.message


# --- on a terminal: a pseudo-terminal drives the real CLI ----------------------------------

class Terminal:
    """The real `prose` CLI on a pseudo-terminal: read until a text shows, then type a line."""

    def __init__(self, cwd: Path, *args: str) -> None:
        import os
        import pty
        import subprocess
        import sys

        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from prose.cli.main import main; main()", *args],
            cwd=cwd, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, timeout: float = 120) -> str:
        import os
        import select
        import time

        deadline = time.monotonic() + timeout
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], max(deadline - time.monotonic(), 0))
            assert ready, f"timed out waiting for {text!r}; the terminal shows:\n{self.seen}"
            try:
                chunk = os.read(self.master, 4096).decode("utf-8", "replace")
            except OSError:  # the process ended and closed the terminal
                chunk = ""
            assert chunk, f"the terminal closed before {text!r}:\n{self.seen}"
            self.seen += chunk.replace("\r\n", "\n")
        before, _, self.seen = self.seen.partition(text)
        return before + text

    def type(self, line: str) -> None:
        import os

        os.write(self.master, (line + "\n").encode())

    def wait(self) -> int:
        import os

        try:
            while os.read(self.master, 4096):
                pass
        except OSError:
            pass
        code = self.process.wait(timeout=60)
        os.close(self.master)
        return code


def test_on_a_terminal_the_person_is_asked_there_and_a_bad_field_is_asked_again(
    tmp_path: Path,
) -> None:
    target = _waiting_instance(tmp_path)
    terminal = Terminal(tmp_path, "run", target, "--script", "review.script.yaml", "-q",
                        "--as", "bob")
    shown = terminal.expect(
        'decision (one of: "approve", "conditional", "reject", "needs_more_evidence"): ')
    assert "A question for `decision_owner` (credit committee chair; may answer: alice, bob)" \
        in shown
    assert "## review_log" in shown  # the inputs, as a model reads them
    terminal.type("approve")
    terminal.expect("rationale (string): ")
    terminal.type("Both reviews are clean.")
    terminal.expect("conditions (list of string): ")
    terminal.type("report monthly")  # not JSON: refused, and asked again
    again = terminal.expect("conditions (list of string): ")
    assert "not accepted" in again
    terminal.type('["Report the default rate monthly."]')
    terminal.expect("note (optional, Enter to skip): ")
    terminal.type("asked at the desk")
    assert terminal.wait() == 0
    [folder] = list((tmp_path / ".prose" / "runs").iterdir())
    assert not (folder / "pending.json").exists()
    [owner] = [e for e in _events(folder / "trace.jsonl")
               if e["type"] == "call" and e["slot"] == "decision_owner"]
    assert owner["output"] == {"decision": "approve", "rationale": "Both reviews are clean.",
                               "conditions": ["Report the default rate monthly."]}
    answered = owner["answered"]
    assert isinstance(answered, dict)
    assert (answered["by"], answered["via"], answered["note"]) == (
        "bob", "terminal", "asked at the desk")


def test_on_a_terminal_with_no_ask_the_question_waits(tmp_path: Path) -> None:
    target = _waiting_instance(tmp_path)
    terminal = Terminal(tmp_path, "run", target, "--script", "review.script.yaml", "-q",
                        "--as", "bob", "--no-ask")
    assert terminal.wait() == 6
    [folder] = list((tmp_path / ".prose" / "runs").iterdir())
    assert (folder / "pending.json").is_file()


# --- the library example: a person as the decision owner, end to end ------------------------

def test_the_approval_example_waits_is_answered_and_resumes(tmp_path: Path) -> None:
    example = ROOT / "examples" / "adversarial-review-person.yaml"
    script = ROOT / "examples" / "adversarial-review-person.script.yaml"
    lint = prose(tmp_path, "lint", str(ROOT / "patterns" / "adversarial-review.prose.md"))
    assert lint.returncode == 0, lint.stdout
    first = prose(tmp_path, "run", str(example), "--script", str(script), "-q")
    assert first.returncode == 6, first.stderr
    [folder] = list((tmp_path / ".prose" / "runs").iterdir())
    assert "credit committee chair" in prose(tmp_path, "pending").stdout
    refused = prose(tmp_path, "answer", folder.name, "--as", "alice",
                    "--value", '{"decision": "approve", "rationale": "ok", "conditions": "none"}')
    assert refused.returncode == 1 and "$.conditions: expected array" in refused.stderr
    ruling = {"decision": "conditional", "rationale": "Back-test within appetite.",
              "conditions": ["Report the six-month default rate to the committee."]}
    answered = prose(tmp_path, "answer", folder.name, "--as", "alice", "--value",
                     json.dumps(ruling))
    assert answered.returncode == 0, answered.stderr
    done = prose(tmp_path, "run", str(example), "--script", str(script), "--resume", folder.name,
                 "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["decision"], result["converged"], result["rounds_used"]) == (
        "conditional", True, 2)
    [new] = [p for p in (tmp_path / ".prose" / "runs").iterdir() if p != folder]
    audit = prose(tmp_path, "audit", str(new / "trace.jsonl"))
    assert audit.returncode == 0, audit.stdout
    [owner] = [e for e in _events(new / "trace.jsonl") if e.get("slot") == "decision_owner"]
    assert owner["answered"]["by"] == "alice"  # type: ignore[index]
