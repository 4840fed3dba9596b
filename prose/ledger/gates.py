"""The audit of the control-flow invariants: the recorded calls, judged again in order.

The run time asked `prose.lang.gates.GateHistory` before each call; the audit fills a
history of its own from the trace's call events, in the order they were recorded, and
asks the same question of each call: did the approver's latest recorded output approve
it, had another slot of an exclusive set already run in its run or iteration, were the
recorded condition and input digests what the invariant needs. A trace edited after
the run (an approval turned into a refusal, a second handler's call added, a condition
recorded false) is a finding here even when its hash chain was recomputed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from prose.lang.gates import GateHistory, Gates
from prose.ledger.trace_file import LoadedTrace, nesting


def gate_findings(trace: LoadedTrace, gates: Gates) -> Iterator[tuple[str, str, int, str, str,
                                                                      str | None]]:
    """(rule, message, trace line, call id, slot, source position) per broken gate."""
    if not gates:
        return
    history = GateHistory()
    for line in trace.calls:
        event = line.event
        if nesting(event):
            continue  # a nested pattern's calls answer to that pattern's invariants
        slot = str(event.get("slot", ""))
        recorded = event.get("gates") if isinstance(event.get("gates"), Mapping) else {}
        assert isinstance(recorded, Mapping)
        conditions = recorded.get("conditions") or {}
        given = {str(k): str(v) for k, v in (recorded.get("given") or {}).items()}
        path = str(event.get("path", ""))
        if int(event.get("attempt") or 1) == 1:
            where = f"{event.get('file')}:{event.get('line')}" if event.get("line") else None
            for found in history.violations(gates, slot, conditions=conditions, given=given,
                                            path=path):
                yield (found.rule, found.message + " (recorded calls)", line.number,
                       str(event.get("id", "")), slot, where)
            history.started(gates, slot, given=given, path=path)
        if event.get("error") is None:
            history.returned(gates, slot, event.get("output"), path)
            where = f"{event.get('file')}:{event.get('line')}" if event.get("line") else None
            for found in history.unexpected(gates, slot, event.get("output")):
                yield (found.rule, found.message + " (recorded output)", line.number,
                       str(event.get("id", "")), slot, where)
        else:
            history.failed(slot, path)
