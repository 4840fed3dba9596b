"""Invariants about when a slot runs: `runs only if`, `runs only after`, `gets the same`,
`at most one of` (proven on the program's control flow, `prose.check.dominance`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator

from prose.check.dominance import (
    CallPlace,
    Fact,
    bound_roots,
    call_places,
    exclusive,
    given,
    latest,
    path_of,
    root,
)
from prose.check.flow import CallFlow
from prose.check.invariant_checks import F, Form, forms
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang.gates import bare_test_approves
from prose.lang.invariants import AtMostOne, GrowsOnlyAfter, RunsOnlyAfter, RunsOnlyIf, SameInput
from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.walk import find_all

_NOWHERE = CallPlace(frozenset(), ())


def _place(places: dict[object, CallPlace], site: CallFlow) -> CallPlace:
    call = site.call
    return places.get(id(call)) or places.get((call.span.line, call.span.column)) or _NOWHERE


def _head(site: CallFlow) -> Span:
    call = site.call
    return call.head if call.head.line else call.span


def _sites_of(ctx: CheckContext, slot: str) -> Iterator[CallFlow]:
    for site in sorted(ctx.flow.calls.values(), key=lambda s: (s.call.span.line, s.call.span.column)):
        if slot in site.slots:
            yield site


GateForm = Form[RunsOnlyIf] | Form[RunsOnlyAfter] | Form[SameInput] | Form[AtMostOne]


def _invariant(item: GateForm) -> Label:
    return Label(item.span, f"invariant: {item.text.strip()}")


def _places(ctx: CheckContext) -> dict[object, CallPlace]:
    """What holds at each call and growth of the program (`prose.check.dominance`)."""
    flow = ctx.flow

    def reach(call: n.Call) -> set[str]:
        site = flow.calls.get(id(call))
        return site.slots if site is not None else set()

    return call_places(ctx.program, reach, key=flow)


def _asked(ctx: CheckContext, cls: type[F]) -> Iterator[tuple[Form[F], dict[object, CallPlace]]]:
    """Each bullet written in the form `cls`, with what holds at each call and growth (the
    control-flow analysis made only when a bullet asks for it)."""
    items = list(forms(ctx, cls))
    places = _places(ctx) if items else {}
    for item in items:
        yield item, places


def _approved(ctx: CheckContext,
              form: RunsOnlyAfter | GrowsOnlyAfter) -> Callable[[frozenset[Fact]], bool]:
    """Whether facts say that `approver`'s latest result has `field` == `value`: a name
    holds that result (bound by a call of `approver` alone, with no call that may reach
    `approver` since) and was tested, `R.field == value` (for `true`, the bare test
    `R.field` too when the field is declared boolean: `prose.lang.gates.bare_test_approves`).
    `runs only after` (PH631) and `grows only after` (PH643) ask it."""
    approver, field, value = form.approver, form.field, form.value
    literal = json.dumps(value)
    marker = latest(approver)
    spec_slot = ctx.spec.slot(approver) if ctx.spec is not None else None
    declared = (spec_slot.output_schema or {}).get(field) if spec_slot is not None else None
    bare = value is True and bare_test_approves(declared)

    def holds(facts: frozenset[Fact]) -> bool:
        return any(tag == marker and ((f"{name}.{field}", literal) in facts
                                      or (bare and (f"{name}.{field}", None) in facts))
                   for name, tag in facts)

    return holds


def _unproven(ctx: CheckContext, places: dict[object, CallPlace], slot: str,
              proven: Callable[[CallFlow, frozenset[Fact]], bool]) -> Iterator[CallFlow]:
    """Every call that may reach `slot` where `proven` (given the call and what every path
    to it has tested) does not hold."""
    for site in _sites_of(ctx, slot):
        if not proven(site, _place(places, site).facts):
            yield site


def _approval_help(facts: frozenset[Fact], approver: str, field: str, literal: str,
                   act: str) -> str:
    """How to prove an approval, naming a test that was made of a result that may no
    longer be the approver's latest."""
    do = (f"bind `let verdict = call {approver}` and {act} inside "
          f"`if verdict.{field} == {literal}:`")
    tested = sorted(path for path, value in facts if path.endswith(f".{field}") and (
        value == literal or (value is None and literal == "true")))
    if not tested:
        return do
    name = tested[0].rsplit(".", 1)[0]
    return (f"`{tested[0]}` is tested, but `{name}` may not hold the latest result of "
            f"`{approver}` here (another call that may reach `{approver}` may run after "
            f"the one that bound it), and the run time judges the latest: {do}, with no "
            f"other call of `{approver}` in between")


def _tests_any(wanted: set[Fact]) -> Callable[[CallFlow, frozenset[Fact]], bool]:
    """Proven where every path to the call has tested one of `wanted`."""
    return lambda _, facts: bool(wanted & facts)


def _tests_approval(approved: Callable[[frozenset[Fact]], bool]
                    ) -> Callable[[CallFlow, frozenset[Fact]], bool]:
    return lambda _, facts: approved(facts)


def _at_call(rule: Rule, site: CallFlow, item: GateForm, message: str,
             help: str | None = None) -> Diagnostic:
    """A finding at the call's head, pointing at the invariant it breaks."""
    return rule.diagnostic(_head(site), message, secondary=[_invariant(item)], help=help)


@rule(code="PH630", name="runs-only-if-violated", category="contract", severity=Severity.ERROR,
      judges_invariants=True)
class RunsOnlyIfViolated(Rule):
    """A slot that runs only if a condition holds is called where the condition is not
    checked on every path.

    ## What it does
    For `` `writer` runs only if `gate.ok` ``, checks that every call that may
    reach `writer` is dominated by a test of `gate.ok`: it is inside an `if`
    arm whose condition is `gate.ok` (alone, `== true`, or one operand of an
    `and`), or after `if not gate.ok:` (or `gate.ok != true`) whose arm
    always leaves (`return`, `throw`, `break`, `continue`), and nothing binds
    `gate` again in between. The run time evaluates the condition again before
    each call (R060) and records its value, which `prose audit` checks.

    ## Why is this bad
    A gate the program can walk around is no gate: a path that reaches the
    writer without the check runs it on input nobody approved.

    ## Example
    ```prose
    let gate = call checker
      brief: brief
    let draft = call writer
      brief: brief
    ```

    ## Use instead
    ```prose
    let gate = call checker
      brief: brief
    if not gate.ok:
      return { result: null }
    let draft = call writer
      brief: brief
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for item, places in _asked(ctx, RunsOnlyIf):
            condition = ".".join(item.form.condition)
            tested = {(condition, None), (condition, "true")}
            for site in _unproven(ctx, places, item.form.slot,
                                  _tests_any(tested)):
                yield _at_call(
                    self, site, item, f"`{item.form.slot}` is called here on a path that does "
                    f"not check `{condition}`",
                    help=f"call it inside `if {condition}:`, or leave before it with "
                    f"`if not {condition}: return ...`")


@rule(code="PH631", name="runs-only-after-violated", category="contract", severity=Severity.ERROR,
      judges_invariants=True)
class RunsOnlyAfterViolated(Rule):
    """A slot that runs only after an approval is called where the approval is not
    checked on every path.

    ## What it does
    For `` `executor` runs only after `approver` returns `approved` == true ``,
    checks that every call that may reach `executor` is dominated by a test of
    `R.approved == true` (or the bare `R.approved` when the value is `true` and
    `approver` declares `approved` boolean: another value may be truthy and not
    `true`, which the run time refuses), where `R`
    holds the *latest* result of `approver` from the test to the call: it was
    bound by a call of `approver` (that call alone), nothing binds it again,
    and no call that may reach `approver` runs between that binding and the
    call of `executor` (directly, through a service value, a block run with
    `do` or a pipeline stage; in a loop body that runs again; in another
    branch of a `parallel:`). The run time asks again before each call: the
    latest call of `approver` in this run must have returned that value (R060),
    and `prose audit` asks the same of the recorded calls. So a verdict asked
    for again is tested again: its new value is the one that counts.

    ## Why is this bad
    An irreversible step that can run without its approval, or on a stale or
    negative one, defeats the reason for asking.

    ## Example
    ```prose
    let verdict = call approver
      proposal: proposal
    let done = call executor
      proposal: proposal
    ```

    A verdict tested, then asked for again (the second may be a refusal):

    ```prose
    let verdict = call approver
      proposal: proposal
    if verdict.approved:
      let second = call approver
        proposal: proposal
      let done = call executor
        proposal: proposal
    ```

    ## Use instead
    ```prose
    let verdict = call approver
      proposal: proposal
    if verdict.approved == true:
      let done = call executor
        proposal: proposal
    ```

    Asked again, the new verdict is the one tested:

    ```prose
    let verdict = call approver
      proposal: proposal
    verdict = call approver
      proposal: proposal
    if verdict.approved:
      let done = call executor
        proposal: proposal
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for item, places in _asked(ctx, RunsOnlyAfter):
            form = item.form
            literal, approved = json.dumps(form.value), _approved(ctx, form)
            for site in _unproven(ctx, places, form.slot, _tests_approval(approved)):
                yield _at_call(
                    self, site, item, f"`{form.slot}` is called here on a path that does not "
                    f"check that `{form.approver}` returned `{form.field}` == {literal}",
                    help=_approval_help(_place(places, site).facts, form.approver, form.field,
                                        literal, f"call `{form.slot}`"))


@rule(code="PH632", name="same-input-violated", category="contract", severity=Severity.ERROR,
      judges_invariants=True)
class SameInputViolated(Rule):
    """A slot is not given the same value its approver was given.

    ## What it does
    For `` `executor` gets the same `proposal` `approver` got ``, checks that
    every call of `executor` is given `proposal` as a name (or path) that,
    on every path to the call, a call of `approver` was given under the same
    input name, with nothing binding that name again in between (a loop
    variable: within one iteration) and no later call that may reach the
    approver (the run time compares with what its latest call got). The
    approver's call is a statement of its own (`let verdict = call approver
    ...`). The run time
    compares the digests of the two values before each call of `executor`
    (R060), and records them for `prose audit`. For `` every call of `P`
    gets the same `material` ``, every call passes one path bound once for
    the run; a call that does is reported too when one that does not may
    run before it (the run time stops the second of the two).

    ## Why is this bad
    An approval is of one proposal; executing another (edited after the
    approval, or picked from elsewhere) is executing something nobody
    approved.

    ## Example
    ```prose
    let verdict = call approver
      proposal: proposal
    proposal = "{proposal} (and one more thing)"
    if verdict.approved:
      call executor
        proposal: proposal
    ```

    ## Use instead
    ```prose
    let verdict = call approver
      proposal: proposal
    if verdict.approved:
      call executor
        proposal: proposal
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for item, places in _asked(ctx, SameInput):
            form = item.form
            if form.approver == form.slot:
                yield from self._every_call(ctx, places, item)
                continue
            approvals = [site.call for site in _sites_of(ctx, form.approver)]

            def same(site: CallFlow, facts: frozenset[Fact], form: SameInput = form,
                     approvals: list[n.Call] = approvals) -> bool:
                path = _given_path(site, form.input)
                return path is not None and any((path, given(call, form.input)) in facts
                                                for call in approvals)

            for site in _unproven(ctx, places, form.slot, same):
                path = _given_path(site, form.input)
                if path is None:
                    yield _at_call(self, site, item, f"`{form.slot}` is not given `{form.input}` "
                                   f"as a name here, so it cannot be shown to be what "
                                   f"`{form.approver}` got")
                    continue
                yield _at_call(
                    self, site, item, f"`{form.slot}` gets `{form.input}: {path}` here, but not "
                    f"on every path after a call of `{form.approver}` given the same "
                    f"`{form.input}: {path}` with nothing binding `{root(path)}` in between",
                    help=f"give both `{form.input}: {path}`, and bind `{root(path)}` only before "
                    f"the call of `{form.approver}`")


    def _every_call(self, ctx: CheckContext, places: dict[object, CallPlace],
                    item: Form[SameInput]) -> Iterator[Diagnostic]:
        """`every call of A gets the same x`: every call passes `x` as one path whose root
        is bound once for the whole run (a parameter, a config key or one `let` at the top
        of the program, never bound again), outside any block definition."""
        form = item.form
        program = ctx.program
        top = [s for s in program.body if isinstance(s, n.Let) and s.names]
        rebound: set[str] = set()
        for statement in program.body:
            if statement in top:
                assert isinstance(statement, n.Let)
                rebound |= bound_roots(statement.value)
            else:
                rebound |= bound_roots(statement)
        lets = [name for s in top for name in s.names]
        first: str | None = None
        bad: list[CallFlow] = []
        good: list[tuple[CallFlow, str]] = []
        for site in _sites_of(ctx, form.slot):
            path = _given_path(site, form.input)
            name = root(path) if path is not None else None
            if (path is None or name in rebound or lets.count(name or "") > 1
                    or (first is not None and path != first)
                    or any(step.kind == "block" for step in _place(places, site).arms)):
                shown = f"`{form.input}: {path}`" if path is not None else f"no `{form.input}` name"
                bad.append(site)
                yield _at_call(
                    self, site, item, f"every call of `{form.slot}` gets the same `{form.input}`, "
                    f"but this one gets {shown}, which is not one value bound once for the run",
                    help=f"give every call `{form.input}: NAME`, with NAME a parameter or one "
                    "`let` at the top of the program that nothing binds again")
                continue
            first = first or path
            good.append((site, path or ""))
        # The run time stops the call whose value differs from the first call made: a call
        # that passes the one value is stopped too when a call passing another may run
        # before it.
        for site, path in good:
            earlier = next((other for other in bad if _may_run_before(
                places, other, site)), None)
            if earlier is not None:
                yield _at_call(
                    self, site, item, f"every call of `{form.slot}` gets the same `{form.input}`, "
                    f"but the call at line {earlier.call.span.line} may run before this one "
                    f"with another `{form.input}` than `{path}`",
                    help=f"give every call `{form.input}: {path}`")


def _may_run_before(places: dict[object, CallPlace], first: CallFlow, then: CallFlow) -> bool:
    """Whether the call `first` may run before the call `then`: it is earlier in the source,
    or in a block definition (it runs wherever the block is called), or both are in one
    loop (a later iteration) or in branches of one parallel construct."""
    one, other = _place(places, first).arms, _place(places, then).arms
    if first.call.span.line < then.call.span.line or any(step.kind == "block" for step in one):
        return True
    shared = {(step.node, step.arm) for step in one if step.kind == "loop"}
    if any((step.node, step.arm) in shared for step in other if step.kind == "loop"):
        return True
    branches = {step.node for step in one if step.kind == "parallel"}
    return any(step.node in branches for step in other if step.kind == "parallel")


@rule(code="PH633", name="at-most-one-violated", category="contract", severity=Severity.ERROR,
      judges_invariants=True)
class AtMostOneViolated(Rule):
    """Two slots of which at most one may run are called on paths that can both run.

    ## What it does
    For `` at most one of `billing`, `technical`, `general` runs `` (or
    ``... runs per iteration``), checks every pair of calls that may reach
    two different listed slots (for `` `handlers` runs at most once ``, every
    pair of calls of the one slot, and no call of it may repeat): they must be in different arms of one `if`
    or `choice`, or one in an arm that leaves the pattern (`return`,
    `throw`) and the other after it; per run, no loop may enclose both (two
    iterations could take two arms). A call inside a block definition is
    never proven exclusive (the block may run from anywhere). The run time
    stops a second listed slot before it is called (R060), and `prose audit`
    counts the recorded calls per run or per iteration.

    ## Why is this bad
    A router that may hand one request to two handlers does the work twice
    and can answer twice, differently.

    ## Example
    ```prose
    if kind == "billing":
      call billing
        request: request
    call general
      request: request
    ```

    ## Use instead
    ```prose
    if kind == "billing":
      call billing
        request: request
    else:
      call general
        request: request
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for item, places in _asked(ctx, AtMostOne):
            form = item.form
            listed = set(form.slots)
            once = len(form.slots) == 1  # `A runs at most once`: two calls of A count
            sites = sorted({id(site): site for slot in form.slots
                            for site in _sites_of(ctx, slot)}.values(),
                           key=lambda s: (s.call.span.line, s.call.span.column))
            for number, site in enumerate(sites):
                place = _place(places, site)
                reached = sorted(site.slots & listed)
                repeats = any(step.kind == "block" or (step.kind == "loop" and not form.per_iteration)
                              for step in place.arms)
                if (len(reached) > 1 or once) and repeats:
                    yield _at_call(self, site, item, f"this call may reach {_names(reached)} "
                                   "and may run more than once, so " + (
                                       "it may run twice" if once else
                                       "more than one of them may run"))
                # Either call of a pair may be the one that runs second (a call inside a
                # block runs where the block is run, before or after a later line), and the
                # run time stops whichever comes second: both calls are reported.
                for other_site in sites[:number] + sites[number + 1:]:
                    if ((other_site.slots & listed) == (site.slots & listed) and len(reached) == 1
                            and not once):
                        continue  # the same one slot: at most one of them still runs
                    first, second = sorted((other_site, site),
                                           key=lambda s: (s.call.span.line, s.call.span.column))
                    if not exclusive(_place(places, first).arms, _place(places, second).arms,
                                     first.call.span.line, second.call.span.line,
                                     form.per_iteration):
                        yield self.diagnostic(
                            _head(site), f"this call of {_names(reached)} and the call of "
                            f"{_names(sorted(other_site.slots & listed))} at line "
                            f"{other_site.call.span.line} may both run, but "
                            + (f"{_names(form.slots)} runs at most once" if once else
                               f"at most one of {_names(form.slots)} runs")
                            + (" per iteration" if form.per_iteration else ""),
                            secondary=[_invariant(item), Label(_head(other_site), "the other call")])
                        break


def _given_path(site: CallFlow, name: str) -> str | None:
    """The name path a call passes as input `name` (`proposal: plan.text`), if it is one."""
    entry = site.inputs.get(name)
    return path_of(entry.prop.value) if entry is not None else None


def _names(slots: Iterable[str]) -> str:
    return ", ".join(f"`{slot}`" for slot in slots)


@rule(code="PH643", name="grows-only-after-violated", category="contract", severity=Severity.ERROR,
      judges_invariants=True)
class GrowsOnlyAfterViolated(Rule):
    """A list that grows only after an approval grows where the approval is not checked
    on every path.

    ## What it does
    For `` `progress` grows only after `certifier` returns `certified` == true ``,
    checks that every `record ... in progress` and `append ... to progress`,
    and every assignment to `progress` or a part of it (its first `let` is
    its start, not a growth), is dominated by a test of `R.certified == true`
    (or the bare `R.certified` when `certifier` declares it boolean) where `R` holds the *latest* result of `certifier`: it
    was bound by a call of `certifier` alone, nothing binds it again, and no
    call that may reach `certifier` runs between that binding and the growth
    (in a loop body that runs again either): the proof of `runs only after`
    (PH631), for a statement instead of a call. The run time asks again
    before each such statement: the latest call of `certifier` must have
    returned that value (R060, the list is not changed). **Known gap:** the
    trace records no growth, so `prose audit` cannot judge it.

    ## Why is this bad
    A ratchet whose certified list can take a step the certifier rejected
    (or never saw) certifies nothing.

    ## Example
    ```prose
    let verdict = call certifier
      proposed_step: proposal.step
    append proposal.step to progress
    ```

    A step certified, then another asked about before it is recorded:

    ```prose
    let verdict = call certifier
      proposed_step: proposal.step
    if verdict.certified:
      let next = call certifier
        proposed_step: other.step
      append proposal.step to progress
    ```

    ## Use instead
    ```prose
    let verdict = call certifier
      proposed_step: proposal.step
    if verdict.certified:
      append proposal.step to progress
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for item, places in _asked(ctx, GrowsOnlyAfter):
            form = item.form
            literal, approved = json.dumps(form.value), _approved(ctx, form)
            changes: Iterator[n.Append | n.Assign] = find_all(ctx.program, (n.Append, n.Assign))
            for change in changes:
                target = change.target
                while isinstance(target, n.Member | n.Index):  # `progress[0] = x` too
                    target = target.obj
                if not isinstance(target, n.Name) or target.name != form.name:
                    continue
                place = places.get(id(change))
                if place is not None and approved(place.facts):
                    continue
                yield self.diagnostic(
                    change.span, f"`{form.name}` grows here on a path that does not check "
                    f"that `{form.approver}` returned `{form.field}` == {literal}",
                    secondary=[Label(item.span, f"invariant: {item.text.strip()}")],
                    help=_approval_help(place.facts if place is not None else frozenset(),
                                        form.approver, form.field, literal,
                                        f"grow `{form.name}`"))
