"""The contract gate and the verdict of plan-conformance, as code.

Bind them in an instance file:

    with:
      gate: { python: "prose.tools.conformance:criterion_gate" }
      verdict: { python: "prose.tools.conformance:conformance_verdict" }

`criterion_gate` applies the evidence rule to one checker verdict: MET needs
cited evidence of the change and at least one proving test, otherwise the
criterion is at best PARTIAL; an evidence entry that starts with
`PIPELINE-FAULT:` forces UNMET whatever status it carries; a verdict that is
not a verdict (not an object, an unknown status, evidence that is not a list
of strings) is UNMET and marked as a fault. The gate only ever lowers a status.

`conformance_verdict` computes CONFORMS or DIVERGES: CONFORMS if and only if
at least one criterion was extracted, every criterion has exactly one verdict
and it is MET (after the gate's rule, applied again), the holistic pass found
no extras, and no fault was recorded (in `faults` or in the verification
record). Everything else is DIVERGES, with one complaint per reason, faults
first. It never raises for bad input: bad input is a complaint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from prose.tools.markers import PIPELINE_FAULT, fault, is_fault, kind_of

STATUSES = ("MET", "PARTIAL", "UNMET", "DIVERGED")


def criterion_gate(criterion: object, finding: object) -> dict[str, Any]:
    """One checker verdict through the evidence rule.

    Returns `criterion`, `status`, `evidence`, `tests` and `gate` (what the gate
    did, or "" when the verdict stands), plus `reported_status` (the checker's
    status) and `fault: true` when the finding was not a usable verdict.
    """
    name = criterion if isinstance(criterion, str) else _text(criterion)
    if not isinstance(finding, Mapping):
        return _faulty(name, f"the criterion check returned {kind_of(finding)}, not a verdict object")
    reported = finding.get("status")
    status = reported.strip().upper() if isinstance(reported, str) else None
    if status not in STATUSES:
        return _faulty(name, f"the criterion check returned the status {_text(reported)}, "
                             f"not one of {', '.join(STATUSES)}", reported)
    evidence = _strings(finding.get("evidence"))
    tests = _strings(finding.get("tests"))
    if evidence is None or tests is None:
        return _faulty(name, "the criterion check returned `evidence` or `tests` that is not "
                             "a list of strings", reported)
    gated = status
    note = ""
    if any(is_fault(entry) for entry in evidence):
        if status != "UNMET":
            gated = "UNMET"
            note = f"{status} forced to UNMET: an evidence entry starts with {PIPELINE_FAULT}"
    elif status == "MET":
        cited = [entry for entry in evidence if entry.strip()]
        proving = [test for test in tests if test.strip()]
        if not cited or not proving:
            gated = "PARTIAL"
            missing = [what for what, absent in (("evidence", not cited), ("proving test", not proving))
                       if absent]
            note = f"MET downgraded to PARTIAL: no {' and no '.join(missing)} cited"
    return {
        "criterion": name,
        "status": gated,
        "evidence": evidence,
        "tests": tests,
        "gate": note,
        "reported_status": reported,
    }


def conformance_verdict(
    criteria: object,
    criterion_verdicts: object,
    extras: object,
    verification_runs: object,
    faults: object,
) -> dict[str, Any]:
    """CONFORMS or DIVERGES, with the complaints and a summary. Fail-closed."""
    complaints: list[str] = []
    complaints += _fault_complaints(faults)
    complaints += _record_complaints(verification_runs)
    criteria_list = criteria if isinstance(criteria, list) else None
    if criteria_list is None:
        complaints.append(f"no acceptance criteria: expected a list, got {kind_of(criteria)}")
        criteria_list = []
    elif not criteria_list:
        complaints.append("no acceptance criteria were extracted: nothing can conform")
    for position, item in enumerate(criteria_list):
        if not isinstance(item, str) or not item.strip():
            complaints.append(fault(f"criterion {position + 1} is {kind_of(item)}, not a criterion text"
                                    if not isinstance(item, str) else
                                    f"criterion {position + 1} is empty"))
    verdicts = criterion_verdicts if isinstance(criterion_verdicts, list) else None
    if verdicts is None:
        complaints.append(fault(f"criterion verdicts: expected a list, got {kind_of(criterion_verdicts)}"))
        verdicts = []
    elif len(verdicts) != len(criteria_list):
        complaints.append(fault(f"{len(verdicts)} criterion verdict(s) for {len(criteria_list)} "
                                "criteria: every criterion needs exactly one"))
    counts = dict.fromkeys(STATUSES, 0)
    for position, item in enumerate(verdicts):
        expected = criteria_list[position] if position < len(criteria_list) else None
        gated = criterion_gate(_criterion_of(item, expected), item)
        counts[gated["status"]] += 1
        if gated["status"] != "MET":
            complaints.append(_criterion_complaint(gated, item))
        elif position < len(criteria_list) and gated["criterion"] != _text(expected):
            # The verdicts are in criteria order; one about something else means a lost criterion.
            complaints.append(fault(f"criterion verdict {position + 1} is about "
                                    f"{gated['criterion']!r}, not {_text(expected)!r}"))
    complaints += _extra_complaints(extras)
    conforms = not complaints
    total = len(criteria_list)
    if conforms:
        summary = f"Criteria: {total}/{total} met (all with tests)."
    else:
        unmet = counts["UNMET"] + counts["DIVERGED"]
        summary = (f"Criteria: {counts['MET']}/{total} met, {counts['PARTIAL']} partial, "
                   f"{unmet} unmet/diverged. {len(complaints)} complaint(s).")
    return {
        "verdict": "CONFORMS" if conforms else "DIVERGES",
        "complaints": complaints,
        "summary": summary,
        "verification": _record_lines(verification_runs),
    }


def _faulty(criterion: str, why: str, reported: object = None) -> dict[str, Any]:
    return {
        "criterion": criterion,
        "status": "UNMET",
        "evidence": [fault(why)],
        "tests": [],
        "gate": f"UNMET: {why}",
        "reported_status": reported,
        "fault": True,
    }


def _criterion_of(item: object, expected: object) -> object:
    if isinstance(item, Mapping) and isinstance(item.get("criterion"), str):
        return item["criterion"]
    return expected if expected is not None else "(no criterion)"


def _criterion_complaint(gated: Mapping[str, Any], item: object) -> str:
    earlier = item.get("gate") if isinstance(item, Mapping) else None
    detail = (gated["gate"] or (earlier if isinstance(earlier, str) else "")
              or "; ".join(gated["evidence"]) or "no evidence cited")
    return f"Acceptance criterion {gated['criterion']!r}: {gated['status']}: {detail}"


def _fault_complaints(faults: object) -> list[str]:
    if faults is None:
        return []
    if not isinstance(faults, list):
        return [fault(f"the fault list is {kind_of(faults)}, not a list")]
    return [item if isinstance(item, str) else fault(_text(item)) for item in faults]


def _record_complaints(record: object) -> list[str]:
    if record is None:
        return [fault("no verification record: the verification stage did not run")]
    if not isinstance(record, Mapping):
        return [fault(f"the verification record is {kind_of(record)}, not an object")]
    note = record.get("note")
    if is_fault(note):
        return [str(note)]
    if not isinstance(record.get("runs"), list):
        return [fault("the verification record has no list of runs")]
    return []


def _record_lines(record: object) -> list[str]:
    if not isinstance(record, Mapping):
        return ["no verification record"]
    lines: list[str] = []
    runs = record.get("runs")
    for run in runs if isinstance(runs, list) else []:
        if isinstance(run, Mapping):
            lines.append(f"{run.get('status')} `{run.get('command')}` (exit code "
                         f"{run.get('exit_code')}, {run.get('duration_seconds')}s)")
    note = record.get("note")
    if isinstance(note, str) and note:
        lines.append(note)
    return lines


def _extra_complaints(extras: object) -> list[str]:
    if extras is None:
        return []
    items: Sequence[object] = extras if isinstance(extras, list) else [extras]
    return [f"Beyond the criteria: {_text(item)}" for item in items]


def _strings(value: object) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)

