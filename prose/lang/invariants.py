"""The checkable invariant forms of LANGUAGE.md section 5: one frozen dataclass each.

`prose.spec.invariants` parses a bullet into one of these; `prose.lang.policy.
compile_policy` turns each into the rules of a `Policy` (an exhaustive `match`: a form
added here and not there fails `mypy`); the linter's rules ask for a form by its class
(`prose.check.invariant_checks.forms(ctx, LoopsBoundedBy)`). Adding a form is its class
here, its pattern in the parser, its case in `compile_policy`, its rule and docs page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True, slots=True)
class SeesOnly:
    """`` `A` sees only `x`, `y` ``: every call to A passes only these inputs."""

    slot: str
    inputs: tuple[str, ...]

    def slot_names(self) -> tuple[str, ...]:
        """The names in this form that must be slots."""
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class NeverSees:
    """`` `A` never sees `B` `` (`indirectly`: ``, even indirectly`` was added)."""

    slot: str
    other: str
    indirectly: bool = False

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot, self.other)


@dataclass(frozen=True, slots=True)
class UnawareOf:
    """`` `A` is unaware of `B` ``: never sees B, and no literal text names B."""

    slot: str
    other: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot, self.other)


@dataclass(frozen=True, slots=True)
class Independent:
    """`` `A` and `B` are independent ``: neither sees the other."""

    a: str
    b: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.a, self.b)


@dataclass(frozen=True, slots=True)
class DistinctModels:
    """`` `A` and `B` are independently configured ``: they must not share a model.

    A configuration claim, not a visibility one (a critic must read what the
    proponent wrote): `prose run --require-distinct-models` fails when both
    route to the same model.
    """

    a: str
    b: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.a, self.b)


@dataclass(frozen=True, slots=True)
class OwnChain:
    """`` each `A` sees only its own chain ``: a call of A receives A's outputs only from
    its own chain of calls: the same parallel branch (or a branch it runs inside), never
    a sibling branch's, nor anything collected at a join."""

    slot: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class NoCallReceives:
    """`` no call receives `delegates` ``: no slot (the slot itself included) is given an
    output of it: the pattern returns its outputs as they are (no merge, rank or summary
    by a model)."""

    slot: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class NeverTold:
    """`` `thesis` and `antithesis` are never told `dialectic` ``: no literal text of the
    pattern sent to these slots (a prompt, an input's name, a `schema:`, their `ensures`,
    their role prompt) contains the word (the word-only half of `is unaware of`, for a
    word that is not a slot)."""

    slots: tuple[str, ...]
    word: str

    def slot_names(self) -> tuple[str, ...]:
        return self.slots


@dataclass(frozen=True, slots=True)
class ReturnsOneOf:
    """`` `oversight` returns `decision` as one of "continue", "adjust" ``: every value at
    the path of the slot's output (through lists: `subtasks.kind`) is one of these: the
    linter proves the slot's declared output type allows no other, the run time stops a
    reply outside them, the audit reads the recorded outputs."""

    slot: str
    path: tuple[str, ...]
    values: tuple[bool | int | float | str | None, ...]

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class OwnRound:
    """`` each `A` never sees its own round ``: a call of A receives no output of A made in
    the round it runs in (one execution of a parallel construct it runs inside: a sibling
    branch's, its own branch's, or one collected at a join inside that round); outputs
    collected at the join of an earlier round are allowed (mixture-of-agents)."""

    slot: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class Predecessor:
    """`` each of `S` sees only its predecessor's output ``: a call of `S[i]` (a list-valued
    slot) receives the output of `S[i-1]` and no other output of `S` (`S[0]` none)."""

    slot: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class LoopsBoundedBy:
    """`` every loop is bounded by `max_rounds` ``: a config key bounds every loop
    (`` `depth`, `k` or `beam` ``: any one of several keys, `others` after the first)."""

    config_key: str
    others: tuple[str, ...] = ()

    @property
    def keys(self) -> tuple[str, ...]:
        """Every config key that may bound a loop."""
        return (self.config_key, *self.others)

    def slot_names(self) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True, slots=True)
class OnlyGrows:
    """`` `history` only grows ``: the list is only recorded/appended to."""

    name: str

    def slot_names(self) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True, slots=True)
class ReturnsUnmerged:
    """`` the result returns `A` and `B` unmerged ``."""

    a: str
    b: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.a, self.b)


@dataclass(frozen=True, slots=True)
class PairwiseIndependent:
    """`` `a`, `b`, `c` are pairwise independent ``: `are independent` for every pair."""

    slots: tuple[str, ...]

    def slot_names(self) -> tuple[str, ...]:
        return self.slots

    def pairs(self) -> tuple[Independent, ...]:
        """The `are independent` form of each pair, in the order written."""
        return tuple(Independent(a, b) for i, a in enumerate(self.slots)
                     for b in self.slots[i + 1:])


@dataclass(frozen=True, slots=True)
class BlindTo:
    """`` `judge` is blind to the source of `samplers` ``: nothing that tells which service
    of the list-valued slot made an output reaches the judge: the service itself (its
    name), an output still in binding order or picked by its index (`shuffle` first)."""

    slot: str
    sources: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot, self.sources)


@dataclass(frozen=True, slots=True)
class RunsOnlyIf:
    """`` `writer` runs only if `gate.ok` ``: every call of the slot is made where the
    condition (a path over values in scope) holds: it dominates the call statically, and
    the run time evaluates it again before each call."""

    slot: str
    condition: tuple[str, ...]

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class RunsOnlyAfter:
    """`` `executor` runs only after `approver` returns `approved` == true ``: the most
    recent call of the approver before each call of the slot returned that field value."""

    slot: str
    approver: str
    field: str
    value: bool | int | float | str | None

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot, self.approver)


@dataclass(frozen=True, slots=True)
class SameInput:
    """`` `executor` gets the same `proposal` `approver` got ``: the slot's input is the
    value the approver's most recent call was given under that name. `` every call of
    `probe` gets the same `material` `` is the form with `approver` the slot itself: each
    call after the first gets what the one before it got."""

    slot: str
    input: str
    approver: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot, self.approver)


@dataclass(frozen=True, slots=True)
class AtMostOne:
    """`` at most one of `billing`, `technical`, `general` runs `` (``per iteration``:
    in each iteration of the innermost loop instead of the whole run); one slot,
    `` `handlers` runs at most once ``: at most one call of it."""

    slots: tuple[str, ...]
    per_iteration: bool = False

    def slot_names(self) -> tuple[str, ...]:
        return self.slots


@dataclass(frozen=True, slots=True)
class ResultSatisfies:
    """`` the result satisfies `EXPR` ``: a pure expression of the language over the keys of
    `### Returns` holds of the returned object. Not proven statically: the run time
    evaluates it when the program returns (R061) and the audit on the recorded result
    (`prose.lang.results`). `problem` says why `expression` is not a pure expression
    (PH638 reports it; the policy skips the form)."""

    expression: str
    names: tuple[str, ...] = ()
    problem: str = ""
    # `` every `entry` of `ledger` satisfies `EXPR` ``: the expression holds of each item
    # of the returned list `items`, bound to `item` (besides the result's keys).
    item: str = ""
    items: str = ""

    def slot_names(self) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True, slots=True)
class NeverAfter:
    """`` `worker` and `critic` never run after `critic` returns `accept` == true `` (without
    the field, `` `chain` never runs after `chain` returns ``: after any call of it that
    returned, a failed call not counting): once a call of `stopper` returned so, no call
    of the slots is made for the rest of the run. Not proven statically: the run time
    judges each call from the run's history and the audit from the recorded calls."""

    slots: tuple[str, ...]
    stopper: str
    field: str | None = None
    value: bool | int | float | str | None = None

    def slot_names(self) -> tuple[str, ...]:
        return (*self.slots, self.stopper)


@dataclass(frozen=True, slots=True)
class InBindingOrder:
    """`` `stages` run one at a time in binding order ``: the calls of a list-valued slot
    are made one at a time (none while another is running), and the n-th call of the run
    is of the n-th service of the binding (`stages[0]` first). Not proven statically:
    judged by the run time before each call and by the audit from the recorded calls
    (PH639 reports a slot that is not list-valued)."""

    slot: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class OnlyReads:
    """`` `checker` only reads `` (or `` `checker`'s tools only read ``): every tool the
    slot declares is read-only (PH640 otherwise, a static property of the declarations),
    so the run time's check that a read-only call left what it was given unchanged (R033)
    applies to every call of it."""

    slot: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class ChosenByCode:
    """`` no model chooses `kept` ``: every binding of the name is computed by the program
    (literals, operators, built-ins over values) from values none of which a call, `do`
    or `choice` bound whole, and none is made under a condition a model decides (a
    discretion condition, a `choice`). A static property of the program (PH641): the
    values may hold model output (the scores `top` ranks), but which of them the name
    holds is the program's decision."""

    name: str

    def slot_names(self) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True, slots=True)
class ReturnCarries:
    """`` the returned `result` carries only `reducer` `` (`only`: of slots' outputs, the
    returned object's key `key` carries only theirs, as copies: `provenance`) or `` the
    returned `criterion_verdicts` never carries `holistic` `` (nothing computed from
    their outputs, through calls too: `transitive`). Proven by the linter on every
    `return` of the program (PH642) and judged by the run time on the returned value's
    labels (R061)."""

    key: str
    slots: tuple[str, ...]
    only: bool

    def slot_names(self) -> tuple[str, ...]:
        return self.slots


@dataclass(frozen=True, slots=True)
class GrowsOnlyAfter:
    """`` `progress` grows only after `certifier` returns `certified` == true ``: every
    `record`/`append` into the name (and every assignment after its first binding) is
    dominated by a test of that field of the approver's output (PH643, as PH631 for a
    call); the run time asks, before each growth, that the approver's latest call
    returned it (R060)."""

    name: str
    approver: str
    field: str
    value: bool | int | float | str | None

    def slot_names(self) -> tuple[str, ...]:
        return (self.approver,)


@dataclass(frozen=True, slots=True)
class SameSequence:
    """`` each chain of `reviewer` gets the same sequence of `material` ``: a chain is the
    calls of the slot in one parallel branch (the run, outside every parallel construct);
    the n-th call of every chain is given the same `input` (by digest). Not proven
    statically: judged by the run time before each call and by the audit from the
    recorded calls (`gates.given`, `branch`)."""

    slot: str
    input: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class ItemInput:
    """`` each of `delegates` gets its item of `briefs` as `brief` ``: a call of the n-th
    service of the list-valued slot is given, as `input`, the n-th item of `items` (a
    parameter or config key). Proven by the linter where the call is of the loop variable
    of `for s, i in S` and passes `items[i]` (PH644); judged again by the run time before
    each call and by the audit (digests)."""

    slot: str
    input: str
    items: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


@dataclass(frozen=True, slots=True)
class OutputsInOrder:
    """`` the returned `result` holds the outputs of `delegates` in binding order ``: the
    returned key is a list whose n-th item is what the n-th service of the slot returned,
    one item per service called. Not proven statically: judged by the run time when the
    program returns (R061) and by the audit from the recorded calls and result."""

    key: str
    slot: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


InvariantForm: TypeAlias = (
    SeesOnly
    | NeverSees
    | UnawareOf
    | Independent
    | DistinctModels
    | OwnChain
    | OwnRound
    | NoCallReceives
    | NeverTold
    | ReturnsOneOf
    | Predecessor
    | LoopsBoundedBy
    | OnlyGrows
    | ReturnsUnmerged
    | PairwiseIndependent
    | BlindTo
    | RunsOnlyIf
    | RunsOnlyAfter
    | SameInput
    | AtMostOne
    | ResultSatisfies
    | NeverAfter
    | InBindingOrder
    | OnlyReads
    | ChosenByCode
    | ReturnCarries
    | GrowsOnlyAfter
    | SameSequence
    | ItemInput
    | OutputsInOrder
)

# Every form class, in the order the parser tries them (a test holds it to the union).
FORMS: tuple[type[InvariantForm], ...] = (
    SeesOnly, NeverSees, UnawareOf, Independent, DistinctModels, OwnChain, OwnRound,
    Predecessor, LoopsBoundedBy, OnlyGrows, ReturnsUnmerged, PairwiseIndependent, BlindTo,
    RunsOnlyIf, RunsOnlyAfter, SameInput, AtMostOne, NoCallReceives, NeverTold,
    ReturnsOneOf, ResultSatisfies, NeverAfter, InBindingOrder, OnlyReads,
    ChosenByCode, ReturnCarries, GrowsOnlyAfter, SameSequence,
    ItemInput, OutputsInOrder,
)
