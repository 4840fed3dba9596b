"""What the semantic model finds: one class per kind of problem.

`prose.check.semantic` records these while it resolves names; a rule asks the
model for the findings of its class (`model.findings_of(ReadOnlyAssigned)`)
and turns each into a diagnostic. Detection and report meet at a class, so a
misspelt kind is a name error (and a mypy error), not a rule that never fires.

As pyflakes' `messages.py`, a finding carries its rule's code and writes its own
message, labels and help: a rule that only reports one class of finding is a
`FindingRule` naming that class, with no `check` body of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from prose.diagnostics.model import Label
from prose.source import Span
from prose.syntax.code_conditions import JUDGE_HINT

# Where an undefined name was met.
NameContext = Literal["read", "interpolation", "condition", "call-target", "do", "assignment", "agent"]


@dataclass(frozen=True, kw_only=True)
class Finding:
    """A fact a rule turns into a diagnostic, at `span`.

    `code` is the rule that reports it ("" while none does); `message`, `labels` and
    `help` are the diagnostic's."""

    code: ClassVar[str] = ""
    span: Span

    @property
    def message(self) -> str:
        raise NotImplementedError(f"{type(self).__name__} writes no message")

    @property
    def labels(self) -> tuple[Label, ...]:
        return ()

    @property
    def help(self) -> str | None:
        return None


@dataclass(frozen=True, kw_only=True)
class NameUndefined(Finding):
    """A name read (or assigned, `context="assignment"`) that nothing binds (PN101)."""

    code = "PN101"
    name: str
    context: NameContext

    @property
    def message(self) -> str:
        where = {"interpolation": " in string interpolation",
                 "assignment": " (assigned before any `let`)"}.get(self.context, "")
        return f"undefined name `{self.name}`{where}"

    @property
    def help(self) -> str | None:
        return f"bind it first with `let {self.name} = ...`" if self.context == "assignment" else None


@dataclass(frozen=True, kw_only=True)
class BadCallTarget(Finding):
    """`call X` where X is no slot, service variable, alias or block (PN102); `name` is
    empty when the target is not a name."""

    code = "PN102"
    name: str

    @property
    def message(self) -> str:
        if self.name:
            return f"`{self.name}` is not a slot, service variable, `use` alias or block"
        return "a call target must be a name"


@dataclass(frozen=True, kw_only=True)
class ReadOnlyAssigned(Finding):
    """A slot, config key, parameter, constant, loop, catch variable or block is assigned
    (PN103); `what` says which, `bound` where it was bound (None for a declared name)."""

    code = "PN103"
    name: str
    what: str
    bound: Span | None = None

    @property
    def message(self) -> str:
        return f"cannot assign `{self.name}`: it is a {self.what}"

    @property
    def labels(self) -> tuple[Label, ...]:
        return (Label(self.bound, f"`{self.name}` is bound here"),) if self.bound else ()

    @property
    def help(self) -> str | None:
        return "bind a new variable with `let` instead"


@dataclass(frozen=True, kw_only=True)
class LetRepeated(Finding):
    """A second `let` statement binds a name already bound at `first` (PN104)."""

    code = "PN104"
    name: str
    first: Span

    @property
    def message(self) -> str:
        return f"`{self.name}` is already bound; this `let` assigns it"

    @property
    def labels(self) -> tuple[Label, ...]:
        return (Label(self.first, "first bound here"),)

    @property
    def help(self) -> str | None:
        return f"write `{self.name} = ...` to make the update explicit"


@dataclass(frozen=True, kw_only=True)
class ArityMismatch(Finding):
    """`do name(args)` with `given` arguments for a block of `wanted` parameters (PN108)."""

    code = "PN108"
    name: str
    block: Span
    wanted: int
    given: int

    @property
    def message(self) -> str:
        return f"block `{self.name}` takes {self.wanted} argument(s), {self.given} given"

    @property
    def labels(self) -> tuple[Label, ...]:
        return (Label(self.block, "block defined here"),)


@dataclass(frozen=True, kw_only=True)
class LoopControlMisplaced(Finding):
    """`continue` or `break` with no loop around it (PF201)."""

    code = "PF201"
    keyword: Literal["continue", "break"]

    @property
    def message(self) -> str:
        return f"`{self.keyword}` outside a loop"


@dataclass(frozen=True, kw_only=True)
class StrayClause(Finding):
    """An `elif`, `else`, `catch` or `finally` with no statement to belong to (PF202)."""

    code = "PF202"
    keyword: str

    @property
    def owner(self) -> str:
        return "`try`" if self.keyword in ("catch", "finally") else "`if`"

    @property
    def message(self) -> str:
        return f"`{self.keyword}` without {self.owner}"

    @property
    def help(self) -> str | None:
        return f"place it directly after the {self.owner} block, at the same indentation"


@dataclass(frozen=True, kw_only=True)
class ReadBeforeJoin(Finding):
    """A parallel branch reads a name a sibling branch binds, at `bound` (PF203)."""

    code = "PF203"
    name: str
    bound: Span

    @property
    def message(self) -> str:
        return (f"`{self.name}` is bound by another parallel branch and is not available "
                "before the join")

    @property
    def labels(self) -> tuple[Label, ...]:
        return (Label(self.bound, "bound here"),)


@dataclass(frozen=True, kw_only=True)
class SiblingsBindSameName(Finding):
    """Two branches of one `parallel:` bind the same name, the first at `first` (PF204)."""

    code = "PF204"
    name: str
    first: Span

    @property
    def message(self) -> str:
        return f"`{self.name}` is bound by two parallel branches"

    @property
    def labels(self) -> tuple[Label, ...]:
        return (Label(self.first, "first bound here"),)


@dataclass(frozen=True, kw_only=True)
class BranchWritesOuter(Finding):
    """A parallel branch writes a variable bound outside it, at `bound` (PF205); `verb`
    says how (`assigns`, `records into`, `appends into`)."""

    code = "PF205"
    name: str
    bound: Span
    verb: str

    @property
    def message(self) -> str:
        return f"a parallel branch {self.verb} outer variable `{self.name}` (a race)"

    @property
    def labels(self) -> tuple[Label, ...]:
        return (Label(self.bound, "bound outside the branch here"),)

    @property
    def help(self) -> str | None:
        return "collect branch values with `let xs = parallel for ...` instead"


@dataclass(frozen=True, kw_only=True)
class Unreachable(Finding):
    """The first statement after an unconditional `return`, `throw`, `break` or
    `continue` (`keyword`, at `exit`) in the same block (PF206)."""

    code = "PF206"
    keyword: str
    exit: Span

    @property
    def message(self) -> str:
        return f"unreachable: this follows an unconditional `{self.keyword}`"

    @property
    def labels(self) -> tuple[Label, ...]:
        return (Label(self.exit, f"`{self.keyword}` here"),)


@dataclass(frozen=True, kw_only=True)
class EmptyConditionText(Finding):
    """An `if`, `elif`, `loop until/while` or `choice` condition with no text once the
    `**` markers are removed (PC401)."""

    code = "PC401"

    @property
    def message(self) -> str:
        return "empty condition"


@dataclass(frozen=True, kw_only=True)
class BlindJudge(Finding):
    """A discretion condition (`text`) that mentions no value in scope, so its judge
    would see nothing (PC402)."""

    code = "PC402"
    text: str

    @property
    def message(self) -> str:
        return f"the judge for `{self.text}` would see no value: it names nothing in scope"

    @property
    def help(self) -> str | None:
        return "mention the variable the judgement is about, e.g. `draft`"


@dataclass(frozen=True, kw_only=True)
class ConditionNotExpression(Finding):
    """A condition (`text`) that reads as code but does not parse, for `problem` (PS200)."""

    code = "PS200"
    text: str
    problem: str

    @property
    def message(self) -> str:
        return f"the condition `{self.text}` is not an expression: {self.problem}"

    @property
    def help(self) -> str | None:
        return JUDGE_HINT


@dataclass(frozen=True, kw_only=True)
class BadAssignTarget(Finding):
    """An assignment, `record` or `append` whose target is not rooted at a name (no rule
    reports it yet)."""


@dataclass(frozen=True, kw_only=True)
class LoopVariableShadows(Finding):
    """A loop variable named like a declared name or another binding, at `bound` (no rule
    reports it yet)."""

    name: str
    bound: Span | None = None
