"""The policy's verdict on a call site, worked out once: which labels could make a call
of it a violation.

`Policy.violations` judges one call from its channels. Most of what it asks does not
depend on the values sent: which rules the slot (and the entry reached) has, the input
names, which kinds of channel the call has. A `Screen` is that part, computed once per
call site and shape of call (`screen`); for each call it asks only whether a value
carries one of the `watched` sources (or was made by a slot in `makers`, or gives a
`bare` channel any provenance). When none does, no rule of `Policy.violations` can
fire and the call is clear without building its channels; otherwise the call is judged
in full, exactly as before. What the rules read of the call site's fixed text (the input
names, the `ensures` and role texts, the schema's words) is judged once, on channels whose
values are empty: when that alone is refused there is no screen and every call is judged
in full. Rules that read literal text (`unaware of`, `is blind to the source of`) also
send a call whose values carry any text of the pattern to the full judgement.

The screen must never clear a call that `Policy.violations` would refuse:
tests/test_policy_screen.py holds the two to that on random policies and channels.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from prose.lang.channels import Carried, Channel, ChannelKind
from prose.lang.flows import NO_INDEX, SEALED, Chains, order_marker
from prose.lang.policy import ANY_ENTRY, Policy


class Screened(Carried, Protocol):
    """What a value sent by a call carries, as the screen reads it (a run-time `Value`):
    what a channel reads of it, and where each output in it was made."""

    @property
    def chains(self) -> Chains: ...


@dataclass(frozen=True, slots=True)
class Screen:
    """The labels that could make a call of one call site a violation (see the module)."""

    watched: frozenset[str]  # a value carrying one of these (directly or not) needs a verdict
    makers: frozenset[str]  # a value with a chain made by one of these needs a verdict
    bare: frozenset[ChannelKind]  # channels of these kinds must carry no provenance at all
    literal: bool = False  # a value carrying literal text of the pattern needs a verdict

    def clears(self, inputs: Iterable[Screened], prompt: Screened | None,
               schema: Screened | None) -> bool:
        """Whether no rule can refuse a call sending these values (else: judge it in full)."""
        watched, makers = self.watched, self.makers
        for kind, value in (*(("input", item) for item in inputs), ("prompt", prompt),
                            ("schema", schema)):
            if value is None:
                continue
            if kind in self.bare and value.provenance:
                return False
            if watched and (not watched.isdisjoint(value.provenance)
                            or not watched.isdisjoint(value.transitive)):
                return False
            if makers and any(made in makers for made, _, _, _ in value.chains):
                return False
            if self.literal and value.literal:
                return False
        return True


def screen(policy: Policy, slot: str, fixed: Sequence[Channel], indexed: bool,
           entry: str | tuple[str, ...] | None = ANY_ENTRY) -> Screen | None:
    """The screen of calls to `slot` whose channels hold, besides what their values carry,
    the `fixed` channels' names and text (a call site's channels with every value empty:
    `Payload.channels` of empty values); the service at an index of a list-valued slot when
    `indexed`, the entry `entry` of a map-valued one, as `Policy.violations` reads them.
    None when every such call must be judged in full."""
    if policy.violations(slot, fixed, (), 0 if indexed else NO_INDEX, entry):
        return None  # the names or the fixed text alone are refused: let the judge say so
    wanted = entry if isinstance(entry, tuple) else (entry,)
    own = policy.own_rules(slot)
    judged = [own] if own is not None else []
    judged += [policy.slots[key] for key in policy.entry_keys(slot)
               if ANY_ENTRY in wanted or key.partition(".")[2] in wanted]
    watched: set[str] = {SEALED}  # no call may receive a `shuffle`'s key
    watched.update(rule.a for rule in policy.unmerged)  # both are needed: one suffices here
    makers: set[str] = set()
    bare: set[ChannelKind] = set()
    literal = False
    for rules in judged:
        watched.update(hidden.other for hidden in rules.hidden)
        if rules.own_chain_line or rules.own_round_line or (rules.predecessor_line and indexed):
            makers.add(rules.slot)
        for sources in rules.blind_to:  # its outputs by position, its order, its name
            makers.add(sources)
            watched.add(order_marker(sources))
            literal = True
        if rules.forbidden_words:  # words in the text a value carries
            literal = True
        if rules.sees_only is not None:
            bare.add("schema")
            if policy.strict:
                bare.add("prompt")
    return Screen(frozenset(watched), frozenset(makers), frozenset(bare), literal)
