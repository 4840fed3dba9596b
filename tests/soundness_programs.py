"""Random, runnable pattern programs for the soundness property (tests/test_soundness.py).

`patterns()` is a hypothesis strategy of `GeneratedPattern`s: a complete
`*.prose.md` text (frontmatter, title, summary, `### Slots` without
`requires:`, `### Config`, `### Invariants` in the checkable forms of
LANGUAGE.md 5, `### Parameters`, `### Returns`, `### Delegation`), the
invariants it declares, and a script for the scripted model.

The programs cover the whole language that runs deterministically: `let`,
reassignment, member assignment, `record`/`append`, object and array
literals, member and index reads, interpolation, `if`/`elif`/`else` on
deterministic predicates, `for`, `repeat`, `loop until`, `parallel:` blocks
(branches that are `let`s, or `if`/`for` holding `let`s), `parallel for`,
loops in value position, `try`/`catch as`/`finally`, `throw`, blocks defined
at the top level and inside `if`, `do`, anonymous `do:`, `do` in value
position (`let v = do:`, `let v = do blk(...)`), service variables
(`let w = proposer`, `w = adversary`), calls through block parameters,
pipelines (`| map:`, `| pmap:`, `| filter:`, `| reduce(acc, x):`),
`loop for each ... (max: N)`, and sessions of a `persist` agent
(`session: scout`, `resume: scout`, an inline `session "..."`), whose
replies carry markers as a slot's do (`AGENTS`).
No condition is discretion text: no judge is ever asked.

The generator tracks a coarse kind for every name (an object shaped like a
scripted reply, a string, a list of strings or objects, a number, a boolean,
a service, a caught error, anything) so that most programs run to the end.
Some still stop with a run-time error (a name bound only in a branch not
taken, a `throw` nobody catches, a scripted call failure): that is fine, the
calls sent before the stop are still checked.

Every scripted reply is an object holding a marker that names its slot and
its position, `{"text": "MARK-adversary-3", "flaws": ["MARK-adversary-3f"],
"ok": true, "n": 3}`, and some replies are failures (`{"$error":
"MARK-adversary-4e"}`), so the test can see in a sent call which slots'
outputs it carries.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

PATTERN_NAME = "sparring"
# The slots, their `ensures:` lines and the role word (first noun) of each.
SLOTS: dict[str, str] = {
    "proposer": "proposal text answering the brief",
    "adversary": "attack listing flaws",
    "summariser": "summary of a text",
}
ROLES: dict[str, str] = {"proposer": "proposal", "adversary": "attack", "summariser": "summary"}
# The list-valued slot a `blind` invariant is about (declared only in patterns with one),
# bound to SERVICES services by the script.
SOURCES = "samplers"
SERVICES = 2
# Session names: the agent every program defines, and `session` for inline prompts.
AGENTS = ("scout", "session")
AGENT_DEFINITION = ["agent scout:", "  persist: true", '  prompt: "Keep short notes."']
REPLIES_PER_SLOT = 150
MARKER_PREFIX = "MARK"

# Words for string literals: neutral ones, and the names, roles and pattern name
# that an `is unaware of` invariant forbids in literal text.
WORDS = ("please", "consider", "the", "notes", "draft", "check", "brief", "again",
         "adversary", "attack", "proposer", "proposal", "summariser", "summary", PATTERN_NAME,
         r"\{attack\}")  # escaped braces: literal text, not an interpolation
INPUT_NAMES = ("text", "notes", "draft", "context", "material", "attack_notes")
OBJECT_KEYS = ("text", "flaws", "ok", "n")  # the shape of a scripted reply
STYLES = ("plain", "short notes", "like an adversary")  # defaults of the `style` config key
# The list a `grows only after` invariant is about: a program with that form binds it first.
GROWN = "progress"
# Words a `never told` invariant keeps from a slot: words of string literals, and input
# names the calls write (`notes`, `draft`), none of them in a slot's `ensures`.
TOLD_WORDS = ("please", "consider", "again", "check", "notes", "draft")


# --- invariants ------------------------------------------------------------------------


@dataclass(frozen=True)
class Invariant:
    """One checkable invariant (LANGUAGE.md 5).

    `form` is never, indirect, unaware, independent (about slots `a` and `b`),
    only (`a` sees only `inputs`), chain (each `a` sees only its own chain), round
    (each `a` never sees its own round), one of the control-flow forms (runs_if,
    at_most_one, once, same_every, grows: `progress` grows only after `a` returns `ok`,
    runs_after: `a` runs only after `b` returns `ok`, same_got: `a` gets the same
    `text` `b` got),
    a result form (carries_only: `a` and `inputs`; never_carries: `a`) or never_told
    (`a` is never told the word `b`). See `bullet` for each spelling.
    """

    form: str
    a: str
    b: str = ""  # the other slot; for `never_told`, the word
    inputs: tuple[str, ...] = ()  # for `carries_only`, the other slots the result may carry
    per_iteration: bool = False  # `at most one of ... runs per iteration`

    def bullet(self) -> str:
        listed = ", ".join(f"`{name}`" for name in self.inputs)
        carried = ", ".join(f"`{name}`" for name in (self.a, *self.inputs))
        return {
            "never": f"- `{self.a}` never sees `{self.b}`",
            "indirect": f"- `{self.a}` never sees `{self.b}`, even indirectly",
            "unaware": f"- `{self.a}` is unaware of `{self.b}`",
            "independent": f"- `{self.a}` and `{self.b}` are independent",
            # the shorthand for `are independent` between every two of them
            "pairwise": f"- {carried} are pairwise independent",
            "only": f"- `{self.a}` sees only {listed}",
            "chain": f"- each `{self.a}` sees only its own chain",
            "round": f"- each `{self.a}` never sees its own round",
            "no_call": f"- no call receives `{self.a}`",
            # a condition no program binds: every call of `a` is stopped at run time, so
            # the linter must find every place `a` may be called (prose/check/dominance.py)
            "runs_if": f"- `{self.a}` runs only if `gate.ok`",
            "at_most_one": f"- at most one of `{self.a}`, `{self.b}` runs"
                           + (" per iteration" if self.per_iteration else ""),
            "once": f"- `{self.a}` runs at most once"
                    + (" per iteration" if self.per_iteration else ""),
            # every call after the first must get the `text` the one before got (PH632)
            "same_every": f"- every call of `{self.a}` gets the same `text`",
            # the latest call of `b` before each call of `a` returned `ok` == true (PH631)
            "runs_after": f"- `{self.a}` runs only after `{self.b}` returns `ok` == true",
            # each call of `a` gets the `text` the latest call of `b` got (PH632)
            "same_got": f"- `{self.a}` gets the same `text` `{self.b}` got",
            # the list every program with this form starts with (`GROWN`), grown only after
            # the latest call of `a` returned `ok` == true (PH643; R060 before the growth)
            "grows": f"- `{GROWN}` grows only after `{self.a}` returns `ok` == true",
            # what the program returns under `result` (PH642 at the return; R061)
            "carries_only": f"- the returned `result` carries only {carried}",
            "never_carries": f"- the returned `result` never carries `{self.a}`",
            # a literal word never sent to `a` (PH606; the run-time policy stops the call)
            "never_told": f"- `{self.a}` is never told `{self.b}`",
            # nothing telling which service of SOURCES made an output reaches `a`: an output
            # in binding order or picked by its index, a loop counter over them (PH634)
            "blind": f"- `{self.a}` is blind to the source of `{SOURCES}`",
        }[self.form]

    def rules(self) -> Iterator[tuple[str, str, str]]:
        """(viewer, source, how): `viewer` must not get `source`'s output `how`.

        `how` is `direct` (a copy of the output), `transitive` (anything computed
        from it, through other calls too), `words` (literal text naming it) or `told`
        (literal text holding the word `source`, for `never_told`).
        The `only`, `chain` and `round` forms have no rule here: the test checks them
        through the run-time policy alone (a stopped call must be flagged), and so the
        control-flow and result forms (a stopped growth, a failed result must be flagged).
        """
        if self.form in ("only", "chain", "round", "runs_if", "at_most_one", "once",
                         "same_every", "grows", "runs_after", "same_got", "carries_only",
                         "never_carries", "blind"):
            return
        if self.form == "never_told":
            yield self.a, self.b, "told"
            return
        if self.form == "no_call":
            for viewer in SLOTS:
                yield viewer, self.a, "direct"
            return
        if self.form == "independent":
            yield self.a, self.b, "direct"
            yield self.b, self.a, "direct"
            return
        if self.form == "pairwise":
            for viewer in (self.a, *self.inputs):
                for source in (self.a, *self.inputs):
                    if viewer != source:
                        yield viewer, source, "direct"
            return
        yield self.a, self.b, "transitive" if self.form == "indirect" else "direct"
        if self.form == "unaware":
            yield self.a, self.b, "words"


def forbidden_words(source: str) -> tuple[str, ...]:
    """What literal text sent to a slot unaware of `source` must not contain."""
    return (source, ROLES[source], PATTERN_NAME)


# --- the generated pattern ---------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedPattern:
    text: str = field(repr=False)
    program: str
    invariants: tuple[Invariant, ...]
    script: dict[str, Any] = field(repr=False)
    program_start: int = field(repr=False)  # the markdown line of the program's first line
    constructs: frozenset[str] = field(repr=False)  # what the program uses, for statistics
    strict: bool = False  # `flow: strict` in the frontmatter
    style: str = STYLES[0]  # the default of the `style` config key

    def __repr__(self) -> str:
        bullets = "\n".join(invariant.bullet() for invariant in self.invariants)
        bullets += "\nflow: strict" * self.strict + f"\nstyle default: {self.style!r}"
        return f"GeneratedPattern(\n{bullets}\n\n{self.program}\n\n{describe_failures(self.script)})"

    def rebuild(self, program: str, invariants: Sequence[Invariant] | None = None,
                script: dict[str, Any] | None = None) -> GeneratedPattern:
        """The same pattern around another program (for minimising a counterexample)."""
        chosen = tuple(self.invariants if invariants is None else invariants)
        text, start = pattern_text(program, chosen, self.strict, self.style)
        return GeneratedPattern(text, program, chosen, self.script if script is None else script,
                                start, self.constructs, self.strict, self.style)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """What hypothesis prints for a failing example: the program, not the script."""
        printer.text(repr(self))

    def numbered(self) -> str:
        """The invariants, and the program with its markdown line numbers, for messages."""
        bullets = "\n".join(f"    {invariant.bullet()}" for invariant in self.invariants)
        bullets += f"\n    (`style` defaults to {self.style!r}{'; flow: strict' * self.strict})"
        program = "\n".join(f"{number:4} | {line}" for number, line in
                            enumerate(self.program.splitlines(), start=self.program_start))
        return f"### Invariants\n{bullets}\n### Delegation (markdown line numbers)\n{program}"


def pattern_text(program: str, invariants: Sequence[Invariant], strict: bool = False,
                 style: str = STYLES[0]) -> tuple[str, int]:
    """A complete pattern file around `program`; also the line the program starts on.

    `strict` sets `flow: strict` (implicit flows count too); `style` is the
    default of a string config key (a config default is the pattern's own text).
    """
    slots = "\n".join(f"- `{name}`\n  - ensures: {ensures}" for name, ensures in SLOTS.items())
    if any(invariant.form == "blind" for invariant in invariants):
        slots += f"\n- `{SOURCES}` (list)\n  - ensures: an answer to the brief"
    bullets = "\n".join(invariant.bullet() for invariant in invariants)
    head = textwrap.dedent(
        """\
        ---
        name: {name}
        kind: pattern
        version: 0.1.0{flow}
        ---

        # Sparring

        A generated pattern for the soundness property.

        ### Slots

        {slots}

        ### Config

        - `rounds` (integer, default: 2): how many rounds to run
        - `style` (string, default: "{style}"): how to write

        ### Invariants

        {bullets}
        - Every answer is polite.

        ### Parameters

        - `task_brief`: string -- what the proposer answers

        ### Returns

        - `result`: what the pattern produced

        ### Delegation

        ```prose
        """
    ).format(name=PATTERN_NAME, slots="{slots}", bullets="{bullets}", style=style,
             flow="\nflow: strict" if strict else "")
    head = head.replace("{slots}", slots).replace("{bullets}", bullets)
    start = head.count("\n") + 1
    return f"{head}{program}\n```\n", start


def reply(slot: str, index: int, ok: bool) -> dict[str, Any]:
    mark = f"{MARKER_PREFIX}-{slot}-{index}"
    return {"text": mark, "flaws": [f"{mark}f"], "ok": ok, "n": index}


def script_for(ok_cycle: Sequence[bool], failures: dict[str, frozenset[int]]) -> dict[str, Any]:
    """Replies for every slot: markers everywhere, `ok` cycling, some failures."""
    slots: dict[str, list[Any]] = {}
    for slot in (*SLOTS, *AGENTS):
        replies: list[Any] = []
        for index in range(REPLIES_PER_SLOT):
            if index in failures.get(slot, frozenset()):
                replies.append({"$error": f"{MARKER_PREFIX}-{slot}-{index}e"})
            else:
                replies.append(reply(slot, index, ok_cycle[index % len(ok_cycle)]))
        slots[slot] = replies
    # The services of the list-valued slot: one queue each (unused unless a pattern
    # declares it), their replies marked like a slot's.
    services = [[reply(SOURCES, index, ok_cycle[index % len(ok_cycle)])
                 for index in range(REPLIES_PER_SLOT)] for _ in range(SERVICES)]
    return {"slots": {**slots, SOURCES: services}}


# Operators, slices and built-ins the generator writes, by the kind of value they give:
# (weight, make) where make(sub) gives (construct, text); `sub(kind, nonempty)` draws an
# operand. Every one is type-correct, so it runs (the linter's rule and the run time's
# are compared, not their type errors).
_Make = Callable[[Callable[..., str]], tuple[str, "str | None"]]
_OPERAND = re.compile(r"\{([a-z:]+)(!?)\}")


def _made(construct: str, template: str) -> tuple[int, _Make]:
    """One entry: `template` with each `{kind}` an operand drawn of that kind (`{kind!}`:
    a non-empty one), left to right."""
    def make(sub: Callable[..., str]) -> tuple[str, str | None]:
        return construct, _OPERAND.sub(lambda m: sub(m.group(1), bool(m.group(2))), template)
    return 1, make

EXPRESSIONS: dict[str, list[tuple[int, _Make]]] = {
    "str": [
        _made("operator", "{str} + {str}"),
        _made("slice", "{str}[0:6]"),
        _made("built-in", "join({list:str}, \", \")"),
        _made("built-in", "lower(trim({str}))"),
        _made("built-in", "upper({str})"),
        _made("built-in", "mode({list:str!})"),
        _made("built-in", "digest({list:obj})"),
    ],
    "num": [
        _made("operator", "{num} * 2 + {num} % 3"),
        _made("built-in", "length({list:obj})"),
        _made("built-in", "count({list:str}, {str})"),
        _made("built-in", "sum([{num}, {num}])"),
        _made("built-in", "max({num}, {num})"),
        _made("built-in", "sum(range({num}))"),
    ],
    "bool": [
        _made("comparison as a value", "{str} == {str}"),
        _made("comparison as a value", "{str} in {list:str}"),
        _made("comparison as a value", "{str} contains \"f\" or {str} starts with \"m\""),
        _made("comparison as a value", "{str} matches \"f$\""),
        _made("comparison as a value", "not {num} + 1 > 2"),
    ],
    "list:str": [
        _made("operator", "{list:str} + {list:str}"),
        _made("slice", "{list:str}[1:]"),
        _made("built-in", "sort(unique({list:str}))"),
        _made("built-in", "split({str}, \" \")"),
        _made("built-in", "flatten([{list:str}, {list:str}])"),
        _made("built-in", "values({obj})[1] + keys({obj})"),
        _made("built-in", "zip({list:str!}, {list:str!})[0]"),
    ],
    "list:obj": [
        _made("operator", "{list:obj} + {list:obj}"),
        _made("built-in", "top({list:obj}, 1, by: \"n\")"),
        _made("built-in", "sort({list:obj}, by: \"text\", descending: true)"),
    ],
    "obj": [
        _made("built-in", "max({list:obj!}, by: \"n\")"),
        _made("built-in", "min({list:obj!}, by: \"n\")"),
    ],
}


# --- scope tracking --------------------------------------------------------------------

# Kinds: obj (shaped like a reply), str, num, bool, list:str, list:obj, list:any,
# svc (a service value), err (a caught error), any (anything but a service).
# A list of services (list:svc) is only ever written in a `for` header.
VALUE_KINDS = ("obj", "str", "list:str", "list:obj", "num", "bool")


@dataclass(frozen=True)
class Var:
    kind: str
    mutable: bool = True
    maybe: bool = False  # may be unbound where it is read
    nonempty: bool = False  # a list known to have an element


@dataclass
class Block:
    params: tuple[str, ...]  # the kind of each parameter
    maybe: bool = False  # defined inside an `if`


@dataclass
class Ctx:
    """Where the statement being generated stands."""

    depth: int = 0
    frozen: frozenset[str] = frozenset()  # outer names a branch or block must not change
    in_loop: bool = False  # `break`/`continue` allowed
    can_throw: bool = False  # inside `try`, or a parallel branch whose failure is kept
    in_parallel: bool = False
    top: bool = False

    def inner(self, **changes: Any) -> Ctx:
        return replace(self, depth=self.depth + 1, top=False, **changes)


Scope = dict[str, Var]
Lines = list[str]


def indent(lines: Lines) -> Lines:
    return ["  " + line for line in lines]


@dataclass
class Generator:
    """Draws one program. Choices shrink towards the first option, the simplest."""

    draw: Callable[[st.SearchStrategy[Any]], Any]
    viewers: frozenset[str] = frozenset()  # slots an invariant keeps something from
    budget: int = 24  # statements left
    counters: dict[str, int] = field(default_factory=dict)
    blocks: dict[str, Block] = field(default_factory=dict)
    constructs: set[str] = field(default_factory=set)
    first: bool = False  # the last loop generated was a `"first"` race (its value is one item)
    approver: str | None = None  # the slot of a `grows only after` invariant (GROWN exists)
    judge: str | None = None  # the slot of a `blind` invariant (SOURCES is declared)
    # (form, slot, approver) of each `runs only after` and `gets the same ... got` invariant
    gated: tuple[tuple[str, str, str], ...] = ()

    # --- drawing helpers ------------------------------------------------------------

    def pick(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(list(options)))

    def weighted(self, options: Sequence[tuple[int, T]]) -> T:
        total = sum(weight for weight, _ in options)
        roll = self.draw(st.integers(0, total - 1))
        for weight, option in options:
            if roll < weight:
                return option
            roll -= weight
        raise AssertionError("unreachable")

    def flip(self) -> bool:
        return bool(self.draw(st.booleans()))

    def slot(self) -> str:
        """A slot for a service value; slots that an invariant protects are likelier."""
        return self.weighted([(3 if name in self.viewers else 1, name) for name in SLOTS])

    def fresh(self, prefix: str) -> str:
        self.counters[prefix] = self.counters.get(prefix, 0) + 1
        return f"{prefix}{self.counters[prefix]}"

    def names(self, scope: Scope, *kinds: str, sure: bool = False,
               assignable: Ctx | None = None) -> list[str]:
        """Names in scope of these kinds (all value kinds for `any`)."""
        wanted = set(kinds)
        if "any" in wanted:
            wanted |= {*VALUE_KINDS, "list:any", "err", "any"}
        out = []
        for name, var in scope.items():
            if var.kind not in wanted or (sure and var.maybe):
                continue
            if assignable is not None and (not var.mutable or name in assignable.frozen):
                continue
            out.append(name)
        return out

    def some_name(self, scope: Scope, *kinds: str) -> str | None:
        """A name of these kinds, rarely one that may be unbound."""
        sure = self.names(scope, *kinds, sure=True)
        maybe = [name for name in self.names(scope, *kinds) if name not in sure]
        if maybe and self.weighted([(12, False), (1, True)] if sure else [(7, False), (1, True)]):
            return self.recent(maybe)
        return self.recent(sure) if sure else None

    def recent(self, names: list[str]) -> str:
        """One of `names` (in binding order), the last bound ones more likely: values flow on."""
        return self.weighted([(3 if position >= len(names) - 3 else 1, name)
                              for position, name in enumerate(names)])

    # --- expressions ------------------------------------------------------------------

    def expr(self, kind: str, scope: Scope, nonempty: bool = False, depth: int = 0) -> str:
        """An expression of `kind` (`nonempty` for lists that are indexed later)."""
        if kind == "any":
            kind = self.weighted([(6, "var"), (4, "obj"), (3, "str"), (1, "list:str"),
                                  (1, "list:obj"), (1, "num"), (1, "bool")])
            if kind == "var":
                name = self.some_name(scope, "any")
                return name if name is not None else "task_brief"
        if kind == "svc":
            name = self.some_name(scope, "svc") if self.flip() else None
            return name if name is not None else self.slot()
        def var() -> str | None:
            return self.some_name(scope, kind)

        def obj() -> str | None:
            return self.some_name(scope, "obj")

        def inner(of: str) -> Callable[[], str]:
            return lambda: self.expr(of, scope, depth=depth + 1)

        literal = 0 if depth >= 2 else 2  # no deeper nesting of literals
        options: list[tuple[int, Callable[[], str | None]]]
        if kind == "obj":
            options = [(5, var), (literal, lambda: self.object_literal(scope, depth)),
                       (1, lambda: self._first(scope, "list:obj"))]
        elif kind == "str":
            options = [(2, lambda: "task_brief"), (3, lambda: self._member(obj(), "text")),
                       (3, lambda: self.string(scope)), (1, var),
                       (1, lambda: self._member(obj(), "flaws[0]")),
                       (1, lambda: self._member(self.some_name(scope, "err"), "message"))]
        elif kind in ("list:str", "list:obj"):
            options = [(3 if kind == "list:str" else 0, lambda: self._member(obj(), "flaws")),
                       (literal, lambda: self.array(inner(kind.split(":")[1]))),
                       (2, lambda: self._list_var(scope, kind, nonempty)),
                       (0 if nonempty else 1, lambda: "[]"),
                       # the same items in a random order (`prose.lang.flows.shuffled`)
                       (1 if depth < 2 else 0, lambda: self._shuffled(scope, kind, nonempty))]
        elif kind == "num":
            options = [(2, lambda: str(self.draw(st.integers(0, 3)))),
                       (2, lambda: self._member(obj(), "n")), (1, var),
                       # a shuffle's sealed key: no call may receive anything made from it
                       (1 if depth < 2 else 0, lambda: self._member(
                           self._shuffled(scope, "list:str", False, ""), "key.length")),
                       (1, lambda: self._member(self._list_var(scope, "list:str", False)
                                                or self._list_var(scope, "list:obj", False),
                                                "length"))]
        elif kind == "bool":
            options = [(2, lambda: self.pick(["true", "false"])),
                       (3, lambda: self._member(obj(), "ok")), (1, var)]
        else:
            raise AssertionError(kind)
        if depth < 2 and not nonempty:  # operators, slices, built-ins (prose.lang.builtins)
            options += [(weight, self._expression(kind, scope, depth, make))
                        for weight, make in EXPRESSIONS.get(kind, ())]
        # Draw among the options; one that finds nothing in scope gives way to the others.
        candidates = [option for weight, option in options if weight > 0]
        weights = [weight for weight, _ in options if weight > 0]
        while candidates:
            index = self.weighted(list(zip(weights, range(len(candidates)), strict=True)))
            text = candidates.pop(index)()
            weights.pop(index)
            if text is not None:
                return text
        return self._fallback(kind)

    def _expression(self, kind: str, scope: Scope, depth: int,
                    make: Callable[[Callable[..., str]], tuple[str, str | None]]
                    ) -> Callable[[], str | None]:
        """An option of `expr` that writes an operator, slice or built-in of `kind`; `make`
        is given `sub(kind, nonempty=False)` and gives (construct, text or None)."""
        def option() -> str | None:
            def sub(of: str, nonempty: bool = False) -> str:
                return self.expr(of, scope, nonempty=nonempty, depth=depth + 1)
            construct, text = make(sub)
            if text is not None:
                self.constructs.add(construct)
            return text
        return option

    @staticmethod
    def _fallback(kind: str) -> str:
        return {
            "obj": '{ text: task_brief, flaws: ["none"], ok: true, n: 0 }',
            "str": "task_brief",
            "list:str": "[task_brief]",
            "list:obj": '[{ text: task_brief, flaws: ["none"], ok: true, n: 0 }]',
            "num": "1",
            "bool": "true",
        }[kind]

    @staticmethod
    def _member(name: str | None, path: str) -> str | None:
        """`name.path`, or None when there was no name to read."""
        return None if name is None else f"{name}.{path}"

    def _first(self, scope: Scope, kind: str) -> str | None:
        names = [n for n in self.names(scope, kind, sure=True) if scope[n].nonempty]
        return f"{self.pick(names)}[0]" if names else None

    def _shuffled(self, scope: Scope, kind: str, nonempty: bool,
                  part: str = ".items") -> str | None:
        """`shuffle(xs).items` (or, with `part` "", the whole result) over a list in scope."""
        listed = self._list_var(scope, kind, nonempty)
        if listed is None:
            return None
        self.constructs.add("shuffle")
        return f"shuffle({listed}){part}"

    def _list_var(self, scope: Scope, kind: str, nonempty: bool) -> str | None:
        lists = {n: var for n, var in scope.items() if var.kind == kind and (var.nonempty or not nonempty)}
        return self.some_name(lists, kind)

    def array(self, item: Callable[[], str]) -> str:
        count = self.draw(st.integers(1, 2))
        return "[" + ", ".join(item() for _ in range(count)) + "]"

    def object_literal(self, scope: Scope, depth: int) -> str:
        self.constructs.add("object literal")
        entries = [
            f"text: {self.expr('str', scope, depth=depth + 1)}",
            f"flaws: {self.expr('list:str', scope, nonempty=True, depth=depth + 1)}",
            f"ok: {self.expr('bool', scope, depth=depth + 1)}",
            f"n: {self.expr('num', scope, depth=depth + 1)}",
        ]
        extra = self.weighted([(3, None), (2, "extra"), (1, "attack"), (1, "shorthand")])
        if extra == "shorthand":
            name = self.some_name(scope, "any")
            if name is not None and name not in OBJECT_KEYS:
                entries.append(name)
        elif extra is not None:
            entries.append(f"{extra}: {self.expr('any', scope, depth=depth + 1)}")
        return "{ " + ", ".join(entries) + " }"

    def string(self, scope: Scope) -> str:
        """A string literal: words, and interpolations of values in scope."""
        parts = []
        for _ in range(self.draw(st.integers(1, 3))):
            if self.weighted([(1, False), (1, True)]):
                name = self.some_name(scope, "any")
                if name is not None:
                    self.constructs.add("interpolation")
                    kind = scope[name].kind
                    member = (self.pick(["", ".text", ".flaws"]) if kind == "obj"
                              else ".message" if kind == "err" and self.flip() else "")
                    if member:
                        self.constructs.add("interpolated member")
                    parts.append("{" + name + member + "}")
                    continue
            parts.append(self.pick(WORDS))
        if self.weighted([(7, False), (1, True)]):
            self.constructs.add("triple-quoted string")
            return '"""' + " ".join(parts) + '"""'
        return '"' + " ".join(parts) + '"'

    def condition(self, scope: Scope, null_safe: bool = False) -> str:
        """A deterministic predicate (LANGUAGE.md 4.5); `null_safe` avoids orderings."""
        options: list[tuple[int, Callable[[], str | None]]] = [
            (2, lambda: self.pick(["true", "false", 'task_brief == "the brief"'])),
            (3, lambda: self._member(self.some_name(scope, "obj"), "ok")),
            (1, lambda: f"not {o}.ok" if (o := self.some_name(scope, "obj")) else None),
            (2, lambda: (f"{name} is {self.pick(['empty', 'not empty', 'null', 'not null'])}"
                         if (name := self.some_name(scope, "any")) else None)),
            (1, lambda: self.some_name(scope, "any")),
        ]
        if not null_safe:
            options += [
                (2, lambda: (f"{o}.n {self.pick(['>', '<=', '==', '!='])} {self.draw(st.integers(0, 3))}"
                             if (o := self.some_name(scope, "obj")) else None)),
                (1, lambda: (f"{xs}.length >= {self.draw(st.integers(1, 3))}"
                             if (xs := self.some_name(scope, "list:str", "list:obj", "list:any"))
                             else None)),
            ]
        text = None
        while text is None:
            text = options[self.weighted([(w, i) for i, (w, _) in enumerate(options)])][1]()
        if self.weighted([(5, False), (1, True)]):
            other = self.condition(scope, null_safe)
            text = f"{text} {self.pick(['and', 'or'])} {other}"
        return text

    # --- calls ----------------------------------------------------------------------------

    def call(self, scope: Scope, head: str, slot: str | None = None,
             text: str | None = None) -> Lines:
        """`head` is `call` or `let r = call`; the target (`slot` if given) and properties
        (`text: <text>` among them, if given) are drawn here."""
        services = self.names(scope, "svc")
        target = self.weighted([(4, "slot"), (4 if services else 0, "svc")])
        if slot is not None:
            name = slot
        elif target == "svc":
            name = self.recent(services)
            self.constructs.add("call through a service value")
        else:
            name = self.pick(list(SLOTS))
        lines = [f"{head} {name}"]
        used: set[str] = set()
        if text is not None:
            used.add("text")
            lines.append(f"  text: {text}")
        for _ in range(self.weighted([(1, 1), (2, 2), (1, 0)])):
            label = self.weighted([(3, "text"), (2, "notes"), (1, "draft"), (1, "context"),
                                   (1, "material"), (1, "attack_notes")])
            if label not in used:
                used.add(label)
                lines.append(f"  {label}: {self.expr('any', scope)}")
        if self.weighted([(2, False), (1, True)]):
            self.constructs.add("prompt")
            lines.append(f"  prompt: {self.string(scope)}")
        if self.weighted([(7, False), (1, True)]):
            self.constructs.add("retry")
            lines.append("  retry: 1")
        return lines

    # --- statements -------------------------------------------------------------------------

    def body(self, scope: Scope, ctx: Ctx, least: int = 1, most: int = 3,
             last: str | None = None) -> Lines:
        """A statement list; `last` = `value` ends it with a statement that has a value."""
        count = self.draw(st.integers(least, most))
        lines: Lines = []
        for position in range(count):
            if self.budget <= 0 and position >= least:
                break
            self.budget -= 1
            if last == "value" and position == count - 1:
                lines += self.value_statement(scope, ctx)
            else:
                lines += self.statement(scope, ctx)
        if not lines:
            lines = self.value_statement(scope, ctx) if last == "value" else self.s_let(scope, ctx)
        return lines

    def statement(self, scope: Scope, ctx: Ctx) -> Lines:
        deep = ctx.depth >= 3 or self.budget <= 2
        choices: list[tuple[int, str]] = [
            (4, "let"), (6, "let call"), (3, "call"), (2, "assign"), (2, "member assign"),
            (2, "record"), (2, "service variable"),
        ]
        if self.names(scope, "svc", sure=True, assignable=ctx):
            choices.append((3, "service variable"))
        choices += [(2, "session")]
        if not deep:
            choices += [(3, "if"), (5, "loop"), (2, "parallel"), (3, "collecting loop"),
                        (2, "try"), (1, "anonymous do"), (2, "pipeline"), (1, "do value")]
            if ctx.top:
                choices.append((2, "block in if"))
        if self.blocks:
            choices.append((4, "do"))
        if self.approver is not None and GROWN in self.names(scope, "list:str", sure=True,
                                                             assignable=ctx):
            choices.append((4, "gated growth"))
        if self.gated:
            choices.append((4, "gated call"))
        if self.judge is not None:
            choices.append((3, "sampling"))
        if ctx.can_throw:
            choices += [(5, "throw"), (3, "refused operation")]
        if ctx.in_loop:
            choices.append((1, "loop control"))
        kind = self.weighted(choices)
        return getattr(self, "s_" + kind.replace(" ", "_"))(scope, ctx)

    def value_statement(self, scope: Scope, ctx: Ctx) -> Lines:
        """The last statement of a collecting loop's or a block's body: it gives the value."""
        kind = self.weighted([(3, "call"), (2, "let call"), (1, "let"), (2, "return"),
                              (3 if self.blocks else 0, "do"),
                              (1 if ctx.depth < 3 else 0, "collecting loop")])
        self.constructs.add(f"value of a body: {kind}")
        if kind == "return":
            return [f"return {self.expr('any', scope)}"]
        if kind == "collecting loop":
            return self.loop(scope, ctx, collecting=True, head="")
        return getattr(self, "s_" + kind.replace(" ", "_"))(scope, ctx)

    def s_let(self, scope: Scope, ctx: Ctx) -> Lines:
        kind = self.weighted([(3, "obj"), (3, "str"), (2, "list:str"), (2, "list:obj"),
                              (1, "num"), (1, "bool"), (1, "destructure")])
        if kind == "destructure":
            source = self.some_name(scope, "obj")
            if source is not None and not ctx.in_parallel and not any(
                    name in scope and (not scope[name].mutable or name in ctx.frozen)
                    for name in ("text", "n")):
                self.constructs.add("destructuring")
                scope["text"], scope["n"] = Var("str"), Var("num")
                return [f"let {{ text, n }} = {source}"]
            kind = "obj"
        value = self.expr(kind, scope)
        # Sometimes `let` an existing name again (it assigns, LANGUAGE.md 4.1).
        again = [name for name in self.names(scope, kind, sure=True, assignable=ctx)
                 if name not in ("text", "n")]
        if again and not ctx.in_parallel and self.weighted([(6, False), (1, True)]):
            name = self.pick(again)
            self.constructs.add("second let")
        else:
            name = self.fresh({"obj": "o", "str": "s", "list:str": "xs", "list:obj": "os",
                               "num": "k", "bool": "b"}[kind])
        nonempty = kind.startswith("list") and value.startswith("[") and value != "[]"
        keyword = "let"
        if ctx.top and name not in scope and self.weighted([(6, False), (1, True)]):
            keyword = "const"  # not in a loop: a second iteration would bind it again
            self.constructs.add("const")
        scope[name] = Var(kind, mutable=keyword == "let",
                          nonempty=nonempty or value.endswith(".flaws"))
        return [f"{keyword} {name} = {value}"]

    def s_let_call(self, scope: Scope, ctx: Ctx) -> Lines:
        name = self.fresh("r")
        lines = self.call(scope, f"let {name} = call")
        scope[name] = Var("obj")
        return lines

    def s_call(self, scope: Scope, ctx: Ctx) -> Lines:
        return self.call(scope, "call")

    def s_assign(self, scope: Scope, ctx: Ctx) -> Lines:
        targets = self.names(scope, *VALUE_KINDS, sure=True, assignable=ctx)
        if not targets:
            return self.s_let_call(scope, ctx)
        name = self.pick(targets)
        var = scope[name]
        self.constructs.add("reassignment")
        if var.kind == "obj" and self.flip():
            lines = self.call(scope, f"{name} = call")
        else:
            lines = [f"{name} = {self.expr(var.kind, scope, nonempty=var.nonempty)}"]
        scope[name] = replace(var, maybe=False)
        return lines

    def s_member_assign(self, scope: Scope, ctx: Ctx) -> Lines:
        lists = [name for name in self.names(scope, "list:str", "list:obj", "list:any", sure=True,
                                             assignable=ctx) if scope[name].nonempty]
        if lists and self.weighted([(3, False), (1, True)]):
            name = self.pick(lists)
            kind = scope[name].kind.split(":")[1]
            self.constructs.add("index assignment")
            return [f"{name}[0] = {self.expr(kind, scope)}"]
        targets = self.names(scope, "obj", sure=True, assignable=ctx)
        if not targets:
            return self.s_let(scope, ctx)
        name = self.pick(targets)
        key = self.pick([*OBJECT_KEYS, "extra"])
        kind = {"text": "str", "flaws": "list:str", "ok": "bool", "n": "num"}.get(key, "any")
        self.constructs.add("member assignment")
        return [f"{name}.{key} = {self.expr(kind, scope, nonempty=True)}"]

    def s_record(self, scope: Scope, ctx: Ctx) -> Lines:
        targets = self.names(scope, "list:str", "list:obj", "list:any", sure=True, assignable=ctx)
        if not targets:
            name = self.fresh("xs")
            scope[name] = Var("list:str")
            return [f"let {name} = []", *self.s_record(scope, ctx)]
        name = self.pick(targets)
        kind = scope[name].kind
        value = self.expr("any" if kind == "list:any" else kind.split(":")[1], scope)
        self.constructs.add("record/append")
        scope[name] = replace(scope[name], nonempty=scope[name].nonempty or ctx.depth == 0)
        if self.flip():
            return [f"append {value} to {name}"]
        # `record` reads its value up to the `in`: an expression with operators goes in
        # parentheses (docs/language.md 3.4).
        return [f"record ({value}) in {name}" if " " in value else f"record {value} in {name}"]

    def s_gated_growth(self, scope: Scope, ctx: Ctx) -> Lines:
        """A growth of GROWN under a test of an approval (`if r.ok:`), the approver's call
        just before it or a reply already in scope (of the approver or not); sometimes
        another statement (a later call of the approver, say) runs between test and growth."""
        assert self.approver is not None
        self.constructs.add("gated growth")
        lines, test = self._approval_test(scope, self.approver)
        inner = dict(scope)
        body: Lines = []
        if self.weighted([(3, False), (1, True)]):
            body += self.statement(inner, ctx.inner())
        item = self.expr("str", inner)
        keyword = self.pick(["record", "append"])
        body.append(f"record ({item}) in {GROWN}" if keyword == "record" else
                    f"append {item} to {GROWN}")
        merge(scope, [inner], exhaustive=False)
        return [*lines, f"if {test}:", *indent(body)]

    def _approval_test(self, scope: Scope, approver: str) -> tuple[Lines, str]:
        """A test of an approval: of a reply already in scope, or of `approver`'s call made
        just before it (the lines that make it, and the condition)."""
        lines: Lines = []
        name = self.some_name(scope, "obj") if self.weighted([(3, False), (1, True)]) else None
        if name is None:
            name = self.fresh("r")
            lines += self.call(scope, f"let {name} = call", slot=approver)
            scope[name] = Var("obj")
        return lines, self.pick([f"{name}.ok", f"{name}.ok == true",
                                 f"{name}.ok and {name}.n >= 0"])

    def s_gated_call(self, scope: Scope, ctx: Ctx) -> Lines:
        """A call of a gated slot the way its invariant asks, or nearly: for `runs only
        after`, under a test of an approval (`if r.ok:`), the approver's call just before
        it or a reply already in scope; for `gets the same `text` ... got`, after a call of
        the approver given the same name as `text`. Sometimes another statement (a later
        call of the approver, say, or a binding of the name) runs in between."""
        form, slot, approver = self.pick(self.gated)
        self.constructs.add(f"gated call ({form})")
        lines: Lines = []
        if form == "same_got":
            names = self.names(scope, *VALUE_KINDS, sure=True)
            given = self.pick(["task_brief", *names[-3:]])
            lines += self._bound_call(scope, approver, given)
            if self.weighted([(3, False), (1, True)]):
                lines += self.statement(scope, ctx.inner())
            return [*lines, *self._bound_call(scope, slot, given)]
        approval, test = self._approval_test(scope, approver)
        lines += approval
        inner = dict(scope)
        body: Lines = []
        if self.weighted([(3, False), (1, True)]):
            body += self.statement(inner, ctx.inner())
        body += self._bound_call(inner, slot)
        merge(scope, [inner], exhaustive=False)
        return [*lines, f"if {test}:", *indent(body)]

    def s_sampling(self, scope: Scope, ctx: Ctx) -> Lines:
        """The outputs of SOURCES' services collected in binding order (`let answers = for s
        in samplers: call s ...`, sometimes with the loop counter), or one picked by its
        index (`call samplers[0]`); what a judge blind to their source may not get until
        it is shuffled."""
        name = self.fresh("os")
        if self.weighted([(3, False), (1, True)]):
            self.constructs.add("call of a service of a list-valued slot")
            lines = self.call(scope, f"let {name} = call", slot=f"{SOURCES}[{self.pick('01')}]")
            scope[name] = Var("obj")
            return lines
        assert self.judge is not None
        service, counter = self.fresh("s"), self.fresh("i")
        inner = {**scope, counter: Var("num", mutable=False)}
        body = self.call(inner, "call", slot=service)
        if self.weighted([(4, False), (1, True)]):  # the judge told the position
            body = [*self.call(inner, "call", slot=self.judge,
                               text=self.pick([counter, f'"answer {{{counter}}}"'])), *body]
        self.constructs.add("outputs of a list-valued slot in binding order")
        scope[name] = Var("list:obj", nonempty=True)
        lines = [f"let {name} = for {service}, {counter} in {SOURCES}:", *indent(body)]
        if self.flip():  # the judge given the outputs: shuffled, or not
            given = self.pick([f"shuffle({name}).items", name, f"{name}[0].text",
                               f"sort(shuffle({name}).items, by: \"n\")"])
            lines += self.call(scope, "call", slot=self.judge, text=given)
        return lines

    def _bound_call(self, scope: Scope, slot: str, text: str | None = None) -> Lines:
        """`call slot` or `let rN = call slot`, given `text: <text>` if `text` is given."""
        if self.flip():
            return self.call(scope, "call", slot=slot, text=text)
        name = self.fresh("r")
        lines = self.call(scope, f"let {name} = call", slot=slot, text=text)
        scope[name] = Var("obj")
        return lines

    def s_service_variable(self, scope: Scope, ctx: Ctx) -> Lines:
        services = self.names(scope, "svc", sure=True, assignable=ctx)
        if services and self.flip():
            name = self.pick(services)
            self.constructs.add("service variable reassigned")
            return [f"{name} = {self.expr('svc', scope)}"]
        name = self.fresh("w")
        value = self.expr("svc", scope)
        scope[name] = Var("svc")
        self.constructs.add("service variable")
        return [f"let {name} = {value}"]

    def s_do(self, scope: Scope, ctx: Ctx) -> Lines:
        if not self.blocks:
            return self.s_call(scope, ctx)
        name = self.pick(sorted(self.blocks))
        args = [self.expr(kind, scope) for kind in self.blocks[name].params]
        self.constructs.add("do")
        if self.blocks[name].maybe:
            self.constructs.add("do of a block defined in an if")
        return [f"do {name}({', '.join(args)})"]

    def s_anonymous_do(self, scope: Scope, ctx: Ctx) -> Lines:
        inner = dict(scope)
        self.constructs.add("anonymous do")
        body = self.body(inner, ctx.inner(frozen=frozenset(scope), in_loop=False), 1, 2)
        return ["do:", *indent(body)]

    def s_do_value(self, scope: Scope, ctx: Ctx) -> Lines:
        name = self.fresh("v")
        if self.blocks and self.flip():
            self.constructs.add("do in value position")
            line = self.s_do(scope, ctx)[0]
            scope[name] = Var("any")
            return [f"let {name} = {line}"]
        inner = dict(scope)
        self.constructs.add("anonymous do in value position")
        body = self.body(inner, ctx.inner(frozen=frozenset(scope), in_loop=False), 1, 2,
                         last="value")
        scope[name] = Var("any")
        return [f"let {name} = do:", *indent(body)]

    def s_session(self, scope: Scope, ctx: Ctx) -> Lines:
        form = self.weighted([(3, "session: scout"), (2, "resume: scout"), (1, "inline")])
        self.constructs.add(f"session ({form})")
        name = self.fresh("r")
        if form == "inline":
            head = f"session {self.string(scope)}"
        else:
            head = form
        lines = [f"let {name} = {head}"]
        if self.flip():
            lines.append(f"  context: {self.expr('any', scope)}")
        if form != "inline" and self.weighted([(2, False), (1, True)]):
            lines.append(f"  prompt: {self.string(scope)}")
        scope[name] = Var("obj")
        return lines

    def s_pipeline(self, scope: Scope, ctx: Ctx) -> Lines:
        list_kind = self.pick(["list:str", "list:obj"])
        source = self.expr(list_kind, scope, nonempty=True)
        lines = [source]
        kind = list_kind
        frozen = frozenset(scope)
        for _ in range(self.draw(st.integers(1, 2))):
            op = self.weighted([(3, "map"), (2, "filter"), (1, "pmap"), (1, "reduce")])
            self.constructs.add(f"pipeline {op}")
            inner = dict(scope)
            element = kind.split(":")[1] if kind.startswith("list:") and kind != "list:any" else "any"
            if op == "reduce":
                acc, item = self.fresh("acc"), self.fresh("x")
                inner[acc], inner[item] = Var("any", mutable=False), Var(element, mutable=False)
                header = f"| reduce({acc}, {item}):"
            else:
                inner["item"] = Var(element, mutable=False)
                header = f"| {op}:"
            body = self.body(inner, ctx.inner(frozen=frozen | {"item"}, in_loop=False,
                                              in_parallel=op == "pmap" or ctx.in_parallel),
                             1, 2, last="value")
            lines += [f"  {header}", *("    " + line for line in body)]
            if op in ("map", "pmap"):
                kind = "list:any"
            elif op == "reduce":
                kind = "any"
                break
        name = self.fresh("ys" if kind.startswith("list") else "v")
        lines[0] = f"let {name} = {lines[0]}"
        scope[name] = Var(kind)
        return lines

    def s_throw(self, scope: Scope, ctx: Ctx) -> Lines:
        self.constructs.add("throw")
        value = self.weighted([(3, "expr"), (1, "bare")])
        line = "throw" if value == "bare" else f"throw {self.expr('any', scope)}"
        if self.flip():
            return [f"if {self.condition(scope)}:", f"  {line}"]
        return [line]

    def s_refused_operation(self, scope: Scope, ctx: Ctx) -> Lines:
        """An operation that may be refused on the values it gets (a `sort` by a field the
        items lack, a `matches` pattern RE2 cannot compile, an ordering of a number and a
        string): its error is about its operands (`prose.lang.flows.value_error`)."""
        self.constructs.add("refused operation")
        shape = self.pick(["sort", "matches", "ordering"])
        if shape == "sort":
            value, kind = (f"sort({self.expr('list:obj', scope)}, by: "
                           f"{self.expr('str', scope)})"), "list:obj"
        elif shape == "matches":
            value, kind = f"{self.expr('str', scope)} matches {self.expr('str', scope)}", "bool"
        else:
            value, kind = f"({self.expr('num', scope)} < {self.expr('any', scope)})", "bool"
        name = self.fresh("os" if kind == "list:obj" else "b")
        scope[name] = Var(kind)
        return [f"let {name} = {value}"]

    def s_loop_control(self, scope: Scope, ctx: Ctx) -> Lines:
        self.constructs.add("break/continue")
        return [f"if {self.condition(scope)}:", f"  {self.pick(['continue', 'break'])}"]

    # --- compound statements --------------------------------------------------------------------

    def s_if(self, scope: Scope, ctx: Ctx) -> Lines:
        lines: Lines = []
        arms: list[Scope] = []
        count = self.draw(st.integers(1, 3))
        for position in range(count):
            keyword = "if" if position == 0 else "elif"
            arm = dict(scope)
            body = self.body(arm, ctx.inner(), 1, 2)
            lines += [f"{keyword} {self.condition(scope)}:", *indent(body)]
            arms.append(arm)
        if self.flip():
            arm = dict(scope)
            lines += ["else:", *indent(self.body(arm, ctx.inner(), 1, 2))]
            arms.append(arm)
            exhaustive = True
        else:
            exhaustive = False
        self.constructs.add("if/elif/else" if count > 1 or exhaustive else "if")
        merge(scope, arms, exhaustive)
        return lines

    def s_block_in_if(self, scope: Scope, ctx: Ctx) -> Lines:
        name = self.fresh("blk")
        definition = self.block_def(name, scope, maybe=True)
        condition = self.pick(["true", 'task_brief == "the brief"', "task_brief is not empty"])
        self.constructs.add("block defined in an if")
        return [f"if {condition}:", *indent(definition)]

    def block_def(self, name: str, scope: Scope, maybe: bool) -> Lines:
        params = []
        inner = {key: var for key, var in scope.items() if not var.maybe}
        kinds = []
        for _ in range(self.draw(st.integers(1, 2))):
            kind = self.weighted([(3, "svc"), (2, "any"), (1, "obj"), (1, "str")])
            param = self.fresh("p")
            params.append(param)
            kinds.append(kind)
            inner[param] = Var(kind, mutable=False)  # the linter holds parameters read-only
        if "svc" in kinds:
            self.constructs.add("call through a block parameter")
        ctx = Ctx(depth=1, frozen=frozenset(n for n in inner if n not in params))
        body = self.body(inner, ctx, 1, 3, last=self.pick([None, "value"]))
        self.blocks[name] = Block(tuple(kinds), maybe)
        return [f"block {name}({', '.join(params)}):", *indent(body)]

    def loop(self, scope: Scope, ctx: Ctx, collecting: bool, head: str,
             race: bool = False) -> Lines:
        """A `for`, `repeat`, `loop until/while`, `parallel for` or `parallel repeat` loop.

        `head` is what comes before it (`let ys = ` for a loop in value position);
        `race` allows `"first"` (whose value is one item, not a list: `self.first`).
        """
        self.first = False
        kind = self.weighted([(3, "for"), (2, "repeat"), (1, "loop until"),
                              (2, "parallel for"), (1, "parallel repeat"), (1, "loop for")])
        parallel = kind.startswith("parallel")
        body_scope = dict(scope)
        var = index = None
        prelude: Lines = []
        each = kind == "loop for"
        if kind.endswith("for"):
            list_kind = self.weighted([(3, "list:str"), (3, "list:obj"), (3, "list:any"),
                                       (1, "list:svc")])
            source = None
            if list_kind == "list:svc" and self.judge and self.weighted([(1, False), (3, True)]):
                self.constructs.add("loop over a list-valued slot")
                source = SOURCES
            elif list_kind == "list:svc":
                self.constructs.add("loop over services")
                source = f"[{self.slot()}, {self.slot()}]"
            elif self.weighted([(3, True), (1, False)]):
                source = self.some_name(scope, list_kind)
            if source is None and list_kind == "list:str" and self.flip():
                source = self._member(self.some_name(scope, "obj"), "flaws")
            if source is None:
                list_kind = "list:obj" if list_kind == "list:obj" else "list:str"
                source = self.expr(list_kind, scope, nonempty=True)
            var = self.fresh("x")
            body_scope[var] = Var(list_kind.split(":")[1], mutable=False)
            header = f"for {var}"
            if self.weighted([(3, False), (1, True)]):
                index = self.fresh("i")
                body_scope[index] = Var("num", mutable=False)
                header += f", {index}"
            header += f" in {source}"
            if each:  # `loop for each x in xs (max: N)`
                header = "loop for each " + header[len("for "):] + " (max: " + self.pick(
                    ["1", "2", "rounds"]) + ")"
            if index and source in scope and self.flip():
                # Read the element by its index, as well as through the loop variable.
                element = self.fresh("e")
                body_scope[element] = Var(list_kind.split(":")[1])
                prelude = [f"let {element} = {source}[{index}]"]
                self.constructs.add("index read by a loop index")
        elif kind.endswith("repeat"):
            header = f"repeat {self.pick(['1', '2', 'rounds'])}"
            if self.flip():
                index = self.fresh("i")
                body_scope[index] = Var("num", mutable=False)
                header += f" as {index}"
        else:
            keyword = self.pick(["until", "while"])
            kind = f"loop {keyword}"
            header = f"loop {keyword} {{condition}} (max: " + self.pick(["2", "3", "rounds"]) + ")"
        can_throw = ctx.can_throw
        if parallel:
            header = "parallel " + header
            modifiers = self.weighted([(4, ""), (2, ' ("all", on-fail: "continue")'),
                                       (1, ' ("all", on-fail: "ignore")'),
                                       (1 if race else 0, ' ("first", on-fail: "ignore")'),
                                       (1 if race else 0, ' ("any", count: 1)')])
            header += modifiers
            self.first = "first" in modifiers
            if "first" in modifiers or "any" in modifiers:
                self.constructs.add("parallel race")
            if modifiers:
                self.constructs.add("parallel on-fail")
            # A failed branch's value is its error object: a thrown value flows on.
            can_throw = can_throw or (collecting and "continue" in modifiers)
        frozen = frozenset(scope) if parallel else ctx.frozen
        inner = ctx.inner(frozen=frozen, in_loop=not parallel, can_throw=can_throw,
                          in_parallel=parallel or ctx.in_parallel)
        body = prelude + self.body(body_scope, inner, 1, 3, last="value" if collecting else None)
        if kind.startswith("loop ") and not each:
            # Chosen after the body so that it may name what the body binds (null before).
            header = header.format(condition=self.condition(body_scope, null_safe=True))
            if self.weighted([(3, False), (1, True)]):
                header += f" as {self.fresh('i')}"
        self.constructs.add(("collecting " if collecting else "") + kind)
        if not parallel:
            merge(scope, [body_scope], exhaustive=False)
            if var is not None:
                scope[var] = replace(body_scope[var], maybe=True)
        return [f"{head}{header}:", *indent(body)]

    def s_loop(self, scope: Scope, ctx: Ctx) -> Lines:
        return self.loop(scope, ctx, collecting=False, head="")

    def s_collecting_loop(self, scope: Scope, ctx: Ctx) -> Lines:
        assignable = self.names(scope, "list:any", sure=True, assignable=ctx)
        if assignable and self.weighted([(3, False), (1, True)]):
            name = self.pick(assignable)
            lines = self.loop(scope, ctx, collecting=True, head=f"{name} = ")
        else:
            name = self.fresh("ys")
            lines = self.loop(scope, ctx, collecting=True, head=f"let {name} = ", race=True)
        scope[name] = Var("any" if self.first else "list:any")
        return lines

    def s_parallel(self, scope: Scope, ctx: Ctx) -> Lines:
        lines: Lines = []
        published: Scope = {}
        inner = ctx.inner(frozen=frozenset(scope), in_loop=False, in_parallel=True)
        for _ in range(self.draw(st.integers(2, 3))):
            branch = dict(scope)
            kind = self.weighted([(3, "let call"), (2, "let"), (2, "nested if"), (1, "nested for"),
                                  (1, "call"), (1 if self.blocks else 0, "do")])
            if kind == "nested if":
                self.constructs.add("let nested in a parallel branch")
                body = self.body(branch, inner.inner(), 1, 2)
                condition = self.pick(["true", self.condition(scope)])
                lines += [f"if {condition}:", *indent(body)]
                maybe = condition != "true"  # the run publishes what a branch bound
            elif kind == "nested for":
                self.constructs.add("let nested in a parallel branch")
                lines += self.loop(branch, inner, collecting=False, head="")
                maybe = True
            else:
                lines += getattr(self, "s_" + kind.replace(" ", "_"))(branch, inner)
                maybe = False
            for name, var in branch.items():
                if name not in scope:
                    published[name] = replace(var, maybe=var.maybe or maybe)
        modifiers = self.weighted([(5, ""), (1, ' ("all", on-fail: "continue")')])
        self.constructs.add("parallel block")
        if modifiers:
            self.constructs.add("parallel on-fail")
        scope.update(published)
        return [f"parallel{modifiers}:", *indent(lines)]

    def s_try(self, scope: Scope, ctx: Ctx) -> Lines:
        body_scope = dict(scope)
        lines = ["try:", *indent(self.body(body_scope, ctx.inner(can_throw=True), 1, 3))]
        arms = [body_scope]
        shape = self.weighted([(4, "catch as"), (1, "catch"), (1, "finally")])
        if shape != "finally":
            handler = dict(scope)
            if shape == "catch as":
                err = self.fresh("err")
                handler[err] = Var("err", mutable=False)
                lines.append(f"catch as {err}:")
                self.constructs.add("catch variable")
            else:
                lines.append("catch:")
            lines += indent(self.body(handler, ctx.inner(), 1, 2))
            arms.append(handler)
        merge(scope, arms, exhaustive=False)
        if shape == "finally" or self.weighted([(3, False), (1, True)]):
            lines += ["finally:", *indent(self.body(scope, ctx.inner(), 1, 2))]
        self.constructs.add("try")
        return lines


def merge(scope: Scope, arms: list[Scope], exhaustive: bool) -> None:
    """After branches: a name bound in every arm of an exhaustive choice is bound."""
    new = set().union(*(arm.keys() for arm in arms)) - set(scope)
    for name in new:
        present = [arm[name] for arm in arms if name in arm]
        sure = exhaustive and len(present) == len(arms) and not any(v.maybe for v in present)
        scope[name] = replace(present[-1], maybe=not sure,
                              nonempty=all(v.nonempty for v in present))
    for name in set(scope) & set().union(*(arm.keys() for arm in arms)):
        changed = [arm[name] for arm in arms if name in arm]
        if changed and name in scope and scope[name] not in changed:
            # An assignment in an arm: the kind is unchanged; stay conservative on emptiness.
            scope[name] = replace(scope[name], nonempty=scope[name].nonempty and all(
                v.nonempty for v in changed))


PAIR_FORMS = ("never", "indirect", "unaware", "independent")


# Every form `invariants()` draws (tests/test_soundness_coverage.py holds that each one is
# drawn and is a checked form, not prose). Not drawn:
# - `` `A` returns `ok` as one of true, false `` (PH637): the linter proves it from the
#   slot's declared output type and the run time judges what the model returned, so
#   neither verdict depends on the generated program: lint flags every call of a slot
#   whose `ensures` is free text (as these are) and the run time, every scripted `ok`
#   a boolean, stops none; with a typed `ensures` lint is clean and the run stops only
#   on a reply the script made up. A differential test over programs compares nothing.
FORMS = (*PAIR_FORMS, "only", "chain", "round", "no_call", "runs_if", "at_most_one", "once",
         "same_every", "grows", "runs_after", "same_got", "carries_only", "never_carries",
         "never_told", "blind", "pairwise")
# The forms whose statements the generator writes on purpose (a test of an approval, the
# same name given twice, outputs of SOURCES in binding order): `tests/test_soundness.py`
# also runs a seeded sample of each, since a random draw holds one rarely.
GATED_FORMS = ("grows", "runs_after", "same_got", "blind")


@st.composite
def invariants(draw: Callable[[st.SearchStrategy[Any]], Any],
               forms: Sequence[str] = FORMS) -> Invariant:
    form = draw(st.sampled_from(list(forms)))
    a = draw(st.sampled_from(list(SLOTS)))
    if form == "only":
        labels = draw(st.lists(st.sampled_from(INPUT_NAMES), min_size=1, max_size=3, unique=True))
        return Invariant(form, a, inputs=tuple(labels))
    if form in ("chain", "round", "no_call", "runs_if", "same_every", "grows", "never_carries",
                "blind"):
        return Invariant(form, a)
    if form == "carries_only":
        others = draw(st.lists(st.sampled_from([slot for slot in SLOTS if slot != a]),
                               max_size=1))
        return Invariant(form, a, inputs=tuple(others))
    if form == "never_told":
        return Invariant(form, a, draw(st.sampled_from(TOLD_WORDS)))
    if form == "pairwise":  # `a` and every other slot
        return Invariant(form, a, inputs=tuple(slot for slot in SLOTS if slot != a))
    if form == "once":
        return Invariant(form, a, per_iteration=draw(st.booleans()))
    if form == "at_most_one":
        return Invariant(form, a, draw(st.sampled_from([slot for slot in SLOTS if slot != a])),
                         per_iteration=draw(st.booleans()))
    return Invariant(form, a, draw(st.sampled_from([slot for slot in SLOTS if slot != a])))


@st.composite
def patterns(draw: Callable[[st.SearchStrategy[Any]], Any],
             required: Sequence[str] = ()) -> GeneratedPattern:
    """A complete pattern with checkable invariants, a program and a script (with an
    invariant of each form in `required` too: for trying one form out)."""
    # At least one invariant about two slots, which the markers can check.
    chosen = [draw(invariants(PAIR_FORMS))]
    for form in required:
        chosen.append(draw(invariants((form,)).filter(lambda i: i not in chosen)))
    chosen += [i for i in draw(st.lists(invariants(), max_size=3, unique=True)) if i not in chosen]
    approvers = [i.a for i in chosen if i.form == "grows"]
    gated = tuple((i.form, i.a, i.b) for i in chosen if i.form in ("runs_after", "same_got"))
    generator = Generator(draw, frozenset(i.a for i in chosen),
                          approver=approvers[0] if approvers else None, gated=gated,
                          judge=next((i.a for i in chosen if i.form == "blind"), None))
    scope: Scope = {"task_brief": Var("str", mutable=False),
                    "style": Var("str", mutable=False), "rounds": Var("num", mutable=False)}
    lines: Lines = list(AGENT_DEFINITION)
    if approvers:  # the list the `grows only after` form is about: its first `let` is its start
        lines.append(f"let {GROWN} = []")
        scope[GROWN] = Var("list:str")
        generator.constructs.add("grows only after")
    for _ in range(draw(st.integers(0, 2))):
        lines += generator.block_def(generator.fresh("blk"), scope, maybe=False)
        generator.constructs.add("block")
    lines += generator.body(scope, Ctx(top=True), 2, 10)
    result = generator.expr("any", scope)
    lines.append(f"return {{ result: {result} }}")
    program = "\n".join(lines)
    ok_cycle = draw(st.lists(st.booleans(), min_size=1, max_size=4))
    failures: dict[str, frozenset[int]] = {}
    if generator.constructs & {"try", "parallel on-fail"}:  # something may handle a failure
        failures = draw(st.dictionaries(st.sampled_from(list(SLOTS)),
                                        st.frozensets(st.integers(0, 8), max_size=2), max_size=2))
    strict = draw(st.integers(0, 4)) == 4
    style = draw(st.sampled_from(STYLES))
    if strict:
        generator.constructs.add("flow: strict")
    text, start = pattern_text(program, chosen, strict, style)
    return GeneratedPattern(text, program, tuple(chosen), script_for(ok_cycle, failures),
                            start, frozenset(generator.constructs), strict, style)


def describe_failures(script: dict[str, Any]) -> str:
    """Which scripted replies fail, and the `ok` values of the first ones, for messages."""
    out = []
    for slot, replies in script["slots"].items():
        failing = [i for i, r in enumerate(replies) if "$error" in r]
        oks = "".join("T" if r.get("ok") else "F" for r in replies[:8] if "ok" in r)
        out.append(f"{slot}: fails at {failing or 'none'}, ok {oks}...")
    return "script: " + "; ".join(out)
