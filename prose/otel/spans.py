"""A run's trace as OpenTelemetry spans, following the GenAI semantic conventions (no SDK here).

One span per run (`invoke_workflow {pattern}`), one per call attempt (`chat
{model}` for a model, `execute_tool {slot}` for a python binding,
`invoke_workflow {slot}` for a nested pattern) and one per judge decision
(`chat {model}`, with `prose.judge.*`), the calls and judges children of the
run. An agent's tool calls are `execute_tool {tool}` spans, children of their call's
span (the GenAI conventions' `gen_ai.tool.*`; `gen_ai.tool.type` is `function` for the
tools prose runs itself, workspace tools and declared commands, and `extension` for an
external tool: an MCP server's or a Python callable's). Times are the trace's: an event's `time` is when it started, its
`latency_ms` how long it took.

Attributes are the conventions' `gen_ai.*` (operation, provider, request
model, agent name, token usage), `code.*` for the call's place in the
pattern, `error.type` for a failed call, and `prose.*` for the rest (cost,
slot, call id, attempt, cache hit, loop path, trace line). Never a message,
an output, an input or a config value: what a span carries is safe to send
to any collector (and the trace itself already masks secrets).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prose.ledger.trace_file import LoadedTrace, slot_label

AttributeValue = str | bool | int | float


@dataclass
class SpanData:
    """One span to export: times in nanoseconds since the epoch."""

    name: str
    kind: str  # "internal" or "client"
    start_ns: int
    end_ns: int
    attributes: dict[str, AttributeValue]
    error: str | None = None  # the status description of a failed span
    children: list[SpanData] = field(default_factory=list)


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


def _tokens(event: Mapping[str, Any]) -> dict[str, AttributeValue]:
    usage = event.get("usage") or {}
    return {"gen_ai.usage.input_tokens": int(usage.get("prompt_tokens") or 0),
            "gen_ai.usage.output_tokens": int(usage.get("completion_tokens") or 0),
            "prose.cost_usd": float(event.get("cost_usd") or 0.0)}


def _model_attributes(model: str) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {"gen_ai.request.model": model}
    if "/" in model:
        out["gen_ai.provider.name"] = model.split("/", 1)[0]
    return out


def _place(event: Mapping[str, Any], line: int) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {"prose.trace.line": line}
    if event.get("file"):
        out["code.file.path"] = str(event["file"])
    if event.get("line"):
        out["code.line.number"] = int(event["line"])
    if event.get("column"):
        out["code.column.number"] = int(event["column"])
    if event.get("path"):
        out["prose.loop_path"] = str(event["path"])
    return out


def _error(event: Mapping[str, Any]) -> tuple[str | None, dict[str, AttributeValue]]:
    error = event.get("error")
    if not error:
        return None, {}
    kind = str(error.get("kind") or error.get("code") or "error") if isinstance(error, Mapping) \
        else "error"
    return kind, {"error.type": kind}


def call_span(event: Mapping[str, Any], line: int) -> SpanData:
    """The span of one call attempt."""
    service = str(event.get("service") or "")
    model = str(event.get("model") or service.partition(":")[2] or "unknown")
    slot = slot_label(event)
    attributes: dict[str, AttributeValue] = {
        "gen_ai.agent.name": slot, "prose.slot": slot, "prose.call.id": str(event.get("id", "")),
        "prose.attempt": int(event.get("attempt") or 1),
        "prose.cache_hit": bool(event.get("cache_hit")),
        "prose.requests": int(event.get("requests") or 0),
        "prose.service": service, **_tokens(event), **_place(event, line)}
    if service.startswith("python:"):
        name, kind = f"execute_tool {slot}", "internal"
        attributes.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": slot})
    elif service.startswith("pattern:"):
        name, kind = f"invoke_workflow {slot}", "internal"
        attributes.update({"gen_ai.operation.name": "invoke_workflow",
                           "gen_ai.workflow.name": slot})
    else:
        name, kind = f"chat {model}", "client"
        attributes.update({"gen_ai.operation.name": "chat", **_model_attributes(model)})
    failure, extra = _error(event)
    attributes.update(extra)
    start = float(event.get("time") or 0)
    end = start + float(event.get("latency_ms") or 0) / 1000
    return SpanData(name, kind, _ns(start), _ns(end), attributes, failure)


def tool_span(event: Mapping[str, Any], line: int) -> SpanData:
    """The span of one tool call of an agent (never its arguments or output: content)."""
    tool = str(event.get("tool") or "unknown")
    kind = str(event.get("kind") or "")
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": str(event.get("tool_call_id") or ""),
        "gen_ai.tool.type": "extension" if kind == "external" else "function",
        "gen_ai.agent.name": str(event.get("slot") or ""),
        "prose.call.id": str(event.get("call") or ""), "prose.tool.kind": kind,
        "prose.tool.turn": int(event.get("turn") or 0),
        "prose.tool.replayed": bool(event.get("replayed")), **_place(event, line)}
    for key, name in (("isolation", "prose.tool.isolation"), ("exit_code", "prose.tool.exit_code"),
                      ("sha256", "prose.tool.output_sha256")):
        if event.get(key) is not None:
            attributes[name] = event[key] if key == "exit_code" else str(event[key])
    failure = None
    if event.get("refused"):
        failure = "refused"
    elif event.get("error") is not None:
        failure = "tool_error"
    if failure is not None:
        attributes["error.type"] = failure
    # A tool event is written when the tool ends: it started `duration_ms` earlier.
    end = float(event.get("time") or 0)
    start = end - float(event.get("duration_ms") or 0) / 1000
    return SpanData(f"execute_tool {tool}", "internal", _ns(start), _ns(end), attributes,
                    failure)


def judge_span(event: Mapping[str, Any], line: int) -> SpanData:
    """The span of one judge decision (a discretion condition or a choice)."""
    model = str(event.get("model") or "judge")
    decision = event.get("decision")
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "chat", "gen_ai.agent.name": "judge",
        **_model_attributes(model), "prose.judge.id": str(event.get("id", "")),
        "prose.judge.kind": str(event.get("kind", "")),
        "prose.cache_hit": bool(event.get("cache_hit")), **_tokens(event), **_place(event, line)}
    if isinstance(decision, bool | int | float | str):
        attributes["prose.judge.decision"] = decision
    failure, extra = _error(event)
    attributes.update(extra)
    start = float(event.get("time") or 0)
    end = start + float(event.get("latency_ms") or 0) / 1000
    return SpanData(f"chat {model}", "client", _ns(start), _ns(end), attributes, failure)


def run_spans(trace: LoadedTrace) -> SpanData:
    """The run's span with a child per call attempt and per judge decision."""
    start_line, end_line = trace.run_start, trace.run_end
    start = start_line.event if start_line is not None else trace.lines[0].event
    end = end_line.event if end_line is not None else None
    children = [call_span(line.event, line.number) if line.type == "call"
                else judge_span(line.event, line.number)
                for line in trace.lines if line.type in ("call", "judge")]
    calls = {str(child.attributes["prose.call.id"]): child for child in children
             if "prose.call.id" in child.attributes}
    for line in trace.lines:
        if line.type == "tool":
            tool = tool_span(line.event, line.number)
            parent = calls.get(str(line.event.get("call") or ""))
            if parent is None:  # a tool event whose call never ended (a cut trace)
                children.append(tool)
            else:
                # the call's span covers its tools (its latency is measured the same way)
                parent.start_ns = min(parent.start_ns, tool.start_ns)
                parent.end_ns = max(parent.end_ns, tool.end_ns)
                parent.children.append(tool)
    begin_ns = _ns(float(start.get("time") or 0))
    last_ns = max([begin_ns, *(child.end_ns for child in children)])
    end_ns = max(last_ns, _ns(float(end.get("time") or 0))) if end is not None else last_ns
    pattern = trace.pattern_name or "pattern"
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": pattern,
        "prose.run_id": trace.run_id, "prose.pattern.sha256": str(start.get("pattern_sha256", "")),
        "code.file.path": str(start.get("pattern", "")),
        "prose.calls": sum(1 for line in trace.lines if line.type == "call"),
        "prose.chain_intact": trace.chain_ok,
        "gen_ai.usage.input_tokens": sum(int(c.attributes.get("gen_ai.usage.input_tokens", 0))
                                         for c in children),
        "gen_ai.usage.output_tokens": sum(int(c.attributes.get("gen_ai.usage.output_tokens", 0))
                                          for c in children),
        "prose.cost_usd": sum(float(c.attributes.get("prose.cost_usd", 0.0)) for c in children)}
    failure = None
    if end is not None:
        attributes.update({"prose.status": str(end.get("status")),
                           "prose.exit_code": int(end.get("exit_code") or 0)})
        if end.get("status") != "ok":
            failure = str(end.get("status"))
            attributes["error.type"] = failure
    else:
        failure = "unfinished"
        attributes["prose.status"] = "unfinished"
    return SpanData(f"invoke_workflow {pattern}", "internal", begin_ns, end_ns, attributes,
                    failure, children)
