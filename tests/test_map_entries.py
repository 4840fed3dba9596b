"""Invariants about one entry of a map-valued slot (`` `handlers.billing` never sees
`router` ``): the parser and the loader, the run time with a computed key, and the audit
from a forged trace (the linter, the run-time stop and the audit's agreement on a
literal key are the leak fixture map-entry.yaml)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from conftest import run_prose_in_process
from test_ledger_audit import events_of, write_chained
from test_rules import build_pattern

from prose.check import lint_text
from prose.spec import load_spec
from prose.spec.invariants import NeverSees, SeesOnly, parse_invariant_form

SECTIONS = {
    "slots": "- `router` (primary)\n  - ensures: route object with `category` (string)\n"
             "- `handlers` (map)\n  - ensures: reply to the request",
    "invariants": "- `handlers.billing` never sees `router`",
    "parameters": "- `request`: string -- the request",
    "returns": "- `result`: the reply",
    "config": None,
}
PROGRAM = """\
let route = call router
  request: request
let reply = call handlers[route.category]
  request: request
  route: route
return { result: reply }
"""


def _run(tmp_path: Path, category: str) -> tuple[Any, Path]:
    tmp_path.mkdir(exist_ok=True)
    pattern = tmp_path / "route.prose.md"
    pattern.write_text(build_pattern(PROGRAM, SECTIONS, "route").text, encoding="utf-8")
    instance = tmp_path / "route.yaml"
    instance.write_text(yaml.safe_dump({
        "pattern": "route.prose.md",
        "with": {"router": {"model": "r"},
                 "handlers": {"billing": {"model": "b"}, "general": {"model": "g"}}},
        "inputs": {"request": "my invoice"}}), encoding="utf-8")
    script = tmp_path / "route.script.yaml"
    script.write_text(yaml.safe_dump({"slots": {
        "router": [{"category": category}],
        "handlers[billing]": ["billing reply"], "handlers[general]": ["general reply"]}}),
        encoding="utf-8")
    trace = tmp_path / "t.jsonl"
    result = run_prose_in_process("run", str(instance), "--script", str(script), "--trace",
                                  str(trace), "-q", "--no-check")  # the linter's verdict: below
    return result, trace


def test_an_entry_is_named_in_the_viewers_place_only() -> None:
    assert parse_invariant_form("`handlers.billing` never sees `router`") == NeverSees(
        "handlers.billing", "router")
    assert parse_invariant_form("`handlers.billing` sees only `request`") == SeesOnly(
        "handlers.billing", ("request",))
    assert parse_invariant_form("`router` never sees `handlers.billing`") is None


def test_an_entry_of_a_slot_that_is_not_a_map_is_refused() -> None:
    sections = {**SECTIONS, "slots": SECTIONS["slots"].replace(" (map)", "")}
    text = build_pattern(PROGRAM.replace("handlers[route.category]", "handlers"),
                         sections, "route").text
    codes = [(d.code, d.message) for d in load_spec(text, "p.prose.md").diagnostics]
    assert ("PS150", "invariant names `handlers.billing`, `handlers` is not a map-valued slot "
            "(mark it `(map)` to name its entries)") in codes


def test_a_computed_key_is_any_entry_for_the_linter() -> None:
    found = lint_text(build_pattern(PROGRAM, SECTIONS, "route").text, "p.prose.md").diagnostics
    assert [d.code for d in found if d.code.startswith("PH")] == ["PH604"]


def test_the_run_time_stops_the_billing_entry_only(tmp_path: Path) -> None:
    general, _ = _run(tmp_path / "general", "general")
    assert general.code == 0, general.output
    assert json.loads(general.stdout)["result"] == "general reply"
    billing, _ = _run(tmp_path / "billing", "billing")
    assert billing.code == 5, billing.output
    assert "`handlers.billing` must never see" in billing.output


def test_a_forged_entry_is_found_by_the_audit(tmp_path: Path) -> None:
    result, trace = _run(tmp_path, "general")
    assert result.code == 0, result.output
    assert run_prose_in_process("audit", str(trace)).code == 0
    events = events_of(trace)
    handler = next(e for e in events if e["type"] == "call" and e["slot"] == "handlers")
    assert handler["entry"] == "general"
    handler["entry"] = "billing"  # as if the billing entry had been given the route
    forged = write_chained(tmp_path / "forged.jsonl", events)
    report = run_prose_in_process("audit", str(forged), "--json")
    findings = json.loads(report.stdout)["findings"]
    assert [f["rule"] for f in findings] == ["never-sees"], findings
