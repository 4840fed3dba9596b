"""Who sees what over tools (`prose.lang.tools`): channels through shared external tools."""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang import tools as rules
from prose.lang.flows import Label as FlowLabel
from prose.lang.properties import is_input
from prose.spec.model import PatternSpec


def _uses(spec: PatternSpec, separate: frozenset[str]) -> list[rules.ToolUse]:
    return rules.declared_uses(((slot.name, tool.spelling, tool.writes)
                                for slot in spec.slots for tool in slot.tools), separate)


def _hidden_from(ctx: CheckContext) -> dict[str, frozenset[str]]:
    return {slot: frozenset(h.other for h in policy.hidden)
            for slot, policy in ctx.policy.slots.items() if policy.hidden}


@rule(code="PH620", name="shared-tool-channel",
      category="information-hiding", severity=Severity.ERROR)
class SharedToolChannel(Rule):
    """A slot can write through an external tool that a slot hidden from it reads.

    ## What it does
    For every external tool (`mcp:NAME`) that two slots declare, one of them
    with `(writes)`, reports the reader's declaration when the reader must
    never see the writer (`never sees`, `is unaware of`, `independent`).

    ## Why is this bad
    A shared memory, issue tracker or database is a channel: what the writer
    stores there the reader reads back, and the data flow of the program
    never shows it. Two reviewers sharing a writable notes tool are one
    reviewer.

    ## Example
    ```markdown
    - `reviewer_a`
      - tools: mcp:memory (writes)
    - `reviewer_b`
      - tools: mcp:memory
    ```
    with the invariant `` `reviewer_b` never sees `reviewer_a` ``.

    ## Use instead
    Let the instance bind the tool to a server per slot (`separate: true` under
    `mcp:memory`: each slot's calls go to a process of its own; `prose lint` of the
    instance and `prose run` of it then find no channel), give each reviewer its own
    tool (`mcp:memory_a`, `mcp:memory_b`), or let only one of them use it.
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        spec = ctx.spec
        if spec is None:
            return
        hidden = _hidden_from(ctx)
        for channel in rules.shared_channels(_uses(spec, ctx.separate_tools)):
            if channel.writer not in hidden.get(channel.reader, frozenset()):
                continue
            reader = spec.slot(channel.reader)
            writer = spec.slot(channel.writer)
            if reader is None or writer is None:
                continue
            at = next(t.span for t in reader.tools if t.spelling == channel.tool)
            wrote = next(t.span for t in writer.tools if t.spelling == channel.tool)
            yield self.diagnostic(
                at,
                f"`{channel.reader}` reads `{channel.tool}`, through which "
                f"`{channel.writer}` can write, and `{channel.reader}` must never see "
                f"`{channel.writer}`",
                secondary=[Label(wrote, f"`{channel.writer}` writes through "
                                 f"`{channel.tool}` here")],
            )


@rule(code="PH621", name="tool-arguments-reach-hidden",
      category="information-hiding", severity=Severity.ERROR)
class ToolArgumentsReachHidden(Rule):
    """A call gives an agent data that its shared external tool would pass to a slot
    that must never see it.

    ## What it does
    A tool's arguments carry the label of the call whose model wrote them.
    For every call of a slot that declares an external tool (`mcp:NAME`)
    another slot declares too, reports each input carrying the output of a
    slot that the other one must never see: the agent could send it to the
    tool, and the other slot read it back.

    ## Why is this bad
    The run time refuses that tool call (policy before the tool runs), so the
    agent fails where the linter could have said it.

    ## Example
    ```prose
    let attack = call adversary
      proposal: proposal
    let summary = call summariser
      text: attack
    ```
    where `summariser` and `proposer` both declare `mcp:notes`, and
    `` `proposer` never sees `adversary` ``.

    ## Use instead
    Give the summariser a tool of its own, or keep the attack from it.
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        spec = ctx.spec
        if spec is None:
            return
        uses = _uses(spec, ctx.separate_tools)
        hidden = _hidden_from(ctx)
        external: dict[str, list[str]] = {}  # slot -> its shared external tools
        for use in uses:
            found = rules.parse_tool_name(use.spelling)
            if found is not None and found.kind == "external" and rules.readers_of(
                    use.spelling, uses, use.slot):
                external.setdefault(use.slot, []).append(use.spelling)
        if not any(external.values()):
            return
        for site in ctx.flow.calls.values():
            for slot in sorted(site.slots):
                for tool in external.get(slot, []):
                    for entry in site.inputs.values():
                        if not is_input(entry.name) and entry.name != "prompt":
                            continue
                        resolved = ctx.flow.resolve(entry.value)
                        carried = rules.argument_label(FlowLabel(
                            frozenset(resolved.provenance), frozenset(resolved.transitive)))
                        refused = rules.refused_call(tool, slot, False, carried, uses, hidden)
                        if refused is None:
                            continue
                        reader, source = refused
                        yield self.diagnostic(
                            entry.prop.span,
                            f"`{slot}` receives output of `{source}` through "
                            f"`{entry.name}`, and may send it to `{tool}`, which `{reader}` "
                            f"also uses and `{reader}` must never see `{source}`",
                        )
