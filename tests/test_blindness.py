"""Blind judging: `shuffle` and `` `judge` is blind to the source of `samplers` `` at run time
and in the audit (the linter and the run-time stop are the leak fixtures'
blind-*.yaml and shuffle-key.yaml, run by tests/test_leaks.py and
tests/test_runtime_hiding.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from conftest import run_prose_in_process
from test_ledger_audit import events_of, write_chained
from test_rules import build_pattern

SECTIONS = {
    "slots": "- `samplers` (list)\n  - ensures: an answer\n- `judge` (primary)\n"
             "  - ensures: object with `best` (integer)",
    "invariants": "- `judge` is blind to the source of `samplers`",
    "parameters": "- `question`: string -- the question",
    "returns": "- `result`: what the pattern found",
    "config": None,
}
ANSWERS = ["the first sampler's answer", "the second sampler's answer", "the third sampler's answer"]


def _run(tmp_path: Path, program: str) -> tuple[Any, Path]:
    pattern = tmp_path / "blind.prose.md"
    pattern.write_text(build_pattern(program, SECTIONS, "blind").text, encoding="utf-8")
    instance = tmp_path / "blind.yaml"
    instance.write_text(yaml.safe_dump({
        "pattern": "blind.prose.md",
        "with": {"samplers": [{"model": m} for m in ("a", "b", "c")], "judge": {"model": "j"}},
        "inputs": {"question": "which?"}}), encoding="utf-8")
    script = tmp_path / "blind.script.yaml"
    script.write_text(yaml.safe_dump({"slots": {"samplers": ANSWERS, "judge": [{"best": 0}]}}),
                      encoding="utf-8")
    trace = tmp_path / "t.jsonl"
    result = run_prose_in_process("run", str(instance), "--script", str(script), "--trace",
                                  str(trace), "-q")
    return result, trace


PROGRAM = """\
let answers = for s in samplers:
  call s
    question: question
let mixed = shuffle(answers)
let verdict = call judge
  answers: mixed.items
let back = []
for i in [0, 1, 2]:
  append answers[mixed.key[i]] to back
return { result: { items: mixed.items, back: back, key: mixed.key } }
"""


def test_the_key_undoes_the_shuffle_in_code(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, PROGRAM)
    assert result.code == 0, result.output
    found = json.loads(result.stdout)["result"]
    assert sorted(found["items"]) == sorted(ANSWERS)
    assert found["back"] == found["items"]  # `answers[key[i]]` is `items[i]`
    assert sorted(found["key"]) == [0, 1, 2]


def test_the_judge_gets_the_shuffled_order_and_a_forged_order_is_found(tmp_path: Path) -> None:
    result, trace = _run(tmp_path, PROGRAM)
    assert result.code == 0, result.output
    assert run_prose_in_process("audit", str(trace)).code == 0
    events = events_of(trace)
    judge = next(e for e in events if e["type"] == "call" and e["slot"] == "judge")
    assert {index for _, _, index, _ in judge["chains"]} == {-4}  # flows.SHUFFLED
    judge["chains"][0][2] = 0  # as if the judge had been given the answers in binding order
    forged = write_chained(tmp_path / "forged.jsonl", events)
    report = run_prose_in_process("audit", str(forged), "--json")
    findings = json.loads(report.stdout)["findings"]
    assert [f["rule"] for f in findings] == ["blind"], findings
    assert "in binding order" in findings[0]["message"]


def test_a_forged_loop_counter_over_the_samplers_is_found(tmp_path: Path) -> None:
    """The audit reads the position marker a counter over the samplers carries
    (`prose.lang.flows.loop_counter`) from the recorded provenance."""
    from prose.lang.flows import order_marker

    result, trace = _run(tmp_path, PROGRAM)
    assert result.code == 0, result.output
    events = events_of(trace)
    judge = next(e for e in events if e["type"] == "call" and e["slot"] == "judge")
    assert order_marker("samplers") not in judge["provenance"]
    judge["provenance"].append(order_marker("samplers"))  # as if given `i` of `for s, i in samplers`
    forged = write_chained(tmp_path / "forged.jsonl", events)
    report = run_prose_in_process("audit", str(forged), "--json")
    findings = json.loads(report.stdout)["findings"]
    assert [f["rule"] for f in findings] == ["blind"], findings
    assert "position in the binding order of `samplers`" in findings[0]["message"]
