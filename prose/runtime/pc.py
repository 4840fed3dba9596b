"""Where a task runs: the strict-mode program counter and the parallel branch path.

Inside a body that runs depending on a condition, the pc carries the
condition's label (`prose.lang.flows`); every value bound there carries it
too. The branch path names the parallel branches a statement runs inside
(one element per branch, each execution of a `parallel` its own serial), so
a call output records whose chain it belongs to. Both are context
variables, so that each parallel branch (an asyncio task) inherits its
parent's and never sees a sibling's.
"""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from prose.lang.flows import NO_LABEL, BranchPath, Label

_pc: contextvars.ContextVar[Label] = contextvars.ContextVar("prose_pc", default=NO_LABEL)
# What conditional `throw`s raised: it outlives the body that raised it (`raise_rest`).
_escaping: contextvars.ContextVar[Label] = contextvars.ContextVar("prose_escaping", default=NO_LABEL)
# What conditional early exits raised in the running loop's iterations (`raise_rest`):
# a later iteration runs only because no earlier one left (`iterations`).
_left: contextvars.ContextVar[Label] = contextvars.ContextVar("prose_left", default=NO_LABEL)
_branch: contextvars.ContextVar[BranchPath] = contextvars.ContextVar("prose_branch", default=())
_serials = itertools.count(1)


def branch() -> BranchPath:
    """The parallel branches the running statement is inside, outermost first."""
    return _branch.get()


def execution() -> int:
    """A new serial for one execution of a `parallel` statement or loop."""
    return next(_serials)


def enter_branch(node: str, serial: int, position: int) -> None:
    """Mark the running task (a parallel branch) as branch `position` of that execution."""
    _branch.set((*_branch.get(), f"{node}@{serial}#{position}"))


def current() -> Label:
    """The labels of the conditions the running statement depends on."""
    return _pc.get()


def raise_rest(label: Label, escaping: bool = False) -> None:
    """Raise the pc for the rest of the running body (after an `if` whose arm could have
    left it early); the body restores it when it ends (`restore`). `escaping`: the arm
    could `throw`, which leaves every enclosing body up to the `try` that catches it, so
    the raise outlives this body (and a block's) until then (`enter_try`)."""
    if label:
        _pc.set(_pc.get() | label)
        _left.set(_left.get() | label)
        if escaping:
            _escaping.set(_escaping.get() | label)


def restore(saved: Label) -> None:
    """End a body: back to the pc it started with, keeping what a conditional `throw`
    raised (`raise_rest(..., escaping=True)`)."""
    _pc.set(saved | _escaping.get())


def enter_try() -> tuple[Label, Label]:
    """Start a `try` body that has a `catch`: a `throw` inside it stops there. Returns what
    `leave_try` needs."""
    outer = (_pc.get(), _escaping.get())
    _escaping.set(NO_LABEL)
    return outer


def leave_try(outer: tuple[Label, Label]) -> Label:
    """End a `try` body (before its `catch` runs): the pc and the escaping raise as they
    were before it. Returns what conditional throws inside it raised: the statements
    after the `try` depend on it only if its `catch` can leave early."""
    inner = _escaping.get()
    _pc.set(outer[0])
    _escaping.set(outer[1])
    return inner


@contextmanager
def raised(label: Label) -> Iterator[None]:
    """Run a body under the current pc joined with `label`."""
    if not label:
        yield
        return
    saved = _pc.get()
    _pc.set(saved | label)
    try:
        yield
    finally:
        restore(saved)


@contextmanager
def iterations() -> Iterator[Callable[[], Label]]:
    """A sequential loop: gives a function of what conditional early exits (`break`,
    `continue`, `return`, `throw` under a condition) raised in its iterations so far. The
    next iteration runs only because none of them left, so it runs under that too (the
    loop's `raised(so_far())`), in both engines (`prose.check.flow`)."""
    outer = _left.get()
    _left.set(NO_LABEL)
    try:
        yield _left.get
    finally:
        _left.set(outer)
