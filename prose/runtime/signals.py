"""Control flow that is not an error: `return`, `break`, `continue`.

They are exceptions so that they unwind through nested statements and run
`finally`, but they do not derive from `ProseError`, so no `catch` handles
them (LANGUAGE.md 4.6).
"""

from __future__ import annotations

from prose.runtime.values import NULL, Value
from prose.source import Span


class Signal(Exception):
    def __init__(self, span: Span) -> None:
        super().__init__(type(self).__name__)
        self.span = span


class ReturnSignal(Signal):
    def __init__(self, span: Span, value: Value = NULL) -> None:
        super().__init__(span)
        self.value = value


class BreakSignal(Signal):
    pass


class ContinueSignal(Signal):
    pass
