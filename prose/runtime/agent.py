"""An agent's call: a model slot with tools runs the function-calling loop in a workspace.

`run_agent` replaces the one exchange of a plain model call (`attempts.model_attempt`
keeps everything around it: the policy before the call, the budget, the trace event,
error naming). Each turn is one exchange through the run's one model path (budget
admission, the cap on calls in flight, the meters: every turn's tokens and cost count);
the model either answers (validated against the slot's schema as for any call) or asks
for tools. Each tool call is judged by the policy before it runs (an external tool
shared with a slot that must never see what this call carries is refused, R010), run
(`toolbox.run_tool`: workspace tools inside the workspace, commands in the sandbox,
external tools by their implementation), traced as a `tool` event inside the call, and
its result is content-checked at the message boundary before the next turn is sent.
After `max_turns` turns without an answer the call fails at its line (R031). A slot whose
tools only read must leave what it was given unchanged: the workspace is hashed again
before its answer is taken, and a changed or removed input file fails the call (R033,
catchable), so a review counts only for the candidate it read.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prose.lang import error_kinds
from prose.lang import tools as rules
from prose.lang.flows import Label
from prose.lang.manifest import value_digest
from prose.llm.types import Message, ToolCall
from prose.runtime import pc
from prose.runtime.content import check_messages
from prose.runtime.errors import CallFailed, InformationHidingViolation
from prose.runtime.exchange import Answer, Exchange, exchange
from prose.runtime.integrity import output_sha256
from prose.runtime.mcp_client import McpToolSpec, McpUnavailable
from prose.runtime.toolbox import (
    Tool,
    ToolOutcome,
    describe_tools,
    run_tool,
    separate_providers,
    slot_tools,
    tool_for,
)
from prose.runtime.trace import CallEvent, ErrorEvent, ToolEvent, Usage
from prose.runtime.values import plain
from prose.runtime.workspace import lay_out
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.runtime.call_site import Payload
    from prose.runtime.context import RunContext

DEFAULT_MAX_TURNS = 10
PARALLEL_TOOLS = 4  # tool calls of one turn run at once, at most this many
AGENT_INSTRUCTIONS = (
    "You may use the tools offered to inspect and act on the workspace: a folder holding "
    "only what this call was given (each input as a file; `manifest.sha256` lists them). "
    "Call tools as you need, then give your final answer."
)


class TurnsExceeded(CallFailed):
    """An agent ran `max_turns` turns without a final answer."""

    code = "R031"


class InputsAltered(CallFailed):
    """A read-only agent's call changed or removed a file of its workspace's inputs."""

    code = "R033"


@dataclass
class _Turn:
    """The fields one exchange fills in (`exchange.ExchangeRecord`), per turn."""

    model: str | None = None
    messages: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    usage: Usage = dataclasses.field(default_factory=Usage)
    cost_usd: float = 0.0
    cache_hit: bool = False
    key: str | None = None
    requests: int = 0
    finish_reason: str | None = None


def declared_tools(ctx: RunContext, slot: str) -> dict[str, Tool]:
    """The tools the pattern's slot declares, with this run's implementations."""
    spec_slot = ctx.spec.slot(slot) if ctx.spec is not None else None
    if spec_slot is None or not spec_slot.tools:
        return {}
    return slot_tools([(t.spelling, t.writes) for t in spec_slot.tools
                       if not (t.optional and t.spelling not in ctx.shared.tools)],
                      ctx.shared.tools, owner=slot)


def tool_uses(ctx: RunContext) -> list[rules.ToolUse]:
    """Every slot's declaration of every tool (for the channel rules)."""
    slots = ctx.spec.slots if ctx.spec is not None else []
    return rules.declared_uses(((slot.name, tool.spelling, tool.writes)
                                for slot in slots for tool in slot.tools),
                               separate_providers(ctx.shared.tools))


def hidden_from(ctx: RunContext) -> dict[str, frozenset[str]]:
    """Each slot's hidden slots (what it must never see), from the run's policy."""
    return {slot: frozenset(h.other for h in policy.hidden)
            for slot, policy in ctx.policy.slots.items() if policy.hidden}


async def run_agent(ctx: RunContext, node: n.Call, slot: str, request: Exchange,
                    event: CallEvent, payload: Payload, given: Label,
                    tools: dict[str, Tool]) -> Answer:
    """The function-calling loop of one attempt of an agent's call (see the module)."""
    shared = ctx.shared
    spec_slot = ctx.spec.slot(slot) if ctx.spec is not None else None
    max_turns = (spec_slot.max_turns if spec_slot and spec_slot.max_turns else
                 DEFAULT_MAX_TURNS)
    workspace = lay_out({name: plain(value) for name, value in payload.inputs.items()})
    returns_files = rules.returns_written_files(spec_slot.ensures if spec_slot else None)
    if returns_files:  # an input named `out` (a map of files) is its starting content
        (workspace.root / rules.OUT_FOLDER).mkdir(exist_ok=True)
    messages = list(request.messages)
    if messages and messages[0].role == "system":
        messages[0] = Message.system(f"{messages[0].content}\n\n{AGENT_INSTRUCTIONS}")
    else:
        messages.insert(0, Message.system(AGENT_INSTRUCTIONS))
    tools = await _listed(ctx, tools)
    offered = [tool.openai() for tool in tools.values()]
    # What the agent read, input by input: `digest(x)` of each (`prose.lang.manifest`), so
    # that a record of its review can name the candidate's digest it was given.
    read = {name: value_digest(plain(value)) for name, value in payload.inputs.items()}
    info: dict[str, Any] = {"tools": describe_tools(tools), "isolation": shared.isolation,
                            "manifest_sha256": workspace.manifest_sha256(),
                            "inputs_sha256": read, "turns": 0, "tool_calls": 0}
    event.agent = info
    total = Usage()
    try:
        for turn in range(1, max_turns + 1):
            record = _Turn()
            answer = await exchange(ctx, dataclasses.replace(
                request, messages=messages, tools=offered,
                what=f"turn {turn} of the call to `{slot}` at line {node.line}"), record)
            total = Usage(total.prompt_tokens + record.usage.prompt_tokens,
                          total.completion_tokens + record.usage.completion_tokens,
                          total.total_tokens + record.usage.total_tokens)
            event.usage, event.cost_usd = total, event.cost_usd + record.cost_usd
            event.model, event.key = record.model, record.key
            event.requests += record.requests
            # a call is a cache hit (replayed by `--resume`) when every turn of it was
            event.cache_hit = record.cache_hit and (turn == 1 or event.cache_hit)
            event.messages = record.messages
            info["turns"] = turn
            if not answer.tool_calls:
                if returns_files and answer.cached and isinstance(answer.parsed, Mapping) \
                        and hasattr(shared.cache, "tool_result"):
                    # `--resume` of a finished call: its recorded value is the files it
                    # wrote, a command's too, though the replayed commands did not run.
                    workspace.restore(rules.OUT_FOLDER, answer.parsed)
                    info["restored"] = True
                info["changes"] = workspace.changes()
                _check_unchanged(ctx, node, slot, tools, info["changes"])
                if returns_files:  # its value is what it wrote (`rules.written_files_label`)
                    files, skipped = workspace.written(rules.OUT_FOLDER)
                    info["written"] = sorted(files)
                    if skipped:
                        info["written_skipped"] = skipped
                    return dataclasses.replace(answer, parsed=files)
                return answer
            messages.append(Message("assistant", answer.text or "", answer.tool_calls))
            asked = {"key": record.key, "model": record.model, "cached": answer.cached}
            outcomes = await _run_calls(ctx, node, slot, event, answer.tool_calls, tools,
                                        workspace, given, turn, asked)
            results = [Message("tool", outcome.text(), tool_call_id=call.id)
                       for call, outcome in zip(answer.tool_calls, outcomes, strict=True)]
            info["tool_calls"] += len(results)
            if ctx.content.active:  # the message boundary, for every turn's new messages
                check_messages(ctx.content, shared.trace, node, slot,
                               [m.content for m in results], ctx.source)
            messages.extend(results)
        raise TurnsExceeded(
            f"the agent `{slot}` took {max_turns} turns (its `max_turns`) without a final "
            "answer", node.span, source=ctx.source, slot=slot, kind=error_kinds.MAX_TURNS)
    finally:
        if "changes" not in info:
            info["changes"] = workspace.changes()
        if shared.keep_workspaces:
            info["workspace"] = str(workspace.root)
        else:
            workspace.remove()


def _check_unchanged(ctx: RunContext, node: n.Call, slot: str, tools: dict[str, Tool],
                     changes: dict[str, list[str]]) -> None:
    """A read-only agent's answer counts only if its inputs are as they were laid out
    (`prose.lang.tools.must_keep_inputs`, `altered_inputs`): R033 else."""
    if not rules.must_keep_inputs(tool.writes for tool in tools.values()):
        return
    altered = rules.altered_inputs(changes)
    if altered:
        shown = ", ".join(f"`{path}`" for path in altered[:5])
        raise InputsAltered(
            f"the agent `{slot}` only reads, and its call changed or removed what it was "
            f"given ({shown}): its answer is not a review of its inputs and is discarded",
            node.span, source=ctx.source, slot=slot, kind=error_kinds.INPUTS_ALTERED)


async def _listed(ctx: RunContext, tools: dict[str, Tool]) -> dict[str, Tool]:
    """The tools with what their MCP servers list for them (description, input schema);
    a server that cannot say leaves the tool as declared (its calls then say why)."""
    out = dict(tools)
    for name, tool in tools.items():
        if isinstance(tool.provider, McpToolSpec) and ctx.shared.mcp is not None:
            try:
                listed = await ctx.shared.mcp.describe(tool.provider)
            except (McpUnavailable, TimeoutError):
                continue
            out[name] = dataclasses.replace(tool, listed=listed)
    return out


async def _run_calls(ctx: RunContext, node: n.Call, slot: str, event: CallEvent,
                     calls: tuple[ToolCall, ...], tools: dict[str, Tool], workspace: Any,
                     given: Label, turn: int, asked: dict[str, Any]) -> list[ToolOutcome]:
    """The tool calls of one turn, at most `PARALLEL_TOOLS` at once, each judged first. A
    turn replayed from a resumed trace replays its recorded results: nothing runs again."""
    limit = asyncio.Semaphore(PARALLEL_TOOLS)
    replay = getattr(ctx.shared.cache, "tool_result", None) if asked.get("cached") else None

    async def one(call: ToolCall) -> ToolOutcome:
        tool = tool_for(call.name, tools)
        own = {"key": asked.get("key"), "model": asked.get("model"), "id": call.id,
               "name": call.name, "arguments": call.arguments}
        if tool is None:
            names = ", ".join(f"`{t.function_name}`" for t in tools.values())
            outcome = ToolOutcome("", f"`{call.name}` is not a tool of `{slot}` (its tools: "
                                  f"{names}); nothing was run")
            _emit(ctx, node, slot, event, call, None, outcome, turn, given, own)
            return outcome
        _judge(ctx, node, slot, tool, given, call)
        # A workspace tool runs again on a replayed turn: it only reads or writes the call's
        # own fresh workspace, and a file it wrote must be there for the call's value.
        recorded = (replay(str(asked.get("key")), call.id)
                    if replay is not None and tool.kind != "workspace" else None)
        if recorded is not None:
            output, error = recorded
            outcome = ToolOutcome("" if error is not None else output, error)
            _emit(ctx, node, slot, event, call, tool, outcome, turn, given, own, replayed=True)
            return outcome
        async with limit:
            outcome = await run_tool(tool, call.arguments, workspace,
                                     ctx.shared.isolation,  # type: ignore[arg-type]
                                     ctx.shared.mcp)
        _emit(ctx, node, slot, event, call, tool, outcome, turn, given, own)
        return outcome

    return list(await asyncio.gather(*(one(call) for call in calls)))


def _judge(ctx: RunContext, node: n.Call, slot: str, tool: Tool, given: Label,
           call: ToolCall) -> None:
    """Policy before the tool runs: an external tool another slot reads must not receive
    what that slot may never see (`prose.lang.tools.refused_write`)."""
    if tool.kind != "external":
        return  # the workspace holds only what the call was given, judged before it
    found = rules.refused_call(tool.spelling, slot, tool.writes, rules.argument_label(given),
                               tool_uses(ctx), hidden_from(ctx))
    if found is None:
        return
    reader, source = found
    message = (f"information hiding: the tool call `{tool.spelling}` of `{slot}` is not run: "
               f"`{reader}` also uses `{tool.spelling}` and must never see `{source}`, which "
               "its arguments carry")
    error = InformationHidingViolation(message, node.span, source=ctx.source, slot=slot,
                                       rules=["tools"])
    ctx.shared.trace.emit(ErrorEvent(
        code=error.code, kind=error.kind, message=message, file=node.span.file,
        line=node.line, column=node.column, slot=slot, rules=["tools"],
        refused={"tool": tool.spelling, "writes": tool.writes, "reader": reader,
                 "hidden": source, "arguments": call.arguments, "branch": list(pc.branch()),
                 "provenance": sorted(given.provenance),
                 "transitive": sorted(given.transitive)}))
    raise error


def _emit(ctx: RunContext, node: n.Call, slot: str, event: CallEvent, call: ToolCall,
          tool: Tool | None, outcome: ToolOutcome, turn: int, given: Label,
          asked: dict[str, Any], replayed: bool = False) -> None:
    try:
        arguments: Any = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        arguments = call.arguments
    kind = tool.kind if tool is not None else "unknown"
    label = rules.result_label(tool.kind, tool.spelling, given) if tool is not None else given
    text = outcome.text()
    ctx.shared.trace.emit(ToolEvent(
        call=event.id, slot=slot, tool=tool.spelling if tool else call.name, kind=kind,
        turn=turn, tool_call_id=call.id, arguments=arguments, output=text,
        error=outcome.error, sha256=output_sha256(text), duration_ms=outcome.duration_ms,
        isolation=outcome.isolation, exit_code=outcome.exit_code, file=node.span.file,
        line=node.line, provenance=sorted(label.provenance), asked=asked, replayed=replayed))
