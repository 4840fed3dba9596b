"""When a slot may run: the control-flow invariants, compiled once and judged from history.

`runs only if`, `runs only after ... returns`, `gets the same ... got` and `at most one
of ... runs` are about *when* a call happens, not about what it receives, so they are
judged from what the run has done so far: `GateHistory` holds it (the approvers'
latest outputs, the digests of the inputs they were given, which of an exclusive set
ran in which scope). The interpreter fills one history as it runs and asks
`GateHistory.violations` before each call; the audit fills one from the trace's call
events in order and asks the same question. The linter proves the same forms on the
program's control flow (`prose.check.dominance`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field
from typing import Any

# Rule names (what a violation is called in traces, errors and the audit).
RUNS_ONLY_IF = "runs-only-if"
RUNS_ONLY_AFTER = "runs-only-after"
SAME_INPUT = "same-input"
AT_MOST_ONE = "at-most-one"
RETURNS_ONE_OF = "returns-one-of"
NEVER_AFTER = "never-after"
BINDING_ORDER = "binding-order"
GROWS_ONLY_AFTER = "grows-only-after"
SAME_SEQUENCE = "same-sequence"
ITEM_INPUT = "item-input"
OUTPUTS_IN_ORDER = "outputs-in-order"

Literal = bool | int | float | str | None


@dataclass(frozen=True, slots=True)
class Guard:
    """`` `slot` runs only if `condition` `` (the condition a dotted path)."""

    slot: str
    condition: tuple[str, ...]
    line: int = 0
    text: str = ""

    @property
    def key(self) -> str:
        """How the condition is written, and the key its value is recorded under."""
        return ".".join(self.condition)


@dataclass(frozen=True, slots=True)
class Approval:
    """`` `slot` runs only after `approver` returns `field` == value ``."""

    slot: str
    approver: str
    field: str
    value: Literal
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class SameGiven:
    """`` `slot` gets the same `input` `approver` got ``."""

    slot: str
    input: str
    approver: str
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class Exclusive:
    """`` at most one of `a`, `b` runs `` (per run, or per iteration of the innermost loop)."""

    slots: tuple[str, ...]
    per_iteration: bool = False
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class OneOf:
    """`` `oversight` returns `decision` as one of "continue", "abort" ``: every value at
    the path of the slot's output (through lists: `subtasks.kind`) is one of `values`."""

    slot: str
    path: tuple[str, ...]
    values: tuple[Literal, ...]
    line: int = 0
    text: str = ""

    def outside(self, output: Any) -> list[Any]:
        """The values at the path of `output` that are none of `values` (a missing field
        is null)."""
        found: list[Any] = []
        _values_at(output, self.path, found)
        return [value for value in found if not any(
            value == allowed and type(value) is type(allowed) for allowed in self.values)]


def _values_at(value: Any, path: tuple[str, ...], out: list[Any]) -> None:
    if isinstance(value, list | tuple):
        for item in value:
            _values_at(item, path, out)
    elif not path:
        out.append(value)
    else:
        _values_at(value.get(path[0]) if isinstance(value, Mapping) else None, path[1:], out)


@dataclass(frozen=True, slots=True)
class Stop:
    """`` `w`, `c` never run after `c` returns `accept` == true `` (`field` None: after any
    call of `stopper` that returned)."""

    slots: tuple[str, ...]
    stopper: str
    field: str | None = None
    value: Literal = None
    line: int = 0
    text: str = ""

    def stops(self, output: Any) -> bool:
        """Whether a call of the stopper that returned `output` ends the slots' calls."""
        return self.field is None or matches(output, self.field, self.value)

    def describe(self) -> str:
        after = f"`{self.stopper}` returns" + (
            "" if self.field is None else f" `{self.field}` == {json.dumps(self.value)}")
        verb = "runs" if len(self.slots) == 1 else "run"
        return f"{_names(self.slots)} never {verb} after {after}"


@dataclass(frozen=True, slots=True)
class Growth:
    """`` `progress` grows only after `certifier` returns `certified` == true `` (`name` a
    variable of the program, not a slot)."""

    name: str
    approver: str
    field: str
    value: Literal
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class SameOrder:
    """`` each chain of `reviewer` gets the same sequence of `material` ``."""

    slot: str
    input: str
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class ItemGiven:
    """`` each of `delegates` gets its item of `briefs` as `brief` `` (`items` a parameter or
    config key: the run's value)."""

    slot: str
    input: str
    items: str
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class ResultInOrder:
    """`` the returned `result` holds the outputs of `delegates` in binding order ``."""

    key: str
    slot: str
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class Ordered:
    """`` `stages` run one at a time in binding order ``."""

    slot: str
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class GateViolation:
    """One reason a call must not be made (it is not made: the run stops before it)."""

    slot: str
    rule: str
    message: str
    line: int = 0


@dataclass(frozen=True)
class Gates:
    """Every control-flow invariant of one pattern."""

    guards: tuple[Guard, ...] = ()
    approvals: tuple[Approval, ...] = ()
    same: tuple[SameGiven, ...] = ()
    exclusive: tuple[Exclusive, ...] = ()
    one_of: tuple[OneOf, ...] = ()  # judged on what a call returned, not before it
    stops: tuple[Stop, ...] = ()
    ordered: tuple[Ordered, ...] = ()
    growths: tuple[Growth, ...] = ()  # judged before a `record`/`append`, not a call
    sequences: tuple[SameOrder, ...] = ()
    items_given: tuple[ItemGiven, ...] = ()
    in_order: tuple[ResultInOrder, ...] = ()  # judged on what the program returned

    def __bool__(self) -> bool:
        return bool(self.guards or self.approvals or self.same or self.exclusive
                    or self.one_of or self.stops or self.ordered or self.growths
                    or self.sequences or self.items_given or self.in_order)

    def ordered_slot(self, slot: str) -> Ordered | None:
        """The `in binding order` rule about `slot`, if one is."""
        return next((rule for rule in self.ordered if rule.slot == slot), None)

    def guards_of(self, slot: str) -> tuple[Guard, ...]:
        return tuple(guard for guard in self.guards if guard.slot == slot)

    def watched_inputs(self, slot: str) -> tuple[str, ...]:
        """The inputs of `slot` whose digests the history keeps (a `gets the same` form
        names them, for the gated slot and for its approver)."""
        return tuple(dict.fromkeys([*(rule.input for rule in self.same
                                      if slot in (rule.slot, rule.approver)),
                                    *(rule.input for rule in self.sequences
                                      if rule.slot == slot),
                                    *(rule.input for rule in self.items_given
                                      if rule.slot == slot)]))

    def to_dict(self) -> dict[str, Any]:
        return {"guards": [asdict(rule) for rule in self.guards],
                "approvals": [asdict(rule) for rule in self.approvals],
                "same": [asdict(rule) for rule in self.same],
                "exclusive": [asdict(rule) for rule in self.exclusive],
                **({"one_of": [asdict(rule) for rule in self.one_of]} if self.one_of else {}),
                **({"stops": [asdict(rule) for rule in self.stops]} if self.stops else {}),
                **({"ordered": [asdict(rule) for rule in self.ordered]} if self.ordered else {}),
                **({"growths": [asdict(rule) for rule in self.growths]} if self.growths else {}),
                **({"sequences": [asdict(rule) for rule in self.sequences]}
                   if self.sequences else {}),
                **({"items_given": [asdict(rule) for rule in self.items_given]}
                   if self.items_given else {}),
                **({"in_order": [asdict(rule) for rule in self.in_order]}
                   if self.in_order else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Gates:
        if not data:
            return cls()
        return cls(
            tuple(Guard(**{**item, "condition": tuple(item["condition"])})
                  for item in data.get("guards", ())),
            tuple(Approval(**item) for item in data.get("approvals", ())),
            tuple(SameGiven(**item) for item in data.get("same", ())),
            tuple(Exclusive(**{**item, "slots": tuple(item["slots"])})
                  for item in data.get("exclusive", ())),
            tuple(OneOf(**{**item, "path": tuple(item["path"]), "values": tuple(item["values"])})
                  for item in data.get("one_of", ())),
            tuple(Stop(**{**item, "slots": tuple(item["slots"])})
                  for item in data.get("stops", ())),
            tuple(Ordered(**item) for item in data.get("ordered", ())),
            tuple(Growth(**item) for item in data.get("growths", ())),
            tuple(SameOrder(**item) for item in data.get("sequences", ())),
            tuple(ItemGiven(**item) for item in data.get("items_given", ())),
            tuple(ResultInOrder(**item) for item in data.get("in_order", ())),
        )


def digest(value: Any) -> str:
    """The digest an input is compared by (`gets the same`): sha256 of its canonical JSON."""
    import hashlib  # here: loading OpenSSL's hashes was ~7 ms of a cold `prose lint`, which
    # never digests

    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def iteration_of(path: str) -> str:
    """The innermost loop iteration (or parallel branch) a call's trace path is in: the
    path up to its last `#N` step ("" outside any loop: the whole run)."""
    cut = path.rfind("#")
    if cut < 0:
        return ""
    end = path.find("/", cut)
    return path if end < 0 else path[:end]


def scopes_of(path: str) -> list[str]:
    """The loop iterations (and parallel branches) a call's trace path is in, innermost
    first, ending with "" (the whole run)."""
    scopes: list[str] = []
    scope = iteration_of(path)
    while scope:
        scopes.append(scope)
        scope = iteration_of(scope[:scope.rfind("#")])
    return [*scopes, ""]


def matches(output: Any, field_name: str, value: Literal) -> bool:
    """Whether an approver's output has `field_name` == value (`true` is not `1`)."""
    if not isinstance(output, Mapping) or field_name not in output:
        return False
    found = output[field_name]
    if isinstance(value, bool) or isinstance(found, bool):
        return found is value
    return bool(found == value)


def replaces_latest(slot: str, reached: AbstractSet[str]) -> bool:
    """Whether a call that may reach the slots `reached` replaces what `slot`'s latest
    call returned and was given, which `runs only after`, `grows only after` and `gets
    the same ... got` read: any call of `slot` does, whether it returns (its output and
    inputs are now the latest) or fails (no decision stands, `GateHistory.failed`). The
    linter drops what it knew about the latest call at every such call
    (`prose.check.dominance`)."""
    return slot in reached


def bare_test_approves(declared: str | None) -> bool:
    """Whether a bare test of an approver's field (`if r.ok:`) proves `ok == true`, as
    `runs only after` and `grows only after` demand of the approver's latest result: only
    when the slot declares the field boolean (`output: { ok: boolean }`), so that every
    reply that passes its schema holds `true` or `false` there. A field of another or no
    declared type may hold any truthy value (`"yes"`), which the run time does not count
    as `true` (`GateHistory.returned` compares the value as JSON), so the linter asks for
    `r.ok == true`."""
    from prose.lang.schema_types import json_type

    return declared is not None and json_type(declared) == "boolean"


_MISSING = object()


@dataclass
class GateHistory:
    """What a run has done so far that the gates read (mutable: one per run or audit)."""

    # (approver, scope) -> its latest output in that iteration (or the run: scope "")
    outputs: dict[tuple[str, str], Any] = field(default_factory=dict)
    # (slot, scope) -> input -> digest, of its latest call in that scope
    given: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    ran: dict[tuple[int, str], str] = field(default_factory=dict)  # (rule, scope) -> slot
    stopped: set[int] = field(default_factory=set)  # the `never run after` rules in force
    # `in binding order`: the calls of each ordered slot running now, and the next service
    running: dict[str, int] = field(default_factory=dict)
    next_index: dict[str, int] = field(default_factory=dict)
    # `same sequence`: the calls each chain made so far, and what the n-th call was given
    chain_calls: dict[tuple[int, tuple[str, ...]], int] = field(default_factory=dict)
    sequence: dict[tuple[int, int], str] = field(default_factory=dict)
    # The run's parameters and config (`its item of`), and what each service of a slot
    # whose outputs a result holds in order last returned: (slot, index) -> output.
    run_values: dict[str, Any] = field(default_factory=dict)
    by_service: dict[tuple[str, int], Any] = field(default_factory=dict)

    @staticmethod
    def _latest(table: Mapping[tuple[str, str], Any], slot: str, path: str) -> Any:
        """What `slot` did last as seen from a call at `path`: in the innermost iteration
        around it where it ran (parallel branches each see their own), else outside."""
        for scope in scopes_of(path):
            if (slot, scope) in table:
                return table[(slot, scope)]
        return _MISSING

    def violations(self, gates: Gates, slot: str, *, conditions: Mapping[str, Any],
                   given: Mapping[str, str], path: str, index: int | None = None,
                   chain: tuple[str, ...] = ()) -> list[GateViolation]:
        """Every control-flow invariant a call of `slot` made now would break.

        `conditions` holds each `runs only if` condition's value as the call site sees it
        (absent: it could not be evaluated), `given` the digests of the watched inputs the
        call would send, `path` its trace path (for `per iteration`), `index` the position
        of the service called in a list-valued slot (for `in binding order`), `chain` the
        parallel branches the call runs in (for `same sequence`)."""
        found = self._order_violations(gates, slot, index)
        for item in gates.items_given:
            if item.slot == slot:
                found += self._item_violation(item, given, index)
        for number, order in enumerate(gates.sequences):
            if order.slot != slot:
                continue
            position = self.chain_calls.get((number, chain), 0)
            before = self.sequence.get((number, position))
            if before is not None and given.get(order.input) != before:
                found.append(GateViolation(
                    slot, SAME_SEQUENCE, f"each chain of `{slot}` gets the same sequence of "
                    f"`{order.input}`, but call {position + 1} of this chain gets another "
                    f"`{order.input}` than call {position + 1} of an earlier chain", order.line))
        for guard in gates.guards_of(slot):
            value = conditions.get(guard.key, _MISSING)
            if value is _MISSING or not value:
                shown = "cannot be evaluated" if value is _MISSING else f"is {json.dumps(value)}"
                found.append(GateViolation(
                    slot, RUNS_ONLY_IF, f"`{slot}` runs only if `{guard.key}`, which {shown} "
                    "here", guard.line))
        for approval in gates.approvals:
            if approval.slot != slot:
                continue
            want = f"`{approval.field}` == {json.dumps(approval.value)}"
            latest = self._latest(self.outputs, approval.approver, path)
            if latest is _MISSING:
                found.append(GateViolation(
                    slot, RUNS_ONLY_AFTER, f"`{slot}` runs only after `{approval.approver}` "
                    f"returns {want}, and `{approval.approver}` has not run", approval.line))
            elif not matches(latest, approval.field, approval.value):
                found.append(GateViolation(
                    slot, RUNS_ONLY_AFTER, f"`{slot}` runs only after `{approval.approver}` "
                    f"returns {want}, but its latest call did not", approval.line))
        for rule in gates.same:
            if rule.slot != slot:
                continue
            gave = self._latest(self.given, rule.approver, path)
            if gave is _MISSING and rule.approver == slot:
                continue  # `every call of A gets the same x`: the first call sets it
            before = gave.get(rule.input) if isinstance(gave, dict) else None
            if before is None or given.get(rule.input) != before:
                found.append(GateViolation(
                    slot, SAME_INPUT, f"`{slot}` gets the same `{rule.input}` `{rule.approver}` "
                    f"got, but {'its `' + rule.input + '` differs' if before else 'the approver was given none'}",
                    rule.line))
        for number, exclusive in enumerate(gates.exclusive):
            if slot not in exclusive.slots:
                continue
            first = self.ran.get((number, iteration_of(path) if exclusive.per_iteration else ""))
            once = len(exclusive.slots) == 1  # `A runs at most once`: a second call of A
            if first is not None and (first != slot or once):
                where = "in this iteration" if exclusive.per_iteration else "in this run"
                found.append(GateViolation(
                    slot, AT_MOST_ONE, f"`{slot}` runs at most once, and it already ran {where}"
                    if once else f"at most one of {_names(exclusive.slots)} runs, and "
                    f"`{first}` already ran {where}", exclusive.line))
        return found

    def _order_violations(self, gates: Gates, slot: str,
                          index: int | None) -> list[GateViolation]:
        """`never run after` and `in binding order`: what the calls so far forbid now."""
        found = [GateViolation(slot, NEVER_AFTER, f"{rule.describe()}, and it did", rule.line)
                 for number, rule in enumerate(gates.stops)
                 if number in self.stopped and slot in rule.slots]
        order = gates.ordered_slot(slot)
        if order is not None:
            if self.running.get(slot, 0):
                found.append(GateViolation(
                    slot, BINDING_ORDER, f"`{slot}` run one at a time in binding order, and "
                    "another call of it is running", order.line))
            expected = self.next_index.get(slot, 0)
            if index != expected:
                shown = "no service of the list" if index is None else f"`{slot}[{index}]`"
                found.append(GateViolation(
                    slot, BINDING_ORDER, f"`{slot}` run one at a time in binding order: the "
                    f"next call is of `{slot}[{expected}]`, not {shown}", order.line))
        return found

    def _item_violation(self, rule: ItemGiven, given: Mapping[str, str],
                        index: int | None) -> list[GateViolation]:
        items = self.run_values.get(rule.items)
        what = f"each of `{rule.slot}` gets its item of `{rule.items}` as `{rule.input}`"
        if not isinstance(items, list) or index is None or not 0 <= index < len(items):
            where = "no service of the list" if index is None else f"`{rule.slot}[{index}]`"
            return [GateViolation(rule.slot, ITEM_INPUT, f"{what}, and `{rule.items}` has "
                                  f"no item for {where}", rule.line)]
        if given.get(rule.input) != digest(items[index]):
            return [GateViolation(rule.slot, ITEM_INPUT, f"{what}, but `{rule.slot}[{index}]` "
                                  f"gets another `{rule.input}` than `{rule.items}[{index}]`",
                                  rule.line)]
        return []

    def result_violations(self, gates: Gates, result: Any) -> list[GateViolation]:
        """`` the returned `k` holds the outputs of `s` in binding order ``: item n of the
        returned key is what `s[n]` last returned, one item per service that returned."""
        found: list[GateViolation] = []
        fields = result if isinstance(result, Mapping) else {}
        for rule in gates.in_order:
            made = sorted(index for slot, index in self.by_service if slot == rule.slot)
            value = fields.get(rule.key)
            expected = [self.by_service[(rule.slot, index)] for index in made]
            if made != list(range(len(made))) or not isinstance(value, list) or value != expected:
                found.append(GateViolation(
                    rule.slot, OUTPUTS_IN_ORDER, f"the returned `{rule.key}` holds the outputs "
                    f"of `{rule.slot}` in binding order, but it is not the list of what "
                    f"`{rule.slot}[0]` ... `{rule.slot}[{max(len(made) - 1, 0)}]` returned",
                    rule.line))
        return found

    def started(self, gates: Gates, slot: str, *, given: Mapping[str, str], path: str,
                index: int | None = None, chain: tuple[str, ...] = ()) -> None:
        """A call of `slot` is made: record it for `at most one`, `gets the same`,
        `in binding order` and `same sequence`."""
        for number, order in enumerate(gates.sequences):
            if order.slot == slot:
                position = self.chain_calls.get((number, chain), 0)
                self.chain_calls[(number, chain)] = position + 1
                self.sequence.setdefault((number, position), given.get(order.input, ""))
        if gates.ordered_slot(slot) is not None:
            self.running[slot] = self.running.get(slot, 0) + 1
            self.next_index[slot] = (index if index is not None else -1) + 1
        for number, exclusive in enumerate(gates.exclusive):
            if slot in exclusive.slots:
                scope = iteration_of(path) if exclusive.per_iteration else ""
                self.ran.setdefault((number, scope), slot)
        if given:
            for scope in scopes_of(path):
                self.given[(slot, scope)] = dict(given)

    def returned(self, gates: Gates, slot: str, output: Any, path: str,
                 index: int | None = None) -> None:
        """A call of `slot` at `path` returned `output`: an approver's decision, the latest
        in every iteration around the call."""
        self.ended(gates, slot)
        if index is not None and any(rule.slot == slot for rule in gates.in_order):
            self.by_service[(slot, index)] = output
        for number, rule in enumerate(gates.stops):
            if rule.stopper == slot and rule.stops(output):
                self.stopped.add(number)
        approvers = [rule.approver for rule in gates.approvals]
        if any(replaces_latest(approver, {slot})
               for approver in (*approvers, *(rule.approver for rule in gates.growths))):
            for scope in scopes_of(path):
                self.outputs[(slot, scope)] = output

    def growth_violations(self, gates: Gates, name: str, path: str) -> list[GateViolation]:
        """`` `name` grows only after ... returns ``: the approver's latest call, as seen
        from the statement at `path`, must have returned the value."""
        found: list[GateViolation] = []
        for rule in gates.growths:
            if rule.name != name:
                continue
            latest = self._latest(self.outputs, rule.approver, path)
            if latest is _MISSING or not matches(latest, rule.field, rule.value):
                found.append(GateViolation(
                    rule.approver, GROWS_ONLY_AFTER, f"`{name}` grows only after "
                    f"`{rule.approver}` returns `{rule.field}` == {json.dumps(rule.value)}, "
                    + ("and it has not run" if latest is _MISSING else
                       "but its latest call did not"), rule.line))
        return found

    def ended(self, gates: Gates, slot: str) -> None:
        """A call of `slot` is no longer running (it returned or failed)."""
        if self.running.get(slot, 0) > 0:
            self.running[slot] -= 1

    @staticmethod
    def unexpected(gates: Gates, slot: str, output: Any) -> list[GateViolation]:
        """Every `returns ... as one of` form a call of `slot` that returned `output`
        breaks (its result is not passed on: the run stops after the call)."""
        found: list[GateViolation] = []
        for rule in gates.one_of:
            outside = rule.outside(output) if rule.slot == slot else []
            if outside:
                shown = ", ".join(json.dumps(value) for value in rule.values)
                found.append(GateViolation(
                    slot, RETURNS_ONE_OF, f"`{slot}` returns `{'.'.join(rule.path)}` as one of "
                    f"{shown}, but returned {json.dumps(outside[0])}", rule.line))
        return found

    def failed(self, slot: str, path: str) -> None:
        """A call of `slot` failed: whatever it approved before no longer stands."""
        for scope in scopes_of(path):
            self.outputs.pop((slot, scope), None)


def _names(slots: tuple[str, ...]) -> str:
    return ", ".join(f"`{slot}`" for slot in slots)
