"""Control-flow invariants (`runs only if`, `runs only after`, `gets the same`, `at most one
of`): each form broken and kept, in the linter, the run time and the audit.

The fixtures are tests/fixtures/gates/*.yaml (format: its README.md). For each one the
violating program must be reported by the linter at the call, and its run (scripted,
`--no-check`) must stop with R060 before the call is made; the clean twin lints without
that rule's finding, runs to the end, and its trace passes `prose audit`, until it is
edited (and re-chained, so only the gate check can catch it).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import FIXTURES, run_prose_in_process
from test_ledger_audit import events_of, write_chained
from test_rules import build_pattern

from prose.check import lint_text
from prose.lang.gates import GateHistory, Gates, Guard, iteration_of
from prose.lang.policy import Policy

GATES = sorted((FIXTURES / "gates").glob("*.yaml"))
IDS = [path.stem for path in GATES]
SECTIONS = {"parameters": "- `brief`: string -- the request", "returns": "- `result`: the answer"}


def _fixture(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _sections(data: dict[str, Any], twin: str = "violate") -> dict[str, str | None]:
    """The pattern's sections; a twin may declare its own `slots` (a type that proves it)."""
    slots = data.get(twin, {}).get("slots", data["slots"]) if twin in data else data["slots"]
    return {**SECTIONS, "slots": slots, "invariants": data["invariants"]}


def _pattern(data: dict[str, Any], program: str, folder: Path, name: str,
             twin: str = "violate") -> Path:
    sections = _sections(data, twin)
    text = build_pattern(program, sections, name).text
    path = folder / f"{name}.prose.md"
    path.write_text(text, encoding="utf-8")
    return path


def _run(pattern: Path, script: dict[str, Any], trace: Path, *extra: str) -> Any:
    script_path = pattern.with_name(pattern.name.replace(".prose.md", ".script.yaml"))
    script_path.write_text(yaml.safe_dump({"slots": script}), encoding="utf-8")
    return run_prose_in_process("run", str(pattern), "--script", str(script_path), "--input",
                                "brief=billing", "--trace", str(trace), "-q", *extra)


@pytest.mark.parametrize("path", GATES, ids=IDS)
def test_the_linter_reports_the_violating_call(path: Path) -> None:
    data = _fixture(path)
    built = build_pattern(data["violate"]["program"], _sections(data), "gate")
    result = lint_text(built.text, "gate.prose.md")
    found = sorted(f"{d.code} {d.span.line - built.block_start + 1}:{d.span.column}"
                   for d in result.diagnostics if d.code.startswith("PH63"))
    assert found == sorted(data["violate"]["lint"])
    clean = build_pattern(data["clean"]["program"], _sections(data, "clean"), "gate")
    assert [d for d in lint_text(clean.text, "gate.prose.md").diagnostics
            if d.code.startswith("PH63")] == []


@pytest.mark.parametrize("path", GATES, ids=IDS)
def test_the_run_stops_before_the_call(path: Path, tmp_path: Path) -> None:
    data = _fixture(path)
    pattern = _pattern(data, data["violate"]["program"], tmp_path, "gate")
    trace = tmp_path / "t.jsonl"
    result = _run(pattern, data["violate"]["script"], trace, "--no-check")
    assert result.code == 5, result.output
    assert "R060" in result.output
    events = events_of(trace)
    stopped = data["violate"]["stopped"]
    made = [e for e in events if e["type"] == "call" and e["slot"] == stopped]
    assert len(made) == data["violate"].get("made", 0)  # the calls before the stopped one
    errors = [e for e in events if e["type"] == "error"]
    assert len(errors) == 1 and errors[0]["code"] == "R060" and errors[0]["kind"] == "gate"
    assert errors[0]["rules"] == [data["rule"]] and errors[0]["slot"] == stopped


@pytest.mark.parametrize("path", GATES, ids=IDS)
def test_the_clean_twin_runs_and_a_forged_trace_is_found(path: Path, tmp_path: Path) -> None:
    data = _fixture(path)
    pattern = _pattern(data, data["clean"]["program"], tmp_path, "gate", "clean")
    trace = tmp_path / "t.jsonl"
    result = _run(pattern, data["clean"]["script"], trace)
    assert result.code == 0, result.output
    audited = run_prose_in_process("audit", str(trace))
    assert audited.code == 0, audited.stdout
    events = events_of(trace)
    forge = data["forge"]
    position = next(i for i, e in enumerate(events)
                    if e["type"] == "call" and e["slot"] == forge["slot"])
    call = events[position]
    if "set" in forge:
        holder = call
        *keys, last = forge["set"]["path"]
        for key in keys:
            holder = holder[key]
        holder[last] = forge["set"]["value"]
        call.pop("sha256", None)  # the output digest is not what this test is about
    else:
        twin = copy.deepcopy(call)
        twin.update(slot=forge["copy"], id="c99", usage={})  # totals are not the point
        events.insert(len(events) - 1, twin)
    forged = write_chained(tmp_path / "forged.jsonl", events)
    report = run_prose_in_process("audit", str(forged), "--json")
    findings = json.loads(report.stdout)["findings"]
    assert [f["rule"] for f in findings] == [data["rule"]], findings


def test_per_iteration_scopes_are_the_innermost_iteration() -> None:
    assert iteration_of("") == ""
    assert iteration_of("/for@2:1#0") == "/for@2:1#0"
    assert iteration_of("/for@2:1#3/if@4:3") == "/for@2:1#3"
    assert iteration_of("/for@2:1#3/loop@5:5#1/x") == "/for@2:1#3/loop@5:5#1"


def test_a_condition_that_could_not_be_evaluated_is_no_pass() -> None:
    gates = Gates(guards=(Guard("writer", ("gate", "ok")),))
    history = GateHistory()
    found = history.violations(gates, "writer", conditions={}, given={}, path="")
    assert [item.rule for item in found] == ["runs-only-if"]
    assert "cannot be evaluated" in found[0].message
    assert history.violations(gates, "writer", conditions={"gate.ok": True}, given={}, path="") == []


def test_the_policy_records_the_gates() -> None:
    gates = Gates(guards=(Guard("writer", ("gate", "ok"), 3, "t"),))
    policy = Policy("p", gates=gates)
    again = Policy.from_dict(json.loads(json.dumps(policy.to_dict())))
    assert again.gates == gates
    assert "gates" not in Policy("p").to_dict()  # a policy without gates reads as before


def test_explain_marks_a_broken_gate_violated() -> None:
    from prose.check.explain import explain

    data = _fixture(FIXTURES / "gates" / "runs-only-if.yaml")
    sections = {**SECTIONS, "slots": data["slots"], "invariants": data["invariants"]}
    result = lint_text(build_pattern(data["violate"]["program"], sections, "gate").text,
                       "gate.prose.md")
    [report] = explain(result).invariants
    assert report.status == "violated" and "does not check `gate.ok`" in report.findings[0]
    clean = lint_text(build_pattern(data["clean"]["program"], sections, "gate").text,
                      "gate.prose.md")
    assert [item.status for item in explain(clean).invariants] == ["holds"]


SESSION = """\
agent writer:
  model: fast
let gate = call checker
  brief: brief
let draft = session: writer
  brief: brief
return { result: draft }
"""


def test_a_session_is_gated_like_a_call(tmp_path: Path) -> None:
    """`session: writer` is a call of the slot `writer`: the linter and the run time judge it."""
    data = _fixture(FIXTURES / "gates" / "runs-only-if.yaml")
    sections = {**SECTIONS, "slots": data["slots"], "invariants": data["invariants"]}
    built = build_pattern(SESSION, sections, "gate")
    found = [f"{d.code} {d.span.line - built.block_start + 1}:{d.span.column}"
             for d in lint_text(built.text, "gate.prose.md").diagnostics if d.code == "PH630"]
    assert found == ["PH630 5:13"]
    pattern = _pattern(data, SESSION, tmp_path, "gate")
    result = _run(pattern, {"checker": [{"ok": False}], "writer": ["a draft"]},
                  tmp_path / "t.jsonl", "--no-check", "--allow-model", "fast")
    assert result.code == 5 and "R060" in result.output, result.output


def test_never_after_any_return_counts_only_calls_that_returned() -> None:
    """`` `chain` never runs after `chain` returns ``: a failed call stops nothing."""
    from prose.lang.gates import NEVER_AFTER, Stop

    gates = Gates(stops=(Stop(("chain",), "chain", line=3),))
    history = GateHistory()
    history.started(gates, "chain", given={}, path="")
    history.failed("chain", "")
    assert history.violations(gates, "chain", conditions={}, given={}, path="") == []
    history.returned(gates, "chain", "an answer", "")
    found = history.violations(gates, "chain", conditions={}, given={}, path="")
    assert [(item.rule, item.line) for item in found] == [(NEVER_AFTER, 3)]
    assert "`chain` never runs after `chain` returns" in found[0].message


def test_binding_order_refuses_a_second_call_while_one_runs() -> None:
    from prose.lang.gates import BINDING_ORDER, Ordered

    gates = Gates(ordered=(Ordered("stages", line=2),))
    assert Gates.from_dict(gates.to_dict()) == gates
    history = GateHistory()
    assert history.violations(gates, "stages", conditions={}, given={}, path="", index=0) == []
    history.started(gates, "stages", given={}, path="", index=0)
    running = history.violations(gates, "stages", conditions={}, given={}, path="", index=1)
    assert [item.rule for item in running] == [BINDING_ORDER]
    assert "another call of it is running" in running[0].message
    history.ended(gates, "stages")
    assert history.violations(gates, "stages", conditions={}, given={}, path="", index=1) == []
    skipped = history.violations(gates, "stages", conditions={}, given={}, path="", index=2)
    assert "the next call is of `stages[1]`, not `stages[2]`" in skipped[0].message


GROWTH = {
    "parameters": "- `brief`: string -- the request",
    "returns": "- `result`: the certified steps",
    "slots": ("- `advancer` (primary)\n  - ensures: object with `step` (string)\n"
              "- `certifier`\n  - ensures: object with `certified` (boolean)"),
    "invariants": "- `progress` grows only after `certifier` returns `certified` == true",
}
GROWTH_PROGRAM = """\
let progress = []
repeat 2:
  let proposal = call advancer
    brief: brief
  let verdict = call certifier
    step: proposal.step
  GROW
return { result: progress }
"""


def test_a_growth_the_certifier_refused_stops_the_run(tmp_path: Path) -> None:
    """`grows only after`: PH643 at the `append`; under `--no-check` the run time stops the
    run before the list grows (R060); the gated twin lints clean and runs."""
    script = {"advancer": [{"step": "one"}, {"step": "two"}],
              "certifier": [{"certified": True}, {"certified": False}]}
    ungated = build_pattern(GROWTH_PROGRAM.replace("GROW", "append proposal.step to progress"),
                            GROWTH, "ratchet")
    assert [d.code for d in lint_text(ungated.text, "r.prose.md").diagnostics
            if d.code.startswith("PH64")] == ["PH643"]
    pattern = tmp_path / "ratchet.prose.md"
    pattern.write_text(ungated.text, encoding="utf-8")
    trace = tmp_path / "t.jsonl"
    result = _run(pattern, script, trace, "--no-check")
    assert result.code == 5 and "R060" in result.output, result.output
    errors = [e for e in events_of(trace) if e["type"] == "error"]
    assert [(e["code"], e["rules"]) for e in errors] == [("R060", ["grows-only-after"])]
    assert "but its latest call did not" in errors[0]["message"]
    gated = build_pattern(GROWTH_PROGRAM.replace(
        "GROW", "if verdict.certified:\n    append proposal.step to progress"), GROWTH, "ratchet")
    assert [d for d in lint_text(gated.text, "r.prose.md").diagnostics
            if d.code.startswith("PH64")] == []
    pattern.write_text(gated.text, encoding="utf-8")
    result = _run(pattern, script, tmp_path / "t2.jsonl")
    assert result.code == 0, result.output


SEQUENCE = {
    "parameters": "- `brief`: string -- the request",
    "returns": "- `result`: the notes of every chain",
    "slots": "- `reviewer` (primary)\n  - ensures: a note on the material",
    "invariants": "- each chain of `reviewer` gets the same sequence of `material`",
}
SEQUENCE_PROGRAM = """\
let orders = ORDERS
let reads = parallel for order in orders:
  let notes = []
  for material in order:
    let note = call reviewer
      material: material
    record note in notes
  return notes
return { result: reads }
"""


def test_chains_that_read_the_materials_in_another_order_are_stopped(tmp_path: Path) -> None:
    """`same sequence`: not proven by the linter; the run time stops the first call of a
    chain given another material than the same call of an earlier chain (R060), and the
    audit finds a recorded digest changed after the run."""
    script = {"reviewer": ["n1", "n2", "n3", "n4"]}
    swapped = build_pattern(SEQUENCE_PROGRAM.replace("ORDERS", '[["a", "b"], ["b", "a"]]'),
                            SEQUENCE, "blind")
    pattern = tmp_path / "blind.prose.md"
    pattern.write_text(swapped.text, encoding="utf-8")
    trace = tmp_path / "t.jsonl"
    result = _run(pattern, script, trace)
    assert result.code == 5 and "R060" in result.output, result.output
    errors = [e for e in events_of(trace) if e["type"] == "error"]
    assert [(e["code"], e["rules"]) for e in errors] == [("R060", ["same-sequence"])]
    assert "call 1 of this chain gets another `material`" in errors[0]["message"]
    same = build_pattern(SEQUENCE_PROGRAM.replace("ORDERS", '[["a", "b"], ["a", "b"]]'),
                         SEQUENCE, "blind")
    pattern.write_text(same.text, encoding="utf-8")
    trace = tmp_path / "t2.jsonl"
    assert _run(pattern, script, trace).code == 0
    assert run_prose_in_process("audit", str(trace)).code == 0
    events = events_of(trace)
    calls = [e for e in events if e["type"] == "call"]
    last = calls[-1]
    assert set(last["gates"]["given"]) == {"material"} and last["branch"]
    last["gates"]["given"]["material"] = "sha256:" + "0" * 64
    forged = write_chained(tmp_path / "forged.jsonl", events)
    findings = json.loads(run_prose_in_process("audit", str(forged), "--json").stdout)["findings"]
    assert [f["rule"] for f in findings] == ["same-sequence"], findings


FANOUT = {
    "parameters": ("- `brief`: string -- the request\n"
                   "- `briefs`: string[] -- one brief per delegate"),
    "returns": "- `result`: one answer per delegate, in binding order",
    "slots": "- `delegates` (list)\n  - ensures: the answer to one brief",
    "invariants": ("- each of `delegates` gets its item of `briefs` as `brief`\n"
                   "- the returned `result` holds the outputs of `delegates` in binding order"),
}
FANOUT_PROGRAM = """\
let results = for delegate, index in delegates:
  call delegate
    brief: briefs[BRIEF]
return { result: RESULT }
"""


def _fanout(tmp_path: Path, brief: str, result: str, trace: Path, *extra: str) -> Any:
    built = build_pattern(FANOUT_PROGRAM.replace("BRIEF", brief).replace("RESULT", result),
                          FANOUT, "fanout")
    pattern = tmp_path / "fanout.prose.md"
    pattern.write_text(built.text, encoding="utf-8")
    script = tmp_path / "fanout.script.yaml"
    script.write_text(yaml.safe_dump({"slots": {"delegates": [["one"], ["two"]]}}),
                      encoding="utf-8")
    return run_prose_in_process("run", str(pattern), "--script", str(script), "--input",
                                'briefs=["b0", "b1"]', "--input", "brief=x", "--trace",
                                str(trace), "-q", *extra)


def test_a_delegate_given_another_brief_is_stopped(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    result = _fanout(tmp_path, "0", "results", trace, "--no-check")
    assert result.code == 5 and "R060" in result.output, result.output
    errors = [e for e in events_of(trace) if e["type"] == "error"]
    assert [(e["code"], e["rules"]) for e in errors] == [("R060", ["item-input"])]
    assert "`delegates[1]` gets another `brief` than `briefs[1]`" in errors[0]["message"]
    assert [e["index"] for e in events_of(trace) if e["type"] == "call"] == [0]


def test_a_result_out_of_binding_order_fails_and_a_forged_one_is_found(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    result = _fanout(tmp_path, "index", "[results[1], results[0]]", trace)
    assert result.code == 1 and "R061" in result.output, result.output
    assert "holds the outputs of `delegates` in binding order" in result.output
    trace = tmp_path / "t2.jsonl"
    assert _fanout(tmp_path, "index", "results", trace).code == 0
    assert run_prose_in_process("audit", str(trace)).code == 0
    events = events_of(trace)
    events[-1]["result"] = {**events[-1]["result"], "result": ["two", "one"]}
    forged = write_chained(tmp_path / "forged.jsonl", events)
    findings = json.loads(run_prose_in_process("audit", str(forged), "--json").stdout)["findings"]
    assert [f["rule"] for f in findings] == ["outputs-in-order"], findings
    events = events_of(trace)
    first = next(e for e in events if e["type"] == "call")
    first["gates"]["given"]["brief"] = "sha256:" + "0" * 64
    forged = write_chained(tmp_path / "forged2.jsonl", events)
    findings = json.loads(run_prose_in_process("audit", str(forged), "--json").stdout)["findings"]
    assert [f["rule"] for f in findings] == ["item-input"], findings
