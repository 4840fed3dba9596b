"""Dispatch by key (docs/language.md 3.5): a `map` slot bound to a mapping of services,
`call handlers[route.category]` with the `default` entry as fallback, calls of list-valued
slots by index, and PN106 counting calls through service values. Run through the real
linter and the interpreter with the scripted model and an instance file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from prose.check import lint_text
from prose.llm import Script
from prose.runtime import RunOptions, run_pattern
from tests.test_runtime import ok, run, write_pattern

ROUTER = """
let route = call router
  ticket: ticket
let answer = call handlers[route.category]
  ticket: ticket
return { result: answer }
"""
SLOTS = """- `router`
  - requires: ticket
  - ensures: route object with `category` (string)
- `handlers` (map)
  - requires: ticket
  - ensures: answer text"""
PARAMS = "- `ticket`: string -- the customer's ticket"


def _script(category: str) -> dict[str, object]:
    return {"slots": {"router": [{"category": category}],
                      "handlers[billing]": ["billing answer"],
                      "handlers[tech]": ["tech answer"],
                      "handlers[default]": ["default answer"]}}


def test_call_by_key_reaches_that_entry(tmp_path: Path) -> None:
    result = run(tmp_path, ROUTER, _script("tech"), slots=SLOTS, params=PARAMS,
                 inputs={"ticket": "my disk is full"})
    assert ok(result) == {"result": "tech answer"}


def test_a_missing_key_falls_back_to_the_default_entry(tmp_path: Path) -> None:
    result = run(tmp_path, ROUTER, _script("refund"), slots=SLOTS, params=PARAMS,
                 inputs={"ticket": "give me my money"})
    assert ok(result) == {"result": "default answer"}


def test_a_missing_key_without_default_is_an_error_naming_the_entries(tmp_path: Path) -> None:
    script = _script("refund")
    del script["slots"]["handlers[default]"]  # type: ignore[index]
    result = run(tmp_path, ROUTER, script, slots=SLOTS, params=PARAMS,
                 inputs={"ticket": "give me my money"})
    assert result.exit_code == 1 and result.error is not None
    assert result.error.code == "R005"
    assert '"refund"' in result.error.message and "`billing`, `tech`" in result.error.message


def test_an_instance_binds_a_map_slot_and_lint_is_clean(tmp_path: Path) -> None:
    pattern = write_pattern(tmp_path, ROUTER, slots=SLOTS, params=PARAMS, name="router")
    instance = tmp_path / "router.yaml"
    instance.write_text(yaml.safe_dump({
        "pattern": "router.prose.md",
        "with": {"router": {"model": "fast"},
                 "handlers": {"billing": {"model": "fast", "prompt": "You do billing."},
                              "tech": {"model": "strong"}}},
        "inputs": {"ticket": "my disk is full"},
    }))
    from prose.spec.instance_loader import load_instance_file

    loaded = load_instance_file(instance)
    assert [d.code for d in loaded.diagnostics] == []
    assert loaded.instance is not None
    binding = loaded.instance.bindings["handlers"]
    assert binding.keys == ["billing", "tech"] and len(binding.services) == 2
    report = lint_text(pattern.read_text(), str(pattern)).diagnostics
    assert [d.code for d in report if d.severity.value == "error"] == []


def test_calls_of_a_list_slot_by_index(tmp_path: Path) -> None:
    program = """
    let first = call reviewers[0]
      draft: draft
    let last = call reviewers[-1]
      draft: draft
    return { result: [first, last] }
    """
    slots = "- `reviewers` (list)\n  - requires: draft"
    pattern = write_pattern(tmp_path, program, slots=slots, params="- `draft`: string -- a draft")
    codes = [d.code for d in lint_text(pattern.read_text(), str(pattern)).diagnostics]
    assert "PN102" not in codes and "PN106" not in codes
    script = {"slots": {"reviewers": [["one"], ["two"], ["three"]]}}
    opts = RunOptions(script=Script.from_mapping(script), trace_path=tmp_path / "t.jsonl",
                      inputs={"draft": "d"})
    assert ok(asyncio.run(run_pattern(pattern, opts))) == {"result": ["one", "three"]}


def test_pn106_counts_calls_through_service_values(tmp_path: Path) -> None:
    program = """
    let pick = critic
    if draft is empty:
      pick = editor
    let notes = call pick
      draft: draft
    return { result: notes }
    """
    slots = "- `critic`\n  - requires: draft\n- `editor`\n  - requires: draft\n- `idle`"
    pattern = write_pattern(tmp_path, program, slots=slots, params="- `draft`: string -- a draft")
    unused = [d.message for d in lint_text(pattern.read_text(), str(pattern)).diagnostics if d.code == "PN106"]
    assert unused == ["slot `idle` is never called"]


def test_a_map_slot_bound_to_a_list_and_a_mapping_bound_to_a_single_slot_are_ps202(
    tmp_path: Path
) -> None:
    write_pattern(tmp_path, ROUTER, slots=SLOTS, params=PARAMS, name="router")
    instance = tmp_path / "router.yaml"
    instance.write_text(yaml.safe_dump({
        "pattern": "router.prose.md",
        "with": {"router": {"billing": {"model": "fast"}},
                 "handlers": [{"model": "fast"}, {"model": "strong"}]},
        "inputs": {"ticket": "t"},
    }))
    from prose.spec.instance_loader import load_instance_file

    found = [(d.code, d.message) for d in load_instance_file(instance).diagnostics]
    assert ("PS202", "slot `router` takes one service (mark the slot `(map)` to bind entries)"
            ) in found
    assert any(code == "PS202" and "slot `handlers` takes a mapping" in message
               for code, message in found)
