"""How one call's channels break a slot's rules, rule by rule: what `Policy.violations`
(prose/lang/policy.py) asks of each channel and of the call as a whole."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from prose.lang.channels import Channel
from prose.lang.flows import (
    SEALED,
    BranchPath,
    order_marker,
    own_chain,
    predecessor,
    reveals_source,
    same_round,
)
from prose.lang.policy_model import (
    BLIND,
    INDEPENDENT,
    NEVER_SEES,
    NEVER_SEES_INDIRECTLY,
    OWN_CHAIN,
    OWN_ROUND,
    PREDECESSOR,
    REQUIRES,
    SEALED_KEY,
    SEES_ONLY,
    UNAWARE_OF,
    Hidden,
    SlotPolicy,
    Violation,
)
from prose.lang.words import names_word, requirement_matches


def channel_violations(rules: SlotPolicy, channel: Channel, strict: bool) -> list[Violation]:
    """The violations of one slot's (or entry's) rules by one channel: `requires`, `sees
    only` and the hidden slots (`never sees`, `are independent`)."""
    slot, name = rules.slot, channel.name
    found: list[Violation] = []
    if channel.kind == "input":
        if rules.requires is not None and not _required(rules.requires, name):
            found.append(Violation(slot, REQUIRES, f"`{slot}` does not require `{name}`", name))
        if rules.sees_only is not None and name not in rules.sees_only:
            allowed = ", ".join(f"`{item}`" for item in rules.sees_only)
            found.append(Violation(slot, SEES_ONLY, f"`{slot}` sees only {allowed}, not `{name}`",
                                   name, line=rules.sees_only_line))
    elif channel.kind == "schema" and rules.sees_only is not None and channel.provenance:
        outputs = ", ".join(f"`{other}`" for other in sorted(channel.provenance))
        found.append(Violation(
            slot, SEES_ONLY, f"`{slot}` sees only its listed inputs, but `schema` carries "
            f"output of {outputs} (its field names reach the model)", name,
            line=rules.sees_only_line))
    elif (channel.kind == "prompt" and strict and rules.sees_only is not None
          and channel.provenance):
        outputs = ", ".join(f"`{other}`" for other in sorted(channel.provenance))
        found.append(Violation(
            slot, SEES_ONLY, f"`{slot}` sees only its listed inputs, but `prompt` carries "
            f"output of {outputs} (strict mode)", name, line=rules.sees_only_line))
    reported: set[str] = set()
    for hidden in rules.hidden:
        transitive = hidden.transitive or (hidden.form == INDEPENDENT and strict)
        carried = channel.transitive if transitive else channel.provenance
        if hidden.other not in carried or (hidden.transitive and hidden.other in reported):
            continue
        if hidden.transitive and hidden.other in channel.provenance and hidden.other in {
            h.other for h in rules.hidden if not h.transitive
        }:
            continue  # the direct form already says it
        reported.add(hidden.other)
        message = _message(slot, name, hidden, transitive) + _made_at(channel, hidden.other)
        found.append(Violation(slot, _rule(hidden), message, name, hidden.other,
                               line=hidden.line))
    return found


@lru_cache(maxsize=4096)
def _required(requires: tuple[str, ...], name: str) -> bool:
    """Whether one of a slot's `requires:` entries names input `name` (cached per slot and
    input: a pattern has few, and every call of the slot asks)."""
    return any(requirement_matches(entry, name) for entry in requires)


def _made_at(channel: Channel, other: str) -> str:
    """Where the hidden slot's output came from, when the channel knows (the start of the
    path a leak took)."""
    lines = sorted({line for made, _, _, line in channel.chains if made == other and line > 0})
    if not lines:
        return ""
    where = ", ".join(str(line) for line in lines[:5])
    return f" (made by the call at line{'s' if len(lines) > 1 else ''} {where})"


def _rule(hidden: Hidden) -> str:
    if hidden.form == INDEPENDENT:
        return INDEPENDENT
    if hidden.form == NEVER_SEES_INDIRECTLY:
        return NEVER_SEES_INDIRECTLY
    return NEVER_SEES


def _message(slot: str, name: str, hidden: Hidden, transitive: bool) -> str:
    other = hidden.other
    if hidden.form == INDEPENDENT:
        how = "a value derived from the output" if transitive else "output"
        return f"`{slot}` and `{other}` are independent, but `{name}` carries {how} of `{other}`"
    if transitive:
        return (f"`{name}` carries output derived from `{other}`, which `{slot}` must never see, "
                "even indirectly")
    return f"`{name}` carries output of `{other}`, which `{slot}` must never see"


def chain_violations(rules: SlotPolicy, channel: Channel, branch: BranchPath) -> list[Violation]:
    slot = rules.slot
    if any(made == slot and not own_chain(path, branch) for made, path, _, _ in channel.chains):
        return [Violation(slot, OWN_CHAIN, f"`{channel.name}` carries output of another `{slot}` "
                          "chain (a sibling parallel branch, or collected at a join), but each "
                          f"`{slot}` sees only its own chain", channel.name, slot,
                          line=rules.own_chain_line)]
    return []


def round_violations(rules: SlotPolicy, channel: Channel, branch: BranchPath) -> list[Violation]:
    slot = rules.slot
    if any(made == slot and same_round(path, branch) for made, path, _, _ in channel.chains):
        return [Violation(slot, OWN_ROUND, f"`{channel.name}` carries output of `{slot}` made in "
                          "the round this call runs in (a sibling branch, its own branch, or "
                          f"collected at a join inside the round), but each `{slot}` never sees "
                          "its own round", channel.name, slot, line=rules.own_round_line)]
    return []


def predecessor_violations(rules: SlotPolicy, channel: Channel, index: int) -> list[Violation]:
    slot = rules.slot
    if any(made == slot and not predecessor(produced, index)
           for made, _, produced, _ in channel.chains):
        which = f"`{slot}[{index}]`" if index >= 0 else f"a service of `{slot}`"
        return [Violation(slot, PREDECESSOR, f"`{channel.name}` carries output of a `{slot}` "
                          f"service that is not the predecessor of {which}, but each of "
                          f"`{slot}` sees only its predecessor's output", channel.name, slot,
                          line=rules.predecessor_line)]
    return []


def blind_violations(rules: SlotPolicy, channel: Channel, sources: str) -> list[Violation]:
    slot, name = rules.slot, channel.name
    found: list[Violation] = []
    if any(made == sources and reveals_source(index) for made, _, index, _ in channel.chains):
        found.append(Violation(
            slot, BLIND, f"`{name}` carries output of `{sources}` in binding order or picked by "
            f"its index, but `{slot}` is blind to the source of `{sources}` (`shuffle` it "
            "first)", name, sources, line=rules.blind_line))
    if order_marker(sources) in channel.provenance:
        found.append(Violation(
            slot, BLIND, f"`{name}` carries a position in the binding order of `{sources}` (a "
            f"loop counter over it), but `{slot}` is blind to the source of `{sources}`", name,
            sources, line=rules.blind_line))
    if any(f"<service {sources}>" in text or f"<service {sources}[" in text
           for text in channel.literal):
        found.append(Violation(
            slot, BLIND, f"`{name}` names a service of `{sources}`, but `{slot}` is blind to "
            f"the source of `{sources}`", name, sources, line=rules.blind_line))
    return found


def sealed_violations(slot: str, channels: Sequence[Channel]) -> list[Violation]:
    return [Violation(slot, SEALED_KEY, f"`{slot}` would receive the key of a `shuffle` through "
                      f"`{channel.name}`, and no call may (it undoes the shuffle)", channel.name)
            for channel in channels if SEALED in channel.provenance]


def word_violations(rules: SlotPolicy, channels: Sequence[Channel]) -> list[Violation]:
    found: list[Violation] = []
    for forbidden in rules.forbidden_words:
        for channel in channels:
            if any(names_word(text, forbidden.word) for text in channel.literal):
                found.append(Violation(
                    rules.slot, UNAWARE_OF,
                    f"literal text sent to `{rules.slot}` names `{forbidden.word}` "
                    f"(in {channel.name if channel.kind != 'input' else f'`{channel.name}`'})",
                    channel.name, forbidden.other, forbidden.word,
                    forbidden.line))
                break
    return found
