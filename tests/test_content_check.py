"""The content check at the message boundary (prose/lang/content.py, docs/language.md).

Labels decide who may receive what; the content check looks in the rendered messages
for novel text of a slot the receiver must never see. These tests make the labels miss a
flow on purpose (a Python service that keeps what it was given in host memory and hands
it back later: a side channel no label can see) and check that the call is stopped all
the same, before anything is sent; and that the check raises no false alarm on the
library's own examples.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from prose.lang import content
from prose.llm import Script
from prose.runtime import RunOptions, RunResult, run_pattern
from prose.runtime.services import PythonService
from tests.conftest import ROOT, run_prose_in_process

ATTACK = "The rate limiter forgets burst traffic from a single tenant entirely."

PATTERN = """---
name: sparring
kind: pattern
version: 0.1.0
---

# Sparring

A pattern whose notebook is a side channel.

### Slots

- `proposer` (primary)
  - ensures: proposal text answering the brief
- `adversary`
  - ensures: attack listing flaws in the proposal
- `notebook`
  - ensures: what it was last given

### Invariants

- `proposer` never sees `adversary`

### Parameters

- `task_brief`: string -- what the proposer answers

### Returns

- `result`: what the pattern produced

### Delegation

```prose
let proposal = call proposer
  task_brief: task_brief
let attack = call adversary
  proposal: proposal
call notebook
  text: {TOLD}
let recalled = call notebook
  text: "what do you hold?"
let revised = call proposer
  task_brief: task_brief
  notes: recalled
return { result: revised }
```
"""


class Notebook:
    """A host-side memory: what the first call was given, the second returns."""

    def __init__(self) -> None:
        self.held: Any = None

    def __call__(self, text: Any) -> Any:
        if self.held is None:
            self.held = text
            return "noted"
        return self.held


def _run(tmp_path: Path, told: str) -> RunResult:
    path = tmp_path / "sparring.prose.md"
    path.write_text(PATTERN.replace("{TOLD}", told), encoding="utf-8")
    script = Script.from_mapping({"slots": {
        "proposer": ["A token bucket per tenant.", "A token bucket per tenant, revised."],
        "adversary": [ATTACK],
    }})
    notebook = Notebook()
    return asyncio.run(run_pattern(path, RunOptions(
        inputs={"task_brief": "Design a rate limiter."}, script=script,
        trace_path=tmp_path / "trace.jsonl",
        bindings={"notebook": PythonService("tests.test_content_check:Notebook", notebook)},
    )))


def test_a_flow_the_labels_miss_is_stopped_by_the_content_check(tmp_path: Path) -> None:
    result = _run(tmp_path, "attack")
    assert result.exit_code == 5, result.error and result.error.format()
    assert result.error is not None
    assert "content check" in result.error.message and "`adversary`" in result.error.message
    stopped = [e for e in result.events if e.type == "error"]
    assert stopped and stopped[0].rules == ["content"]
    # The proposer was called once (the first proposal), never with the attack.
    proposer_calls = [e for e in result.events if e.type == "call" and e.slot == "proposer"]
    assert len(proposer_calls) == 1
    assert not any(ATTACK in str(e.messages) for e in proposer_calls)


def test_the_same_program_without_the_side_channel_runs(tmp_path: Path) -> None:
    result = _run(tmp_path, "proposal")
    assert result.exit_code == 0, result.error and result.error.format()


def test_text_another_slot_also_wrote_is_not_novel() -> None:
    """Text is novel only where the call was not given it; a probe finds any copied run of
    GUARANTEED characters wherever it starts."""
    given = {h for h in content.shingles("the proposal: a token bucket per tenant")}
    fresh = content.novel(["a token bucket per tenant forgets bursts entirely"], given)
    assert fresh
    assert not content.novel(["A  token bucket PER tenant"], given)
    run = "forgets bursts entirely"
    assert len(content.normalise(run)) >= content.GUARANTEED
    for prefix in range(8):
        message = "x" * prefix + " notes: " + run + " end"
        assert set(content.probes(message)) & fresh, prefix


@pytest.mark.parametrize("example", ["two-reviewer-gate", "proposer-adversary", "blind-review",
                                     "adversarial-review", "plan-conformance"])
def test_no_false_alarm_on_the_librarys_hiding_examples(example: str, tmp_path: Path) -> None:
    """The check is always on: the library's patterns that hide slots from each other run
    their scripted examples unstopped (tests/test_examples.py runs every example and every
    `prose test` scenario, each of which would exit 5 on a false alarm)."""
    result = run_prose_in_process("run", str(ROOT / "examples" / f"{example}.yaml"), "--script",
                                  str(ROOT / "examples" / f"{example}.script.yaml"), "--json",
                                  cwd=tmp_path)
    assert result.code == 0, result.output
