"""The program counter label of strict mode (`prose.lang.flows`), per task.

Inside a body that runs depending on a condition, the pc carries the
condition's label; every value bound there carries it too. A context
variable, so that each parallel branch (an asyncio task) inherits its
parent's pc and never sees a sibling's.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from prose.lang.flows import NO_LABEL, Label

_pc: contextvars.ContextVar[Label] = contextvars.ContextVar("prose_pc", default=NO_LABEL)


def current() -> Label:
    """The labels of the conditions the running statement depends on."""
    return _pc.get()


@contextmanager
def raised(label: Label) -> Iterator[None]:
    """Run a body under the current pc joined with `label`."""
    if not label:
        yield
        return
    token = _pc.set(_pc.get() | label)
    try:
        yield
    finally:
        _pc.reset(token)
