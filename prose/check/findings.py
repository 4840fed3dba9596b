"""What the semantic model finds: one class per kind of problem.

`prose.check.semantic` records these while it resolves names; a rule asks the
model for the findings of its class (`model.findings_of(ReadOnlyAssigned)`)
and turns each into a diagnostic. Detection and report meet at a class, so a
misspelt kind is a name error (and a mypy error), not a rule that never fires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from prose.source import Span

# Where an undefined name was met.
NameContext = Literal["read", "interpolation", "condition", "call-target", "do", "assignment", "agent"]


@dataclass(frozen=True, kw_only=True)
class Finding:
    """A fact a rule turns into a diagnostic, at `span`."""

    span: Span


@dataclass(frozen=True, kw_only=True)
class NameUndefined(Finding):
    """A name read (or assigned, `context="assignment"`) that nothing binds (PN101)."""

    name: str
    context: NameContext


@dataclass(frozen=True, kw_only=True)
class BadCallTarget(Finding):
    """`call X` where X is no slot, service variable, alias or block (PN102); `name` is
    empty when the target is not a name."""

    name: str


@dataclass(frozen=True, kw_only=True)
class ReadOnlyAssigned(Finding):
    """A slot, config key, parameter, constant, loop, catch variable or block is assigned
    (PN103); `what` says which, `bound` where it was bound (None for a declared name)."""

    name: str
    what: str
    bound: Span | None = None


@dataclass(frozen=True, kw_only=True)
class LetRepeated(Finding):
    """A second `let` statement binds a name already bound at `first` (PN104)."""

    name: str
    first: Span


@dataclass(frozen=True, kw_only=True)
class ArityMismatch(Finding):
    """`do name(args)` with `given` arguments for a block of `wanted` parameters (PN108)."""

    name: str
    block: Span
    wanted: int
    given: int


@dataclass(frozen=True, kw_only=True)
class LoopControlMisplaced(Finding):
    """`continue` or `break` with no loop around it (PF201)."""

    keyword: Literal["continue", "break"]


@dataclass(frozen=True, kw_only=True)
class StrayClause(Finding):
    """An `elif`, `else`, `catch` or `finally` with no statement to belong to (PF202)."""

    keyword: str


@dataclass(frozen=True, kw_only=True)
class ReadBeforeJoin(Finding):
    """A parallel branch reads a name a sibling branch binds, at `bound` (PF203)."""

    name: str
    bound: Span


@dataclass(frozen=True, kw_only=True)
class SiblingsBindSameName(Finding):
    """Two branches of one `parallel:` bind the same name, the first at `first` (PF204)."""

    name: str
    first: Span


@dataclass(frozen=True, kw_only=True)
class BranchWritesOuter(Finding):
    """A parallel branch writes a variable bound outside it, at `bound` (PF205); `verb`
    says how (`assigns`, `records into`, `appends into`)."""

    name: str
    bound: Span
    verb: str


@dataclass(frozen=True, kw_only=True)
class Unreachable(Finding):
    """The first statement after an unconditional `return`, `throw`, `break` or
    `continue` (`keyword`, at `exit`) in the same block (PF206)."""

    keyword: str
    exit: Span


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
