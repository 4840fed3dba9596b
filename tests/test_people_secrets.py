"""A run waiting on a person masks its secrets in the files it writes beside its trace, as
the trace does (docs/security.md, "What is redacted where"): `pending.json`, the question
files and the answer files; a resumed run uses an answer masked for its own secrets, the
value its trace records.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import run_prose

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-live-SECRETVALUE123"
ENV = {"OPENAI_API_KEY": KEY}
BRIEF = f"refund; my key is {KEY}"


def _example(tmp_path: Path) -> Path:
    """The approval example with a person for its approver, in a folder of its own."""
    examples = tmp_path / "examples"
    examples.mkdir()
    for name in ("approval-gate-person.yaml", "approval-gate.script.yaml", "refund_desk.py"):
        shutil.copy(ROOT / "examples" / name, examples / name)
    (tmp_path / "patterns").mkdir()
    shutil.copy(ROOT / "patterns" / "approval-gate.prose.md", tmp_path / "patterns")
    return examples


def _run(examples: Path, *more: str, env: dict[str, str]) -> Any:
    return run_prose("run", "approval-gate-person.yaml", "--script",
                     "approval-gate.script.yaml", "--input", f"task_brief={BRIEF}", *more,
                     cwd=examples, env=env)


def _texts(folder: Path) -> dict[str, str]:
    return {str(path): path.read_text(encoding="utf-8", errors="replace")
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _without_key() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if value != KEY}


def test_the_files_of_a_waiting_run_and_its_answers_are_masked(tmp_path: Path) -> None:
    examples = _example(tmp_path)
    first = _run(examples, env=ENV)
    assert first.code == 6, first.stderr
    [folder] = (examples / ".prose" / "runs").iterdir()
    for where, text in _texts(folder).items():
        assert KEY not in text, where
    question = (folder / "questions" / "c2.md").read_text(encoding="utf-8")
    assert "my key is ***" in question
    pending = json.loads((folder / "pending.json").read_text(encoding="utf-8"))
    [asked] = pending["questions"]
    assert "my key is ***" in asked["messages"][-1]["content"]
    assert asked["schema"]["properties"]["approved"] == {"type": "boolean"}

    answered = run_prose("answer", folder.name, "c2", "--as", "carol", "--value",
                         json.dumps({"approved": True, "reason": f"ok {KEY}"}),
                         cwd=examples, env=ENV)
    assert answered.code == 0, answered.stderr
    [answer] = (folder / "answers").iterdir()
    assert json.loads(answer.read_text(encoding="utf-8"))["value"] == {
        "approved": True, "reason": "ok ***"}

    resumed = _run(examples, "--resume", folder.name, "--json", env=ENV)
    assert resumed.code == 0, resumed.stderr
    assert json.loads(resumed.stdout)["reason"] == "ok ***"
    for where, text in _texts(examples / ".prose").items():
        assert KEY not in text, where


ASK = """---
name: ask-then-keep
kind: pattern
version: 0.1.0
---

# Ask then keep

A person answers; code keeps the answer.

### Slots

- `asker` (primary)
  - requires: task_brief
  - ensures: answer text
- `keeper`
  - requires: answer
  - ensures: kept text

### Parameters

- `task_brief`: string -- the task

### Returns

- `result`: what the keeper kept

### Delegation

```prose
let answer = call asker
  task_brief: task_brief
let kept = call keeper
  answer: answer
return { result: kept }
```
"""

KEEP = """from pathlib import Path


def keep(answer: str) -> str:
    Path("seen.txt").write_text(answer, encoding="utf-8")
    return "kept"
"""


def test_a_resumed_run_uses_an_answer_masked_for_its_own_secrets(tmp_path: Path) -> None:
    (tmp_path / "ask.prose.md").write_text(ASK, encoding="utf-8")
    (tmp_path / "keep.py").write_text(KEEP, encoding="utf-8")
    (tmp_path / "ask.yaml").write_text(
        "pattern: ask.prose.md\n"
        "with:\n  asker: { person: { name: a clerk } }\n  keeper: { python: 'keep:keep' }\n"
        "inputs: { task_brief: say something }\n", encoding="utf-8")
    first = run_prose("run", "ask.yaml", cwd=tmp_path, env=ENV)
    assert first.code == 6, first.stderr
    [folder] = (tmp_path / ".prose" / "runs").iterdir()
    # Answered where the key is not a known secret: the answer file holds it as given.
    answered = run_prose("answer", folder.name, "--value", f"ok {KEY}", cwd=tmp_path,
                         env=_without_key())
    assert answered.code == 0, answered.stderr
    [answer] = (folder / "answers").iterdir()
    assert KEY in answer.read_text(encoding="utf-8")
    resumed = run_prose("run", "ask.yaml", "--resume", folder.name, cwd=tmp_path, env=ENV)
    assert resumed.code == 0, resumed.stderr
    # The code after the person got what the trace records, not the key.
    assert (tmp_path / "seen.txt").read_text(encoding="utf-8") == "ok ***"
    [new] = [path for path in (tmp_path / ".prose" / "runs").iterdir() if path != folder]
    events = [json.loads(line) for line in (new / "trace.jsonl").read_text().splitlines()]
    [asker] = [e for e in events if e.get("type") == "call" and e["slot"] == "asker"]
    assert (asker["output"], asker["cache_hit"]) == ("ok ***", False)
    audit = run_prose("audit", str(new / "trace.jsonl"), cwd=tmp_path)
    assert audit.code == 0, audit.stdout


def test_an_answer_is_masked_as_the_trace_is_unless_its_form_would_refuse_it() -> None:
    from prose.runtime.questions import masked_answer

    schema = {"type": "object", "properties": {
        "password_reset": {"type": "boolean"}, "password": {"type": "string"},
        "reason": {"type": "string"}}}
    given = {"password_reset": True, "password": "hunter2hunter2", "reason": f"ok {KEY}"}
    # A secret-named string field is masked, as the trace masks it.
    assert masked_answer({"password": "hunter2hunter2", "reason": f"ok {KEY}"}, [KEY],
                         schema) == {"password": "***", "reason": "ok ***"}
    # A boolean named like a secret would become `***`, which its form refuses: only the
    # known secrets are masked then.
    assert masked_answer(given, [KEY], schema) == {
        "password_reset": True, "password": "hunter2hunter2", "reason": "ok ***"}
