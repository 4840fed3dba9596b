"""The order of calls and what a slot's tools may do: `in binding order` (PH639) and
`only reads` (PH640).

`` `S` run one at a time in binding order `` and `` `W` never runs after `A` returns ``
are judged by the run time before each call and by the audit from the recorded calls
(`prose.lang.gates`); the linter checks here only that the first names a list-valued
slot. `` `C` only reads `` is a property of the slot's declared tools, which the
linter proves whole.
"""

from __future__ import annotations

from collections.abc import Iterable

from prose.check.flow import CONSTANT
from prose.check.invariant_checks import forms
from prose.check.rule import CheckContext, Rule, rule
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang.invariants import InBindingOrder, ItemInput, OnlyReads
from prose.syntax import nodes as n
from prose.syntax.walk import children, find_all


@rule(code="PH639", name="binding-order-not-a-list", category="contract", severity=Severity.ERROR)
class BindingOrderNotAList(Rule):
    """An `in binding order` invariant names a slot that is not list-valued.

    ## What it does
    For `` `S` run one at a time in binding order ``, reports the bullet when
    `S` is not a list-valued slot (marked `(list)`, documented by a `T[]`
    parameter, or iterated by `for s in S`).

    The property itself is not proven by the linter: the run time judges
    every call of `S` before it is made, from the run's history, and stops
    the run (R060, nothing sent) when another call of `S` is still running
    or when the service called is not the next of the binding (the first
    call is of `S[0]`, the n-th of `S[n-1]`); `prose audit` judges the
    recorded calls again in order (rule `binding-order`: the recorded service
    indexes, and a call that started before an earlier one ended by the
    recorded times).

    ## Why is this bad
    One service has no binding order: every call of it would break the
    invariant at run time.

    ## Example
    ```markdown
    - `writer` run one at a time in binding order
    ```

    ## Use instead
    ```markdown
    - `stages` run one at a time in binding order
    ```
    where `stages` is declared `(list)`.
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        listed = set(ctx.model.list_valued_slots)
        if ctx.spec is not None:
            listed |= ctx.spec.list_valued_slots()
        for found in forms(ctx, InBindingOrder):
            if found.form.slot not in listed:
                yield self.diagnostic(
                    found.span, f"`{found.form.slot}` is not a list-valued slot: it has no "
                    "binding order",
                    help="mark the slot `(list)`, or state the order of a list-valued slot")


@rule(code="PH640", name="only-reads-but-writes",
      category="contract", severity=Severity.ERROR, judges_invariants=True)
class OnlyReadsButWrites(Rule):
    """A slot said to only read declares a tool that writes.

    ## What it does
    For `` `C` only reads `` (or `` `C`'s tools only read ``), reports every
    tool of C's `tools:` that may write: the built-in `write`, or a command or
    external tool marked `(writes)`. A slot with no tools only reads.

    A call of a slot none of whose tools writes is an inspection: the run time
    hashes what its workspace was given again before its answer is taken, and a
    call that changed or removed one of those files fails (R033); so the form
    states, and the linter proves, that every call of C judges the files it
    was given.

    ## Why is this bad
    A checker that can write can "repair" the candidate it was asked to judge
    and then pass its own repair; a writing tool also takes the call out of
    the run time's check that its inputs were left unchanged.

    ## Example
    ```markdown
    - `checker`
      - tools: read, grep, cli:format (writes)
    ```
    with the invariant `` `checker` only reads ``.

    ## Use instead
    ```markdown
    - `checker`
      - tools: read, grep, cli:pytest
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        if ctx.spec is None:
            return
        for found in forms(ctx, OnlyReads):
            slot = ctx.spec.slot(found.form.slot)
            for tool in slot.tools if slot is not None else ():
                if tool.writes:
                    yield self.diagnostic(
                        found.span, f"`{found.form.slot}` only reads, but its tool "
                        f"`{tool.spelling}` writes",
                        secondary=[Label(found.span, f"invariant: {found.text.strip()}")],
                        help="remove the tool, or give the writing work to another slot")


@rule(code="PH642", name="return-carries-violated",
      category="information-hiding", severity=Severity.ERROR, judges_invariants=True)
class ReturnCarriesViolated(Rule):
    """A returned key may carry the output of a slot an invariant excludes.

    ## What it does
    For `` the returned `result` carries only `reducer` ``, reports every
    `return` of the program whose object's `result` may carry a copy of
    another slot's output (a call's output carries its own slot only, not
    what the call was given: the reducer's merged answer is the reducer's).
    For `` the returned `criterion_verdicts` never carries `holistic` ``,
    reports every `return` whose `criterion_verdicts` may carry anything
    computed from `holistic`'s output, through calls too. A return whose
    value is not an object literal is judged whole.

    The run time judges the returned value's labels again when the program
    returns (R061, the run fails at the invariant's line). **Known gap:** the
    trace records no labels of the result, so `prose audit` cannot judge it.

    ## Why is this bad
    A pattern that promises the merged result is the reducer's and returns a
    mapper's answer instead (or a verdict the holistic pass rewrote) returns
    something other than what its reader relies on.

    ## Example
    ```prose
    let merged = call reducer
      mapper_results: mapper_results
    return { result: mapper_results[0] }
    ```

    ## Use instead
    ```prose
    return { result: merged, mapper_results: mapper_results }
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        rules = ctx.policy.carries
        if not rules:
            return
        flow = ctx.flow
        for statement, value in flow.returns:
            for carry in rules:
                part = value.fields.get(carry.key, CONSTANT) if value.fields is not None else value
                problem = carry.problem(flow.provenance(part), flow.transitive(part))
                if problem:
                    invariant = next((item for item in ctx.decl.invariants
                                      if item.span.line == carry.line), None)
                    secondary = ([Label(invariant.span, f"invariant: {invariant.text.strip()}")]
                                 if invariant is not None else [])
                    yield self.diagnostic(statement.span, problem, secondary=secondary,
                                          help="return that key from the slots the invariant "
                                          "names only")


def _enclosing_fors(program: n.Program) -> dict[int, tuple[n.For, ...]]:
    """The `for` loops around each call of the program, innermost last (by the call's id)."""
    found: dict[int, tuple[n.For, ...]] = {}

    def walk(node: n.Node, fors: tuple[n.For, ...]) -> None:
        if isinstance(node, n.Call):
            found[id(node)] = fors
        inner = (*fors, node) if isinstance(node, n.For) else fors
        for child in children(node):
            walk(child, inner)

    walk(program, ())
    return found


@rule(code="PH644", name="item-input-unproven",
      category="contract", severity=Severity.ERROR, judges_invariants=True)
class ItemInputUnproven(Rule):
    """A service of a list-valued slot may be given another item than its own.

    ## What it does
    For `` each of `delegates` gets its item of `briefs` as `brief` ``, checks
    that every call that may reach `delegates` is a call of the loop variable
    `d` of a `for d, i in delegates` (or `parallel for`) around it, passing
    `brief: briefs[i]` with that loop's counter, where `briefs` is a parameter
    or config key the program never binds. The run time asks again before
    each call: the digest of the `brief` the n-th service is given must be the
    digest of the n-th item of the run's `briefs` (R060), and `prose audit`
    asks the same of the recorded calls (`gates.given`, `run_start`).

    ## Why is this bad
    Fan-out promises that delegate `i` answers brief `i`; a program that
    hands a delegate the wrong brief (or the whole list) returns answers
    that no longer line up with the questions.

    ## Example
    ```prose
    parallel for delegate, index in delegates:
      call delegate
        brief: briefs[0]
    ```

    ## Use instead
    ```prose
    parallel for delegate, index in delegates:
      call delegate
        brief: briefs[index]
    ```
    """

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        wanted = list(forms(ctx, ItemInput))
        if not wanted:
            return
        fors = _enclosing_fors(ctx.program)
        rebound: set[str] = set()
        for statement in find_all(ctx.program, (n.Let, n.Assign)):
            if isinstance(statement, n.Let):
                rebound.update(statement.names)
            elif isinstance(statement, n.Assign) and isinstance(statement.target, n.Name):
                rebound.add(statement.target.name)
        given = set(ctx.decl.parameters) | set(ctx.decl.config)
        for found in wanted:
            form = found.form
            label = Label(found.span, f"invariant: {found.text.strip()}")
            fixed = form.items in given and form.items not in rebound
            for site in ctx.flow.calls.values():
                if form.slot not in site.slots:
                    continue
                if fixed and _passes_own_item(site.call, form, fors.get(id(site.call), ())):
                    continue
                yield self.diagnostic(
                    site.call.head if site.call.head.line else site.call.span,
                    f"`{form.slot}` may be given another `{form.input}` here than its item "
                    f"of `{form.items}`", secondary=[label],
                    help=f"call the loop variable of `for s, i in {form.slot}` with "
                    f"`{form.input}: {form.items}[i]` (`{form.items}` a parameter)")


def _passes_own_item(call: n.Call, form: ItemInput, fors: tuple[n.For, ...]) -> bool:
    """The call is `call s` inside `for s, i in SLOT` passing `input: items[i]`."""
    if not isinstance(call.target, n.Name):
        return False
    loop = next((item for item in reversed(fors) if item.var == call.target.name), None)
    if (loop is None or loop.index_var is None or not isinstance(loop.iterable, n.Name)
            or loop.iterable.name != form.slot):
        return False
    value = next((prop.value for prop in call.properties if prop.name == form.input), None)
    return (isinstance(value, n.Index) and isinstance(value.obj, n.Name)
            and value.obj.name == form.items and isinstance(value.index, n.Name)
            and value.index.name == loop.index_var)
