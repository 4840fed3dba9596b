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

from prose.lang.gates import BINDING_ORDER, GateHistory, Gates
from prose.ledger.trace_file import LoadedTrace, nesting


def gate_findings(trace: LoadedTrace, gates: Gates) -> Iterator[tuple[str, str, int, str, str,
                                                                      str | None]]:
    """(rule, message, trace line, call id, slot, source position) per broken gate."""
    if not gates:
        return
    history = GateHistory()
    start = trace.run_start
    for key in ("config", "inputs"):  # the run's values, for `its item of`
        recorded = start.event.get(key) if start is not None else None
        history.run_values.update(recorded if isinstance(recorded, Mapping) else {})
    ends: dict[str, float] = {}  # an ordered slot's latest recorded end (`one at a time`)
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
        index = event.get("index") if isinstance(event.get("index"), int) else None
        branch = event.get("branch")
        chain = tuple(str(item) for item in branch) if isinstance(branch, list) else ()
        if int(event.get("attempt") or 1) == 1:
            where = f"{event.get('file')}:{event.get('line')}" if event.get("line") else None
            for found in history.violations(gates, slot, conditions=conditions, given=given,
                                            path=path, index=index, chain=chain):
                yield (found.rule, found.message + " (recorded calls)", line.number,
                       str(event.get("id", "")), slot, where)
            overlap = _overlap(gates, slot, event, ends)
            if overlap:
                yield (BINDING_ORDER, overlap, line.number, str(event.get("id", "")), slot, where)
            history.started(gates, slot, given=given, path=path, index=index, chain=chain)
        if gates.ordered_slot(slot) is not None:
            ends[slot] = max(ends.get(slot, 0.0),
                             _number(event.get("time")) + _number(event.get("latency_ms")) / 1000)
        if event.get("error") is None:
            history.returned(gates, slot, event.get("output"), path, index)
            where = f"{event.get('file')}:{event.get('line')}" if event.get("line") else None
            for found in history.unexpected(gates, slot, event.get("output")):
                yield (found.rule, found.message + " (recorded output)", line.number,
                       str(event.get("id", "")), slot, where)
        else:
            history.ended(gates, slot)
            history.failed(slot, path)
    end = trace.run_end
    if end is not None and end.event.get("status") == "ok":  # a run that returned
        for found in history.result_violations(gates, end.event.get("result")):
            yield (found.rule, found.message + " (recorded result)", end.number, "",
                   found.slot, None)


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _overlap(gates: Gates, slot: str, event: Mapping[str, object],
             ends: Mapping[str, float]) -> str | None:
    """`one at a time`: a call of an ordered slot that started (an event's `time` is when
    the attempt began) more than a millisecond (two clocks' rounding) before an earlier
    call of it ended (its time plus its latency). The events are written when a call ends,
    so the order of the events alone cannot tell that two calls overlapped."""
    rule = gates.ordered_slot(slot)
    if rule is None or slot not in ends:
        return None
    if _number(event.get("time")) >= ends[slot] - 0.001:
        return None
    return (f"`{slot}` run one at a time in binding order, and this call started before an "
            "earlier call of it ended (recorded times)")
