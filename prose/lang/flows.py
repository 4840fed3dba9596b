"""How provenance and literal text pass through every construct: one rule per construct.

A *label* is what a value carries: its provenance (the slots whose outputs it
copies), its transitive provenance (also what those outputs were computed
from) and the pattern's own literal text it contains. The rules below are
written once over an abstract `Algebra` of labels. The interpreter applies
them to concrete labels (`Label`, sets of slot names and texts); the linter
applies them to abstract ones (sets of definitions, which also remember the
path a value took, for diagnostics). The differential soundness test checks
that the linter's result always covers the run's.

Strict mode (opt-in: `flow: strict` in a pattern's frontmatter, or
`--strict-flow`) adds implicit flows, as CaMeL's STRICT mode and the program
counter label of Denning's model do: a value bound or chosen under a
condition, an index, a loop's count or list, a `catch` taken, or a judge's
decision that depends on B carries B. That a call happens is not an
observation (every call starts a fresh context), so the program counter
taints values, never calls.

`FLOW_TABLE` is the reference table of docs/language.md (a test keeps the
two the same).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.walk import contains

L = TypeVar("L")
EMPTY: frozenset[str] = frozenset()
# Where a call ran: one element per parallel branch it runs inside, outermost first.
BranchPath = tuple[str, ...]
# (slot, path, index, line): a call output of `slot` made in the branch at `path` by the
# service at `index` of a list-valued slot (NO_INDEX for a single service), by the call
# at `line` of the pattern (so a run-time stop can say where the output came from).
Chains = frozenset[tuple[str, BranchPath, int, int]]
NO_CHAINS: Chains = frozenset()
NO_INDEX = -1
UNKNOWN_INDEX = -3  # the linter cannot tell which service of the list a call reaches
SHUFFLED = -4  # an output that passed through `shuffle`: its position tells nothing
# The provenance a `shuffle` key carries: it may index and undo the permutation in code,
# and no value carrying it may reach any call (`prose.lang.policy`, rule `sealed`).
SEALED = "#sealed"
STRICT_VALUES = ("strict",)
# The provenance a loop counter over a list in a list-valued slot's binding order carries
# (`order_marker(S)`): the counter tells which service of S made the item.
ORDER = "#order "


def order_marker(slot: str) -> str:
    """The provenance of a position in `slot`'s binding order (see `loop_counter`)."""
    return f"{ORDER}{slot}"


class Algebra(Protocol, Generic[L]):
    """The operations a label domain provides; the rules below are built from them."""

    def nothing(self) -> L: ...
    def join(self, labels: Iterable[L]) -> L: ...
    def text(self, text: str, where: Span) -> L: ...
    def output(self, slot: str, given: L, where: Span, branch: BranchPath, index: int) -> L: ...
    def unordered(self, items: L, where: Span) -> L: ...
    def sealed(self, where: Span) -> L: ...
    def order(self, slot: str, where: Span) -> L: ...


@dataclass(frozen=True, slots=True)
class Label:
    """A concrete label, as values carry it at run time (`chains`: which branch each
    direct call output was made in, for `each A sees only its own chain`)."""

    provenance: frozenset[str] = EMPTY
    transitive: frozenset[str] = EMPTY
    literal: frozenset[str] = EMPTY
    chains: Chains = NO_CHAINS

    def __or__(self, other: Label) -> Label:
        if not other:
            return self
        if not self:
            return other
        return Label(self.provenance | other.provenance, self.transitive | other.transitive,
                     self.literal | other.literal, self.chains | other.chains)

    def __bool__(self) -> bool:
        return bool(self.provenance or self.transitive or self.literal or self.chains)


NO_LABEL = Label()


class Concrete:
    """The run-time algebra: labels are sets of slots and texts."""

    def nothing(self) -> Label:
        return NO_LABEL

    def join(self, labels: Iterable[Label]) -> Label:
        out = NO_LABEL
        for label in labels:
            out = out | label
        return out

    def text(self, text: str, where: Span) -> Label:
        return Label(literal=frozenset((text,))) if text.strip() else NO_LABEL

    def output(self, slot: str, given: Label, where: Span, branch: BranchPath,
               index: int) -> Label:
        return Label(frozenset((slot,)), frozenset((slot,)) | given.transitive | given.provenance,
                     chains=frozenset(((slot, branch, index, where.line),)))


    def unordered(self, items: Label, where: Span) -> Label:
        chains = frozenset((slot, branch, SHUFFLED if index != NO_INDEX else index, line)
                           for slot, branch, index, line in items.chains)
        return Label(items.provenance, items.transitive, items.literal, chains)

    def sealed(self, where: Span) -> Label:
        return Label(frozenset((SEALED,)), frozenset((SEALED,)))

    def order(self, slot: str, where: Span) -> Label:
        marker = frozenset((order_marker(slot),))
        return Label(marker, marker)


CONCRETE = Concrete()


# --- the rules -------------------------------------------------------------------


MAX_JOINED_TEXTS = 16


def string(alg: Algebra[L], pieces: Sequence[str], values: Sequence[L], where: Span,
           joined: Iterable[str] = ()) -> L:
    """`"text {x} text"`: the interpolated values' labels, and the pieces as literal text.
    `joined`: the whole rendered text, when every interpolated value is itself a literal
    string of the pattern (`"{who}ary"` with `who = "advers"` is the literal text
    `adversary`); the linter gives each text it can enumerate (at most
    `MAX_JOINED_TEXTS`)."""
    return alg.join([*values, *(alg.text(piece, where) for piece in pieces if piece.strip()),
                     *(alg.text(text, where) for text in joined)])


def member(alg: Algebra[L], container: L, element: L | None) -> L:
    """`x.k`: the element's own label. Where the element is not known (an analysis that
    does not track it, `.length`), the container's, which includes every element's."""
    return container if element is None else element


def length(alg: Algebra[L], container: L) -> L:
    """`x.length`: the container's whole label, chains included (the count depends on every
    element)."""
    return container


def stored_key(alg: Algebra[L], container: L, key: L) -> L:
    """`x[k] = v` and `x.k = v`: the object also carries the key, in both modes (and
    `xs[i] = v` the index: which item changed tells it). Keys are
    data: they reach a model as field names of an input's JSON or of a `schema:`. A key
    computed at run time carries its value's label; a key written in the pattern is its
    literal text."""
    return alg.join([container, key])


def service(alg: Algebra[L], slot: str, where: Span) -> L:
    """A slot as a value (`let w = s`, a list of services): rendered into a message it
    reads `<service NAME>`, which is the pattern's own literal text naming the slot."""
    return alg.text(f"<service {slot}>", where)


def index(alg: Algebra[L], container: L, element: L | None, key: L, strict: bool) -> L:
    """`x[i]`: as a member; in strict mode the index's label too (a selection by `i`)."""
    chosen = member(alg, container, element)
    return alg.join([chosen, key]) if strict else chosen


def container(alg: Algebra[L], items: Iterable[L], keys: Sequence[tuple[str, Span]]) -> L:
    """An array or object literal: the union of its items; an object's keys are literal text
    (a key such as `adversary_notes` is the pattern's own text wherever the object goes)."""
    return alg.join([*items, *(alg.text(key, where) for key, where in keys)])


def predicate(alg: Algebra[L], operands: Sequence[L]) -> L:
    """A comparison or test used as a value: its operands' labels (an explicit flow)."""
    return alg.join(operands)


def call_output(alg: Algebra[L], slot: str, given: L, where: Span, branch: BranchPath = (),
                index: int = NO_INDEX) -> L:
    """A call's result: the called slot only (a call is a boundary), made in the branch at
    `branch` by the service at `index`; transitively also everything the call was given.
    A failed call's error carries the same label."""
    return alg.output(slot, given, where, branch, index)


def shuffled(alg: Algebra[L], items: L, where: Span) -> tuple[L, L]:
    """`shuffle(xs)`: the items keep their labels, but the outputs of a list-valued slot in
    them no longer tell which service made them (their index is `SHUFFLED`: the order
    is random); the key (the permutation) carries `SEALED` and nothing else."""
    return alg.unordered(items, where), alg.sealed(where)


def revealed_orders(chains: Chains, services: Iterable[str], blind: Iterable[str]) -> list[str]:
    """Of the list-valued slots `blind` (the sources a judge is blind to), those a list is in
    the binding order of: it holds their services (`for s in S`), or their outputs in
    binding order (chains whose index reveals the source)."""
    held = set(services)
    return [slot for slot in sorted(set(blind)) if slot in held or any(
        made == slot and reveals_source(index) for made, _, index, _ in chains)]


def loop_counter(alg: Algebra[L], revealed: Iterable[str], where: Span) -> L:
    """`for x, i in xs` (i): a counter carries nothing, except the position in the binding
    order of each list-valued slot `xs` is in that order of (`revealed_orders`): `i` tells
    which service of S made the item, so a judge blind to S's source must not get it."""
    return alg.join([alg.order(slot, where) for slot in revealed])


def reveals_source(index: int) -> bool:
    """Whether an output made by the service at `index` of a list-valued slot still tells
    which service made it (by its position in binding order, or its index): any index
    but a single service's and a shuffled one's."""
    return index not in (NO_INDEX, SHUFFLED)


def predecessor(produced: int, consumer: int) -> bool:
    """Whether an output of `S[produced]` is the predecessor's output for a call of
    `S[consumer]` (`S[0]` has none)."""
    return consumer >= 1 and produced == consumer - 1


def own_chain(produced: BranchPath, consumer: BranchPath) -> bool:
    """Whether an output made at `produced` is in the chain of a call at `consumer`: the
    same branch, or one the consumer runs inside (never a sibling's, never across a join)."""
    return consumer[: len(produced)] == produced


def same_round(produced: BranchPath, consumer: BranchPath) -> bool:
    """Whether an output made at `produced` was made in a round a call at `consumer` runs
    inside: one execution of a parallel construct (a branch element is `NODE@SERIAL#POS` at
    run time, `NODE` in the linter) both paths pass through, where the output has not left
    it through its join (the linter marks such an element `NODE*`; at run time a later
    execution has another serial). Outputs collected at an earlier join are not."""
    rounds = {element.split("#", 1)[0] for element in consumer}
    return any(not element.endswith("*") and element.split("#", 1)[0] in rounds
               for element in produced)


def error_object(alg: Algebra[L], error: L) -> L:
    """`catch as err`, or a failed branch under `on-fail: "continue"`: every field
    (`message`, `kind`, `slot`, `line`) carries the error's label."""
    return error


def thrown(alg: Algebra[L], value: L) -> L:
    """`throw EXPR`: the error carries the thrown value's label, literal text included."""
    return value


def bind(alg: Algebra[L], value: L, pc: L, strict: bool) -> L:
    """A value bound (`let`, assignment, `record`, loop and catch variables, block
    parameters, a loop's iteration value, a `return`): in strict mode it also carries
    the program counter, the labels of the conditions it was bound under."""
    return alg.join([value, pc]) if strict else value


def under(alg: Algebra[L], pc: L, condition: L, strict: bool) -> L:
    """The program counter inside a body that runs depending on `condition` (an `if`
    arm, a loop, a `choice` option, a `catch`): in strict mode it adds the condition."""
    return alg.join([pc, condition]) if strict else pc


def filtered(alg: Algebra[L], pc: L, decided: L, strict: bool) -> L:
    """`| filter:`: the kept items keep their own labels (normal mode adds nothing to the
    list); in strict mode the list also carries the decisions (the bodies' values), which
    chose what is kept, and the program counter."""
    return alg.join([pc, decided]) if strict else alg.nothing()


def defined(alg: Algebra[L], pc: L, strict: bool) -> L:
    """A `block` definition made under a condition (an `if` arm, a `choice` option, two
    arms defining the same name): which body a later `do` runs depends on it, so in strict
    mode the block runs under the pc it was defined under, and its value carries it."""
    return pc if strict else alg.nothing()


def raced(alg: Algebra[L], failures: L, strict: bool) -> L:
    """A parallel statement's value (`parallel for`, `parallel:`, a pipeline's `pmap`) when
    branches may fail without failing it (`"first"`, `"any"`, `on-fail: "ignore"` or
    `"continue"`): in strict mode it also carries the failed branches' errors, because
    which branch won, or which values are kept, depends on which failed."""
    return failures if strict else alg.nothing()


def value_error(alg: Algebra[L], operands: Sequence[L]) -> L:
    """A run-time error about values (an index out of range, an operand or a built-in's
    argument of the wrong type, a `matches` pattern RE2 refuses, a map slot's missing
    entry): its message describes them (the index, the list's length, a type, the pattern,
    the key) and whether it is raised depends on them, so the error, and a `catch as err`
    of it, carries their labels, in both modes. The linter takes the operands of every
    expression that may raise one (`prose.check.flow`); the run time those of the one that
    did (`prose.runtime.values.describing`)."""
    return alg.join(operands)


def remembered(alg: Algebra[L], memory: L, given: L, output: L) -> L:
    """A `persist` agent's memory after one of its sessions: what it held, plus what the
    session was given and what it answered. `resume: agent` sends the memory again (its
    `memory` input), so its answer carries all of it transitively."""
    return alg.join([memory, given, output])


def default_texts(default: Any) -> tuple[str, ...]:
    """The strings inside a config default: the pattern's own literal text, sent wherever
    the key's value goes when no run overrides it."""
    if isinstance(default, str):
        return (default,) if default.strip() else ()
    if isinstance(default, Mapping):
        return tuple(text for key, item in default.items() for text in (str(key), *default_texts(item)))
    if isinstance(default, list | tuple):
        return tuple(text for item in default for text in default_texts(item))
    return ()


def exits_early(statement: n.If | n.Choice | tuple[n.Stmt, ...]) -> bool:
    """Whether an arm of an `if` or `choice` (or a `catch` body) may end its body early
    (`break`, `continue`, `return`, `throw`): then, in strict mode, the statements after
    it in the body run only because that arm did not, so they run under its condition
    too."""
    return contains(statement, (n.Break, n.Continue, n.Return, n.Throw))


def may_throw(statement: n.If | n.Choice | tuple[n.Stmt, ...]) -> bool:
    """Whether an arm may `throw`: a throw leaves every enclosing body up to the `try`
    that catches it (a block's body included), so in strict mode the raise of
    `exits_early` lasts until that `try` ends; after it, only if its `catch` may itself
    leave early (then the rest runs only because nothing was caught)."""
    return contains(statement, n.Throw)


def strict_requested(frontmatter: Mapping[str, Any]) -> bool:
    """Whether a pattern asks for strict mode (`flow: strict` in its frontmatter)."""
    return str(frontmatter.get("flow", "")).strip().lower() in STRICT_VALUES


# --- the reference table -----------------------------------------------------------

# (construct, what the value carries in normal mode, what strict mode adds)
FLOW_TABLE: tuple[tuple[str, str, str], ...] = (
    ("parameter, config key", "nothing (a config default's string is the pattern's literal text)", ""),
    ("string literal", "its text as literal text", ""),
    ('interpolation `"a {x}"`', "the interpolated values' labels, plus the pieces as literal text", ""),
    ("array / object literal", "the union of the items; object keys as literal text", ""),
    ("`x.k`, `x.length`", "the element's own label (`.length`: the container's, every "
     "element's chains included)", ""),
    ("`x[i]`", "the element's own label", "the index's label"),
    ("comparison, `is` test as a value", "the operands' labels", ""),
    ("operator `+ - * / %`, `in`, `contains`, `starts with`, `matches`, slice `xs[a:b]`, "
     "built-in `f(...)`", "the union of every operand's label, elements included, on the "
     "result and on every part of it (`prose.lang.builtins.result`)", ""),
    ("`call S` (result)", "`S`; transitively also everything the call was given", ""),
    ("a failed call's error", "as the call's result", ""),
    ("`throw EXPR`", "the thrown value's label", ""),
    ("`catch as err` (every field)", "every error the `try` body may raise: failed calls, "
     "thrown values, errors of inner `try`s without `catch`", "the errors' labels (a `catch` "
     "taken)"),
    ("`let`, `x = v`, `x.k = v`", "the value's label (`x.k = v` keeps the rest of `x`)",
     "the program counter"),
    ("object keys (`x[k] = v`, `x.k = v`), list positions (`xs[i] = v`)", "the object also "
     "carries the key: `k`'s label, or a key written in the pattern as literal text (keys reach "
     "a model as field names); the list carries `i`'s label (which item changed tells it)", ""),
    ("`record v in xs`, `append v to xs`", "the list's label and the value's", "the program counter"),
    ("`let { a, b } = v`", "each name the member's label", "the program counter"),
    ("`for x in xs` (x)", "an element's label", "`xs`'s label (the count) in the body; a "
     "list of services (`for s in S`) is their names, `<service NAME>`"),
    ("`repeat N`, `loop ... (max: N)`", "the counter carries nothing", "`N`'s label and the "
     "condition's in the body"),
    ("`for x, i in xs` (i)", "nothing, except where a judge is blind to the source of a "
     "list-valued slot S and `xs` is in S's binding order (S's services, or S's outputs not "
     "shuffled): then S's position marker (`prose.lang.flows.loop_counter`)", "as `for x in xs`"),
    ("loop / `parallel for` in value position", "the union of the iterations' values", "the program counter"),
    ("a race or a tolerant `parallel` (`\"first\"`, `\"any\"`, `on-fail` other than fail-fast)",
     "the branches that succeeded", "the failed branches' errors (which won, or which are kept, depends on them)"),
    ("a run-time error about values (an index out of range; an operand, a built-in's "
     "argument, a `for` list, a count or a destructured value of the wrong type; a `matches` "
     "pattern RE2 refuses; a map slot with no such entry)",
     "the labels of the values it is about (its message describes them; that it is raised "
     "depends on them)", ""),
    ("`do block(args)` (parameters, value)", "each parameter its argument's label; the value "
     "the block's `return` or last statement", "the program counter"),
    ("`block` definitions", "any definition that may run (also inside `if`) is followed",
     "a `do` runs the block under the pc it was defined under (which definition runs)"),
    ("`shuffle(xs)` (`.items`, `.key`)", "`.items`: the list's labels, with every output of a "
     "list-valued slot no longer telling which service made it; `.key`: the sealed key "
     "(no call may receive it)", ""),
    ("parallel branch (each `A` sees only its own chain)", "a call output also records the "
     "branch it was made in; collected at a join it is no longer the consumer's own", ""),
    ("`for s in S` (each of `S` sees only its predecessor's output)", "a call output also "
     "records which service of the list made it", ""),
    ("a service value (`let w = s`, a block parameter)", "the slots it may denote: a call "
     "through it is a call of each; through lists, loops, races and block returns too", ""),
    ("a service rendered into a message (`{w}`, a list of services as an input)", "the text "
     "`<service NAME>`, the pattern's literal text naming the slot", ""),
    ("`parallel:` branch `let`s", "published at the join, also when nested in `if`/`for`/`try`", ""),
    ('`on-fail: "continue"`', "a failed branch's value is its error object", ""),
    ("`if` / `elif` / `else`, `choice`", "nothing", "the conditions' labels (a judge: the "
     "mentioned values') in the arms, and in the rest of the body when an arm may leave it "
     "early (`break`, `continue`, `return`, `throw`)"),
    ("nested pattern call", "as a call of the slot it is bound to; its errors too", ""),
    ('`session "p"`, `session: A`, `session l: A`', "as a call of a slot named `A` (`session` for "
     "an inline prompt); the prompt is the call's `prompt`", ""),
    ("`resume: A` (result)", "as `session: A`, given also `A`'s memory: every earlier session of "
     "`A`'s inputs and answers (its `memory` input)", ""),
    ("`| map:` / `| pmap:` (result)", "the union of the bodies' values (`pmap`: collected at a "
     "join, like `parallel for`)", "the list's label in the bodies"),
    ("`| filter:` (result)", "the kept items' own labels", "the bodies' values (the decisions) "
     "and the list's label"),
    ("`| reduce(acc, x):` (result)", "the last body value; `acc` carries every earlier one and "
     "the first item", "the list's label in the bodies"),
    ("`let x = do:` / `do f(args)` as a value", "as `do` (the block's `return` or last "
     "statement)", "the program counter"),
    ("`loop for each x in xs (max: N)`", "as `for x in xs`", "`xs`'s and `N`'s labels in the body"),
    ("channels into a model", "each input (its name as literal text), `prompt`, `schema` "
     "(keys and type words), the slot's `ensures`, the service's role prompt", "`prompt` "
     "of a `sees only` slot may carry no slot output"),
)


def markdown_table() -> str:
    """FLOW_TABLE as the markdown table in docs/language.md."""
    rows = ["| construct or channel | what the value carries (normal mode) | strict mode adds |",
            "|---|---|---|"]
    rows += [f"| {construct} | {normal} | {strict or '—'} |" for construct, normal, strict in FLOW_TABLE]
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
