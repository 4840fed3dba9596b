"""The audit's check of answers given by people (docs/people.md).

A call of a slot bound to a person is checked like any call (its messages
against the policy, its output against its digest, in the hash chain). On top,
its answer must say who gave it and when, and that person must be one the
binding recorded in `run_start` allows (`may_answer`; empty: anyone). An answer a
script gave (`people:`, `via: script`) stands for any of them, in a scripted run only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prose.ledger.trace_file import LoadedTrace

# (rule, message, trace line, call id, slot, position in the pattern): an audit finding.
PersonFinding = tuple[str, str, int, str, str, str | None]


def _allowed(bindings: Mapping[str, Any], slot: str, index: Any) -> list[str] | None:
    """Who may answer for `slot` as `run_start` recorded it; None when it is not a person."""
    binding = bindings.get(slot)
    if isinstance(binding, list) and isinstance(index, int) and 0 <= index < len(binding):
        binding = binding[index]
    if not isinstance(binding, Mapping) or binding.get("kind") != "person":
        return None
    return [str(name) for name in binding.get("may_answer") or ()]


def person_findings(trace: LoadedTrace) -> Iterator[PersonFinding]:
    """Every answered person call records who answered and when, and that person may."""
    start = trace.run_start
    bindings = start.event.get("bindings") or {} if start is not None else {}
    for line in trace.calls:
        event = line.event
        if not str(event.get("service", "")).startswith("person:") or event.get("error"):
            continue
        slot = str(event.get("slot", ""))
        answered = event.get("answered")
        where = f"{event.get('file')}:{event.get('line')}" if event.get("line") else None
        call = str(event.get("id", ""))
        if not isinstance(answered, Mapping) or not answered.get("by") or not answered.get("at"):
            yield ("person", f"the answer of `{slot}` does not record who gave it and "
                          "when", line.number, call, slot, where)
            continue
        if answered.get("via") == "script":
            models = start.event.get("models") if start is not None else None
            if not (isinstance(models, Mapping) and models.get("scripted")):
                yield ("person", f"the answer of `{slot}` says a script gave it, but the run "
                              "was not scripted", line.number, call, slot, where)
            continue  # a test's scripted answer stands for whoever may answer
        allowed = _allowed(bindings, slot, event.get("index"))
        if allowed and answered["by"] not in allowed:
            yield ("person", f"`{answered['by']}` answered `{slot}`, but only "
                          f"{', '.join(allowed)} may", line.number, call, slot, where)
