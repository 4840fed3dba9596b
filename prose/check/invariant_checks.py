"""Shared logic of the invariant rules: which forms apply, what each call receives."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Generic, TypeVar

from prose.check.flow import CallFlow, FlowAnalysis, Resolved, Value
from prose.diagnostics.model import Label
from prose.lang import flows
from prose.lang.channels import call_channels
from prose.lang.invariants import InvariantForm
from prose.lang.policy import ANY_ENTRY, DEFAULT_ENTRY, PREDECESSOR, Policy, Violation
from prose.lang.properties import MODEL_CHANNELS, is_input
from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.walk import find_all

if TYPE_CHECKING:
    from prose.check.rule import CheckContext  # rule.py imports this module when it runs


F = TypeVar("F", bound=InvariantForm)


@dataclass(frozen=True)
class Form(Generic[F]):
    """An invariant in a checkable form whose slot names are all slots."""

    form: F
    text: str
    span: Span


def forms(ctx: CheckContext, cls: type[F]) -> Iterator[Form[F]]:
    """The pattern's invariants written in the form `cls` whose names are all slots."""
    for invariant in ctx.decl.invariants:
        form = invariant.form
        if isinstance(form, cls) and all(name in ctx.decl.slots for name in form.slot_names()):
            yield Form(form, invariant.text, invariant.span)


@dataclass(frozen=True)
class SiteViolation:
    """What `Policy.violations` says of one call site and one slot it may call.

    `prop` is the property of the channel that carries it (None for the
    slot's own `ensures`, or a violation of the whole call).
    """

    site: CallFlow
    slot: str
    violation: Violation
    prop: n.Property | None


NOTHING = Resolved(frozenset(), frozenset(), frozenset())


def _chains_of(flow: FlowAnalysis, value: Value) -> Resolved:
    return replace(NOTHING, chains=flow.chains(value))


def site_violations(ctx: CheckContext, policy: Policy | None = None) -> list[SiteViolation]:
    """Ask the policy (the pattern's, or another) about every call the analysis found,
    with what may reach it."""
    flow = ctx.flow
    out: list[SiteViolation] = []
    policy = policy or ctx.policy
    # A `shuffle` key may reach no call at all: then every call's values are read.
    shuffles = next(find_all(ctx.program, n.Shuffle), None) is not None
    for site in ctx.flow.calls.values():
        props = {entry.name: entry.prop for entry in site.inputs.values()}
        sent = [entry for entry in site.inputs.values()
                if is_input(entry.name) or entry.name in MODEL_CHANNELS]
        # What the values carry matters only to a rule that reads it (the names alone
        # decide `requires` and `sees only`).
        reads = policy.unmerged or policy.strict or shuffles or any(
            rules.hidden or rules.forbidden_words or rules.reads_chains
            or (rules.sees_only is not None and "schema" in props)
            for slot in site.slots for rules in policy.rules_of(slot))
        carried = {entry.name: flow.resolve(entry.value) if reads else NOTHING for entry in sent}
        for slot in sorted(site.slots):
            info = ctx.decl.slots.get(slot)
            if any(rules.reads_chains for rules in policy.rules_of(slot)):
                carried = {name: replace(value, chains=flow.chains(site.inputs[name].value))
                           for name, value in carried.items()}  # where each output was made
            channels = call_channels(
                {name: value for name, value in carried.items() if is_input(name)},
                prompt=carried.get("prompt"),
                schema=carried.get("schema"),
                ensures=info.ensures if info is not None else None,
            )
            # Which service of a list a call reaches is known only in a followed
            # `for s in S` loop (judged per iteration below); elsewhere it is unknown.
            followed = flow.iterations.get(id(site.call))
            index = flows.NO_INDEX if followed and not site.unfollowed else flows.UNKNOWN_INDEX
            for branch in sorted(site.branches) or [()]:
                for violation in policy.violations(slot, channels, branch, index,
                                                   _entry(site.call)):
                    out.append(SiteViolation(site, slot, violation,
                                             props.get(violation.channel or "")))
            rules = policy.own_rules(slot)
            if rules is not None and rules.predecessor_line:
                for iteration, values in followed or ():
                    chained = call_channels(
                        {name: _chains_of(flow, value) for name, value in values.items()
                         if is_input(name)},
                        prompt=_chains_of(flow, values["prompt"]) if "prompt" in values else None,
                    )
                    for violation in policy.violations(slot, chained, (), iteration):
                        if violation.rule == PREDECESSOR:
                            out.append(SiteViolation(site, slot, violation,
                                                     props.get(violation.channel or "")))
    return out


def _entry(call: n.Call) -> str | tuple[str, ...]:
    """The entries of a map-valued slot a call may reach: when its key is written in the
    pattern (`call handlers["billing"]`, `call handlers.billing`), that entry or `default`
    (a key with no entry falls back to it); otherwise any entry."""
    target = call.target
    if isinstance(target, n.Member) and isinstance(target.obj, n.Name):
        return (target.name, DEFAULT_ENTRY)
    if (isinstance(target, n.Index) and isinstance(target.obj, n.Name)
            and isinstance(target.index, n.String) and len(target.index.parts) == 1
            and isinstance(target.index.parts[0], str)):
        return (target.index.parts[0], DEFAULT_ENTRY)
    return ANY_ENTRY


def of_rule(ctx: CheckContext, rule: str) -> Iterator[SiteViolation]:
    """The site violations of one policy rule, once per call site, channel and cause."""
    seen: set[tuple[int, str, str | None, str | None, str | None]] = set()
    for found in ctx.violations:
        violation = found.violation
        if violation.rule != rule:
            continue
        # The slot's own `ensures` is one text, however many calls send it.
        site = 0 if violation.channel == "ensures" else id(found.site.call)
        key = (site, found.slot, violation.channel, violation.other, violation.word)
        if key not in seen:
            seen.add(key)
            yield found


def invariant_labels(ctx: CheckContext, line: int) -> list[Label]:
    """A secondary label on the invariant (by its line in the pattern file)."""
    for invariant in ctx.decl.invariants:
        if invariant.span.line == line:
            return [Label(invariant.span, f"invariant: {invariant.text.strip()}")]
    return []


def where(found: SiteViolation) -> Span:
    """Where a diagnostic about a call's input points: the property, else the call head."""
    if found.prop is not None:
        return found.prop.span
    call = found.site.call
    return call.head if call.head.line else call.span
