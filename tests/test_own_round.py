"""Per-round isolation (`` each `proposers` never sees its own round ``) in the audit, from a
forged trace (the linter and the run-time stop are the leak fixture own-round.yaml, run by
tests/test_leaks.py and tests/test_runtime_hiding.py), and the one rule of `lang/flows`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from conftest import run_prose_in_process
from test_ledger_audit import events_of, write_chained
from test_rules import build_pattern

from prose.lang.flows import same_round
from prose.spec.invariants import OwnRound, nearest_form, parse_invariant_form

SECTIONS = {
    "slots": "- `proposers` (list)\n  - ensures: an answer\n- `aggregator` (primary)\n"
             "  - ensures: one answer combining the proposals",
    "invariants": "- each `proposers` never sees its own round",
    "parameters": "- `question`: string -- the question",
    "returns": "- `result`: what the pattern found",
    "config": "- `rounds` (integer, default: 1): how many refining layers",
}
PROGRAM = """\
let answers = parallel for p in proposers:
  call p
    question: question
repeat rounds:
  answers = parallel for p in proposers:
    call p
      question: question
      previous: answers
let final = call aggregator
  answers: answers
return { result: final }
"""


def _run(tmp_path: Path) -> tuple[Any, Path]:
    pattern = tmp_path / "moa.prose.md"
    pattern.write_text(build_pattern(PROGRAM, SECTIONS, "moa").text, encoding="utf-8")
    instance = tmp_path / "moa.yaml"
    instance.write_text(yaml.safe_dump({
        "pattern": "moa.prose.md",
        "with": {"proposers": [{"model": m} for m in ("a", "b")], "aggregator": {"model": "j"}},
        "inputs": {"question": "which?"}}), encoding="utf-8")
    script = tmp_path / "moa.script.yaml"
    script.write_text(yaml.safe_dump({"slots": {"proposers": ["one", "two", "three", "four"],
                                                "aggregator": ["both"]}}), encoding="utf-8")
    trace = tmp_path / "t.jsonl"
    result = run_prose_in_process("run", str(instance), "--script", str(script), "--trace",
                                  str(trace), "-q")
    return result, trace


def test_the_form_parses_and_a_near_miss_is_shown_it() -> None:
    assert parse_invariant_form("each `proposers` never sees its own round.") == OwnRound("proposers")
    assert parse_invariant_form("`proposers` never sees its own round") == OwnRound("proposers")
    assert nearest_form("each `proposers` never see its own rounds") == (
        "each `proposers` never sees its own round")


def test_a_round_is_one_execution_of_a_parallel_construct() -> None:
    # run time: NODE@SERIAL#POSITION; the same execution (any branch) is the same round
    assert same_round(("4:1@7#0",), ("4:1@7#1",))
    assert same_round(("4:1@7#0", "9:3@8#1"), ("4:1@7#0",))  # collected inside the round
    assert not same_round(("4:1@6#0",), ("4:1@7#0",))  # an earlier execution's join
    assert not same_round((), ("4:1@7#0",))  # made before the parallel
    # the linter: NODE, and NODE* once the output left the construct through its join
    assert same_round(("4:1",), ("4:1",))
    assert not same_round(("4:1*",), ("4:1",))


def test_the_layers_run_and_a_forged_same_round_input_is_found(tmp_path: Path) -> None:
    result, trace = _run(tmp_path)
    assert result.code == 0, result.output
    assert run_prose_in_process("audit", str(trace)).code == 0
    events = events_of(trace)
    calls = [e for e in events if e["type"] == "call" and e["slot"] == "proposers"]
    second = next(e for e in calls if e.get("chains"))  # a call of the second layer
    assert all(path != second["branch"] for _, path, _, _ in second["chains"])
    second["chains"][0][1] = list(second["branch"])  # as if it had been given its own draft
    forged = write_chained(tmp_path / "forged.jsonl", events)
    report = run_prose_in_process("audit", str(forged), "--json")
    findings = json.loads(report.stdout)["findings"]
    assert [f["rule"] for f in findings] == ["own-round"], findings
    assert "made in the round this call runs in" in findings[0]["message"]
