"""The audit of an agent's tool calls (`prose.lang.tools`), from the trace alone.

`run_start` records every slot's declared tools; each `tool` event names its call,
whose `provenance`/`transitive` are what the tool's arguments carried. A tool call that
ran, and that the policy would have refused (an external tool another slot reads, given
what that slot must never see), is a finding; a refused one is judged again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prose.lang.flows import Label
from prose.lang.policy import Policy
from prose.lang.tools import ToolUse, refused_call
from prose.ledger.trace_file import LoadedTrace

TOOLS_RULE = "tools"


def recorded_uses(run_start: Mapping[str, Any]) -> list[ToolUse]:
    """The tool declarations `run_start` recorded."""
    out = []
    for item in run_start.get("tools") or ():
        if isinstance(item, Mapping) and item.get("slot") and item.get("tool"):
            out.append(ToolUse(str(item["slot"]), str(item["tool"]), bool(item.get("writes")),
                               bool(item.get("separate"))))
    return out


def hidden_of(policy: Policy) -> dict[str, frozenset[str]]:
    return {slot: frozenset(h.other for h in rules.hidden)
            for slot, rules in policy.slots.items() if rules.hidden}


def _label(event: Mapping[str, Any]) -> Label:
    return Label(frozenset(map(str, event.get("provenance") or ())),
                 frozenset(map(str, event.get("transitive") or ())))


def refused_tool_call(refused: Mapping[str, Any], slot: str, policy: Policy,
                      uses: list[ToolUse]) -> bool:
    """Whether the policy refuses the recorded refused tool call again."""
    return refused_call(str(refused.get("tool")), slot, bool(refused.get("writes")),
                        _label(refused), uses, hidden_of(policy)) is not None


def tool_findings(trace: LoadedTrace, policy: Policy,
                  uses: list[ToolUse]) -> Iterator[tuple[int, str, str, str]]:
    """(line, call id, slot, message) for each tool call that ran and must not have."""
    calls = {str(line.event.get("id")): line.event for line in trace.calls}
    writes = {(use.slot, use.spelling): use.writes for use in uses}
    hidden = hidden_of(policy)
    for line in trace.of_type("tool"):
        event = line.event
        if event.get("kind") != "external" or event.get("error"):
            continue
        slot, tool, call = str(event.get("slot")), str(event.get("tool")), str(event.get("call"))
        made = calls.get(call)
        if made is None:
            yield line.number, call, slot, f"the tool call of `{slot}` names no call `{call}`"
            continue
        found = refused_call(tool, slot, writes.get((slot, tool), False), _label(made), uses,
                             hidden)
        if found is not None:
            reader, source = found
            yield (line.number, call, slot,
                   f"`{slot}` called `{tool}` with arguments carrying `{source}`, and `{reader}`"
                   f" also uses `{tool}` and must never see `{source}`")
