"""The information-hiding policy: `requires:` and the checkable invariants, compiled once.

`Policy.violations` is the one judge of a call. The linter asks it about the
flows its analysis proves possible, the interpreter about the provenance the
values it is about to send actually carry, and the audit about the
provenance a trace recorded. The policy is plain data (JSON round-trip), so a
trace records exactly what was enforced, `unmerged` and `only grows` included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol, assert_never

from prose.lang.channels import Channel
from prose.lang.flows import (
    NO_INDEX,
    BranchPath,
    strict_requested,
)
from prose.lang.gates import (
    Approval,
    Exclusive,
    Gates,
    Growth,
    Guard,
    ItemGiven,
    OneOf,
    Ordered,
    ResultInOrder,
    SameGiven,
    SameOrder,
    Stop,
)
from prose.lang.invariants import (
    AtMostOne,
    BlindTo,
    ChosenByCode,
    DistinctModels,
    GrowsOnlyAfter,
    InBindingOrder,
    Independent,
    InvariantForm,
    ItemInput,
    LoopsBoundedBy,
    NeverAfter,
    NeverSees,
    NeverTold,
    NoCallReceives,
    OnlyGrows,
    OnlyReads,
    OutputsInOrder,
    OwnChain,
    OwnRound,
    PairwiseIndependent,
    Predecessor,
    ResultSatisfies,
    ReturnCarries,
    ReturnsOneOf,
    ReturnsUnmerged,
    RunsOnlyAfter,
    RunsOnlyIf,
    SameInput,
    SameSequence,
    SeesOnly,
    UnawareOf,
)
from prose.lang.policy_model import (  # the policy's data, re-exported here
    ANY_ENTRY as ANY_ENTRY,
)
from prose.lang.policy_model import (
    BLIND as BLIND,
)
from prose.lang.policy_model import (
    DEFAULT_ENTRY as DEFAULT_ENTRY,
)
from prose.lang.policy_model import (
    INDEPENDENT as INDEPENDENT,
)
from prose.lang.policy_model import (
    NEVER_SEES as NEVER_SEES,
)
from prose.lang.policy_model import (
    NEVER_SEES_INDIRECTLY as NEVER_SEES_INDIRECTLY,
)
from prose.lang.policy_model import (
    OTHER_CALLERS as OTHER_CALLERS,
)
from prose.lang.policy_model import (
    OWN_CHAIN as OWN_CHAIN,
)
from prose.lang.policy_model import (
    OWN_ROUND as OWN_ROUND,
)
from prose.lang.policy_model import (
    PREDECESSOR as PREDECESSOR,
)
from prose.lang.policy_model import (
    REQUIRES as REQUIRES,
)
from prose.lang.policy_model import (
    SEALED_KEY as SEALED_KEY,
)
from prose.lang.policy_model import (
    SEES_ONLY as SEES_ONLY,
)
from prose.lang.policy_model import (
    UNAWARE_OF as UNAWARE_OF,
)
from prose.lang.policy_model import (
    UNMERGED as UNMERGED,
)
from prose.lang.policy_model import (
    ForbiddenWord as ForbiddenWord,
)
from prose.lang.policy_model import (
    Hidden as Hidden,
)
from prose.lang.policy_model import (
    SlotPolicy as SlotPolicy,
)
from prose.lang.policy_model import (
    Unmerged as Unmerged,
)
from prose.lang.policy_model import (
    Violation as Violation,
)
from prose.lang.policy_rules import (
    blind_violations,
    chain_violations,
    channel_violations,
    predecessor_violations,
    round_violations,
    sealed_violations,
    word_violations,
)
from prose.lang.results import CarryRule, ResultRule, given_names
from prose.source import Span


@dataclass(frozen=True)
class Policy:
    """The compiled policy of one pattern.

    `independent` lists the slot pairs that `--require-distinct-models` keeps
    on different models. `strict` is strict mode for implicit flows (see
    `prose.lang.flows`): it also makes `are independent` transitive and
    forbids run-time values in the `prompt` of a slot that `sees only`.
    """

    pattern: str
    slots: Mapping[str, SlotPolicy] = field(default_factory=dict)
    independent: tuple[tuple[str, str], ...] = ()
    unmerged: tuple[Unmerged, ...] = ()
    only_grows: tuple[str, ...] = ()
    strict: bool = False
    # When slots may run (`runs only if`, `runs only after`, `at most one of`): judged from
    # the run's history (`prose.lang.gates`), not from what one call sends.
    gates: Gates = field(default_factory=Gates)
    # What the returned object must satisfy (`the result satisfies`): judged once the
    # program returns, by the run time and by the audit (`prose.lang.results`).
    results: tuple[ResultRule, ...] = ()
    # Which slots' outputs a returned key may carry (`the returned ... carries only`).
    carries: tuple[CarryRule, ...] = ()

    def violations(self, slot: str, channels: Sequence[Channel],
                   branch: BranchPath = (), index: int = NO_INDEX,
                   entry: str | tuple[str, ...] | None = ANY_ENTRY) -> list[Violation]:
        """Every violation a call to `slot` (the service at `index` of a list-valued slot,
        the entry `entry` of a map-valued one), made in the parallel branch at `branch`,
        sending these channels would commit. An entry's own rules (`` `handlers.billing`
        never sees `router` ``) apply to a call of that entry, and to every call of the
        slot when which entry it reaches is unknown (`ANY_ENTRY`: the linter's calls
        through a computed key); a tuple: any of these entries."""
        found = self._slot(self.own_rules(slot), slot, channels, branch, index)
        wanted = entry if isinstance(entry, tuple) else (entry,)
        for key in self.entry_keys(slot):
            if ANY_ENTRY in wanted or key.partition(".")[2] in wanted:
                found.extend(self._slot(self.slots[key], slot, channels, branch, index,
                                        whole=False))
        return found

    def entry_keys(self, slot: str) -> list[str]:
        """The keys of the rules of the entries of map-valued `slot` (`slot.entry`)."""
        prefix = f"{slot}."
        return [key for key in self.slots if key.startswith(prefix)] if self.has_entries else []

    def own_rules(self, slot: str) -> SlotPolicy | None:
        """The rules of a call to `slot`: the slot's own, or, for a service no slot declares
        (an agent's session, an inline `session`), those of every other service
        (`OTHER_CALLERS`: `no call receives D`)."""
        rules = self.slots.get(slot)
        if rules is None and "." not in slot:
            others = self.slots.get(OTHER_CALLERS)
            rules = replace(others, slot=slot) if others is not None else None
        return rules

    def rules_of(self, slot: str) -> list[SlotPolicy]:
        """The slot's rules and those of its entries (a map-valued slot's)."""
        own = self.own_rules(slot)
        return [*([own] if own is not None else []), *(self.slots[key]
                                                       for key in self.entry_keys(slot))]

    @property
    def has_entries(self) -> bool:
        return any("." in key for key in self.slots)

    def _slot(self, rules: SlotPolicy | None, slot: str, channels: Sequence[Channel],
              branch: BranchPath, index: int, whole: bool = True) -> list[Violation]:
        """The violations of one slot's (or one entry's) rules; `whole`: also the rules of
        every call (the `shuffle` key, `unmerged`), once per call."""
        found: list[Violation] = []
        if rules is not None:
            for channel in channels:
                found.extend(self._channel(rules, channel))
                if rules.own_chain_line:
                    found.extend(chain_violations(rules, channel, branch))
                if rules.own_round_line:
                    found.extend(round_violations(rules, channel, branch))
                if rules.predecessor_line and index != NO_INDEX:
                    found.extend(predecessor_violations(rules, channel, index))
                for sources in rules.blind_to:
                    found.extend(blind_violations(rules, channel, sources))
            found.extend(word_violations(rules, channels))
        if whole:
            found.extend(sealed_violations(slot, channels))
            found.extend(self._unmerged(slot, channels))
        return found

    @property
    def blind_sources(self) -> frozenset[str]:
        """The list-valued slots some judge is blind to the source of."""
        return frozenset(source for rules in self.slots.values() for source in rules.blind_to)

    def with_strict(self, strict: bool) -> Policy:
        if strict == self.strict:
            return self
        return Policy(self.pattern, self.slots, self.independent, self.unmerged,
                      self.only_grows, strict, self.gates, self.results, self.carries)

    def _channel(self, rules: SlotPolicy, channel: Channel) -> list[Violation]:
        return channel_violations(rules, channel, self.strict)

    def _unmerged(self, slot: str, channels: Sequence[Channel]) -> list[Violation]:
        carried = frozenset().union(*(channel.provenance for channel in channels))
        return [
            Violation(slot, UNMERGED, f"the call would receive both `{rule.a}` and `{rule.b}`, "
                      "which the result must return unmerged", other=rule.b, line=rule.line)
            for rule in self.unmerged
            if rule.a in carried and rule.b in carried
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "slots": {name: asdict(rules) for name, rules in self.slots.items()},
            "independent": [list(pair) for pair in self.independent],
            "unmerged": [asdict(rule) for rule in self.unmerged],
            "only_grows": list(self.only_grows),
            "strict": self.strict,
            **({"gates": self.gates.to_dict()} if self.gates else {}),
            **({"results": [asdict(rule) for rule in self.results]} if self.results else {}),
            **({"carries": [asdict(rule) for rule in self.carries]} if self.carries else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Policy:
        slots = {}
        for name, raw in data.get("slots", {}).items():
            hidden = [Hidden(**item) for item in raw.get("hidden", ())]
            # Traces written before `hidden` recorded plain lists.
            hidden += [Hidden(other, NEVER_SEES) for other in raw.get("never_sees", ())]
            hidden += [Hidden(other, NEVER_SEES_INDIRECTLY)
                       for other in raw.get("never_sees_indirectly", ())]
            words = [ForbiddenWord(**item) if isinstance(item, Mapping) else ForbiddenWord(item, "")
                     for item in raw.get("forbidden_words", ())]
            slots[name] = SlotPolicy(
                slot=raw["slot"],
                requires=tuple(raw["requires"]) if raw.get("requires") is not None else None,
                sees_only=tuple(raw["sees_only"]) if raw.get("sees_only") is not None else None,
                sees_only_line=int(raw.get("sees_only_line", 0)),
                own_chain_line=int(raw.get("own_chain_line", 0)),
                predecessor_line=int(raw.get("predecessor_line", 0)),
                own_round_line=int(raw.get("own_round_line", 0)),
                blind_to=tuple(raw.get("blind_to", ())),
                blind_line=int(raw.get("blind_line", 0)),
                hidden=tuple(hidden),
                forbidden_words=tuple(words),
            )
        independent = tuple((pair[0], pair[1]) for pair in data.get("independent", ()))
        unmerged = tuple(Unmerged(**item) for item in data.get("unmerged", ()))
        return cls(data.get("pattern", ""), slots, independent, unmerged,
                   tuple(data.get("only_grows", ())), bool(data.get("strict", False)),
                   Gates.from_dict(data.get("gates")),
                   tuple(ResultRule(**{**item, "given": tuple(item.get("given", ()))})
                         for item in data.get("results", ())),
                   tuple(CarryRule(**{**item, "slots": tuple(item["slots"])})
                         for item in data.get("carries", ())))


class RequirementSource(Protocol):
    """One `requires:` entry (`prose.spec.model.Requirement`)."""

    @property
    def text(self) -> str: ...


class SlotSource(Protocol):
    """What the policy reads of a slot (`prose.spec.model.Slot`)."""

    @property
    def name(self) -> str: ...
    @property
    def requires(self) -> Sequence[RequirementSource]: ...
    @property
    def requires_declared(self) -> bool: ...
    @property
    def role_word(self) -> str | None: ...
    @property
    def map_valued(self) -> bool: ...


class InvariantSource(Protocol):
    """What the policy reads of an invariant (`prose.spec.model.Invariant`): its text,
    where it is, and its checkable form (`prose.lang.invariants`), if any."""

    @property
    def text(self) -> str: ...
    @property
    def span(self) -> Span: ...
    @property
    def form(self) -> InvariantForm | None: ...


class PolicySource(Protocol):
    """What `compile_policy` reads of a pattern: `prose.spec.model.PatternSpec` is one
    (described here, not imported: the language's rules sit below the spec loader)."""

    @property
    def name(self) -> str | None: ...
    @property
    def slots(self) -> Sequence[SlotSource]: ...
    @property
    def invariants(self) -> Sequence[InvariantSource]: ...
    @property
    def frontmatter(self) -> Mapping[str, Any]: ...


def entry_slot(name: str, slots: Mapping[str, SlotSource]) -> str | None:
    """The map-valued slot `name` is an entry of (`handlers` for `handlers.billing`)."""
    base, dot, entry = name.partition(".")
    found = slots.get(base)
    return base if dot and entry and found is not None and found.map_valued else None


def compile_policy(spec: PolicySource, *, strict: bool | None = None) -> Policy:
    """Compile a pattern spec's `requires:` lists and checkable invariants into a Policy.

    Invariant forms that name something other than a slot are skipped (the
    spec loader reports them as PS150). `strict` overrides the pattern's own
    `flow: strict` frontmatter.
    """
    slots_by_name: dict[str, SlotSource] = {}
    for slot in spec.slots:
        slots_by_name.setdefault(slot.name, slot)
    # An entry of a map-valued slot named in an invariant (`handlers.billing`) has rules of
    # its own, under that name; its `requires:` are the slot's (judged once, by the slot).
    entries = {name for invariant in spec.invariants if invariant.form is not None
               for name in invariant.form.slot_names() if entry_slot(name, slots_by_name)}
    for name in sorted(entries):
        slots_by_name[name] = slots_by_name[name.partition(".")[0]]
    spec_slots = [name for name in slots_by_name if name not in entries]
    requires = {
        name: tuple(item.text for item in slot.requires)
        if slot.requires_declared and name not in entries else None
        for name, slot in slots_by_name.items()
    }
    sees_only: dict[str, tuple[list[str], int]] = {}
    hidden: dict[str, list[Hidden]] = {name: [] for name in [*slots_by_name, OTHER_CALLERS]}
    words: dict[str, list[ForbiddenWord]] = {name: [] for name in slots_by_name}
    independent: list[tuple[str, str]] = []
    unmerged: list[Unmerged] = []
    only_grows: list[str] = []
    own_chain: dict[str, int] = {}
    own_round: dict[str, int] = {}
    predecessors: dict[str, int] = {}
    blind: dict[str, tuple[list[str], int]] = {}
    guards: list[Guard] = []
    approvals: list[Approval] = []
    same: list[SameGiven] = []
    exclusive: list[Exclusive] = []
    one_of: list[OneOf] = []
    stops: list[Stop] = []
    ordered: list[Ordered] = []
    growths: list[Growth] = []
    sequences: list[SameOrder] = []
    items_given: list[ItemGiven] = []
    in_order: list[ResultInOrder] = []
    results: list[ResultRule] = []
    carries: list[CarryRule] = []
    # What `the result satisfies` may name besides the result's keys (read, not required:
    # a policy source need not have these sections).
    returned = {key.name for key in getattr(spec, "returns", ())}
    given = {item.name for item in (*getattr(spec, "parameters", ()), *getattr(spec, "config", ()))}
    pattern = spec.name or ""

    def hide(slot: str, other: str, form: str, line: int, text: str) -> None:
        if not any(h.other == other and h.form == form for h in hidden[slot]):
            hidden[slot].append(Hidden(other, form, line, text))

    def forbid(slot: str, word: str | None, other: str, line: int, text: str) -> None:
        if word and word.lower() not in (item.word.lower() for item in words[slot]):
            words[slot].append(ForbiddenWord(word, other, line, text))

    for invariant in spec.invariants:
        form = invariant.form
        if form is None:
            continue
        if any(name not in slots_by_name for name in form.slot_names()):
            continue
        line, text = invariant.span.line, invariant.text.strip()
        match form:
            case SeesOnly():
                allowed = list(dict.fromkeys(form.inputs))
                if form.slot in sees_only:  # two bullets: the intersection, in declaration order
                    earlier = sees_only[form.slot][0]
                    allowed = [name for name in earlier if name in allowed]
                sees_only[form.slot] = (allowed, line)
            case NeverSees():
                hide(form.slot, form.other,
                     NEVER_SEES_INDIRECTLY if form.indirectly else NEVER_SEES, line, text)
            case UnawareOf():
                hide(form.slot, form.other, UNAWARE_OF, line, text)
                forbid(form.slot, form.other, form.other, line, text)
                role = slots_by_name[form.other].role_word
                own = slots_by_name[form.slot].role_word
                if not (role and own and role.lower() == own.lower()):  # its own job is no secret
                    forbid(form.slot, role, form.other, line, text)
                forbid(form.slot, pattern or None, form.other, line, text)
            case Independent():
                hide(form.a, form.b, INDEPENDENT, line, text)
                hide(form.b, form.a, INDEPENDENT, line, text)
                independent.append((form.a, form.b))
            case PairwiseIndependent():
                for pair in form.pairs():
                    hide(pair.a, pair.b, INDEPENDENT, line, text)
                    hide(pair.b, pair.a, INDEPENDENT, line, text)
                    independent.append((pair.a, pair.b))
            case BlindTo():
                earlier, first = blind.get(form.slot, ([], line))
                blind[form.slot] = ([*earlier, form.sources], first)
            case RunsOnlyIf():
                guards.append(Guard(form.slot, form.condition, line, text))
            case RunsOnlyAfter():
                approvals.append(Approval(form.slot, form.approver, form.field, form.value,
                                          line, text))
            case SameInput():
                same.append(SameGiven(form.slot, form.input, form.approver, line, text))
            case AtMostOne():
                exclusive.append(Exclusive(form.slots, form.per_iteration, line, text))
            case DistinctModels():
                independent.append((form.a, form.b))
            case ReturnsUnmerged():
                unmerged.append(Unmerged(form.a, form.b, line, text))
            case OnlyGrows():
                only_grows.append(form.name)
            case OwnChain():
                own_chain.setdefault(form.slot, line)
            case OwnRound():
                own_round.setdefault(form.slot, line)
            case NoCallReceives():
                for viewer in [*spec_slots, OTHER_CALLERS]:
                    hide(viewer, form.slot, NEVER_SEES, line, text)
            case ReturnsOneOf():
                one_of.append(OneOf(form.slot, form.path, form.values, line, text))
            case NeverTold():
                for told in form.slots:
                    forbid(told, form.word, form.word, line, text)
            case Predecessor():
                predecessors.setdefault(form.slot, line)
            case ResultSatisfies():
                if not form.problem:  # PH638 reports an expression that is none
                    results.append(ResultRule(form.expression, line, text, given_names(
                        form.names, returned, given), form.item, form.items))
            case NeverAfter():
                stops.append(Stop(form.slots, form.stopper, form.field, form.value, line, text))
            case InBindingOrder():
                ordered.append(Ordered(form.slot, line, text))  # PH639: a list-valued slot
            case ItemInput():
                items_given.append(ItemGiven(form.slot, form.input, form.items, line, text))
            case OutputsInOrder():
                in_order.append(ResultInOrder(form.key, form.slot, line, text))
            case SameSequence():
                sequences.append(SameOrder(form.slot, form.input, line, text))
            case GrowsOnlyAfter():
                growths.append(Growth(form.name, form.approver, form.field, form.value, line,
                                      text))
            case ReturnCarries():
                carries.append(CarryRule(form.key, form.slots, form.only, line, text))
            case ChosenByCode():
                pass  # a static property of the program (PH641)
            case OnlyReads():
                pass  # a static property of the slot's tools (PH640); R033 then holds per call
            case LoopsBoundedBy():
                pass  # a static property of the program (PT304), nothing to enforce per call
            case _:
                assert_never(form)
    slots = {
        name: SlotPolicy(
            slot=name,
            requires=requires[name],
            sees_only=tuple(sees_only[name][0]) if name in sees_only else None,
            sees_only_line=sees_only[name][1] if name in sees_only else 0,
            hidden=tuple(hidden[name]),
            forbidden_words=tuple(words[name]),
            own_chain_line=own_chain.get(name, 0),
            predecessor_line=predecessors.get(name, 0),
            own_round_line=own_round.get(name, 0),
            blind_to=tuple(blind[name][0]) if name in blind else (),
            blind_line=blind[name][1] if name in blind else 0,
        )
        for name in slots_by_name
    }
    if hidden[OTHER_CALLERS]:
        slots[OTHER_CALLERS] = SlotPolicy(slot=OTHER_CALLERS, requires=None, sees_only=None,
                                          hidden=tuple(hidden[OTHER_CALLERS]))
    if strict is None:
        strict = strict_requested(spec.frontmatter or {})
    gates = Gates(tuple(guards), tuple(approvals), tuple(same), tuple(exclusive), tuple(one_of),
                  tuple(stops), tuple(ordered), tuple(growths), tuple(sequences),
                  tuple(items_given), tuple(in_order))
    return Policy(pattern, slots, tuple(independent), tuple(unmerged), tuple(only_grows), strict,
                  gates, tuple(results), tuple(carries))
