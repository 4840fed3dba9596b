"""The policy's verdict on a call site, worked out once: which labels could make a call
of it a violation.

`Policy.violations` judges one call from its channels. Most of what it asks does not
depend on the values sent: which rules the slot (and the entry reached) has, the input
names, which kinds of channel the call has. A `Screen` is that part, computed once per
call site and shape of call (`screen`); for each call it asks only whether a value
carries one of the `watched` sources (or was made by a slot in `makers`, or gives a
`bare` channel any provenance). When none does, no rule of `Policy.violations` can
fire and the call is clear without building its channels; otherwise the call is judged
in full, exactly as before. Rules whose verdict reads literal text carried by values
(`unaware of`, `is blind to the source of`) or the input names (`requires`, `sees
only`) give no screen when they could fire: every call is judged in full.

The screen must never clear a call that `Policy.violations` would refuse:
tests/test_policy_screen.py holds the two to that on random policies and channels.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from prose.lang.channels import Channel, ChannelKind
from prose.lang.flows import SEALED, Chains
from prose.lang.policy import ANY_ENTRY, Policy
from prose.lang.policy_rules import channel_violations


class Screened(Protocol):
    """What a value sent by a call carries, as the screen reads it (a run-time `Value`)."""

    @property
    def provenance(self) -> frozenset[str]: ...
    @property
    def transitive(self) -> frozenset[str]: ...
    @property
    def chains(self) -> Chains: ...


@dataclass(frozen=True, slots=True)
class Screen:
    """The labels that could make a call of one call site a violation (see the module)."""

    watched: frozenset[str]  # a value carrying one of these (directly or not) needs a verdict
    makers: frozenset[str]  # a value with a chain made by one of these needs a verdict
    bare: frozenset[ChannelKind]  # channels of these kinds must carry no provenance at all

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
        return True


def screen(policy: Policy, slot: str, names: Sequence[str], indexed: bool,
           entry: str | tuple[str, ...] | None = ANY_ENTRY) -> Screen | None:
    """The screen of calls to `slot` sending inputs named `names` (the service at an index
    of a list-valued slot when `indexed`; the entry `entry` of a map-valued one, as
    `Policy.violations` reads it), or None when every such call must be judged in full."""
    wanted = entry if isinstance(entry, tuple) else (entry,)
    judged = [policy.slots[slot]] if slot in policy.slots else []
    judged += [policy.slots[key] for key in policy.entry_keys(slot)
               if ANY_ENTRY in wanted or key.partition(".")[2] in wanted]
    watched: set[str] = {SEALED}  # no call may receive a `shuffle`'s key
    watched.update(rule.a for rule in policy.unmerged)  # both are needed: one suffices here
    makers: set[str] = set()
    bare: set[ChannelKind] = set()
    # The rules that read the names and the fixed text: judged here, on the names alone.
    probe = [Channel(name, "input") for name in names]
    for rules in judged:
        if rules.forbidden_words or rules.blind_to:
            return None  # they read literal text the values carry: judge every call
        if any(channel_violations(rules, channel, policy.strict) for channel in probe):
            return None  # the names alone break `requires` or `sees only`: let it say so
        watched.update(hidden.other for hidden in rules.hidden)
        if rules.own_chain_line or rules.own_round_line or (rules.predecessor_line and indexed):
            makers.add(rules.slot)
        if rules.sees_only is not None:
            bare.add("schema")
            if policy.strict:
                bare.add("prompt")
    return Screen(frozenset(watched), frozenset(makers), frozenset(bare))
