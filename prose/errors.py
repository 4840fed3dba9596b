"""The root error class and the errors every stage shares (no dependencies)."""

from __future__ import annotations

from dataclasses import dataclass

from prose.source import Span, code_frame

# Every C0 control character but tab and newline, DEL and the C1 controls: as escapes they
# cannot move the cursor, clear the screen, set a window title or write the clipboard
# (OSC 52); a single-byte C1 `\x9b` is a CSI on some terminals.
_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))
             if chr(code) not in "\t\n"}


def printable(text: str) -> str:
    """`text` safe to print on a terminal: its control characters (ESC, BEL, CR, DEL, the
    C1 range) written as escapes, `\\x1b` as the four characters `\\x1b`; tabs and newlines
    kept, so a message of many lines stays one. For every message shown that holds text
    from outside (a model, a provider, a file, an argument): progress lines
    (`prose.runtime.progress`), errors (`prose.cli.inputs.shown`)."""
    return text.translate(_CONTROLS)


class ProseError(Exception):
    """Root of every error this package raises on purpose."""


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    """One syntax error: where, what, and the code frame around it."""

    span: Span
    message: str
    frame: str = ""

    def format(self) -> str:
        head = f"{self.span}: {self.message}"
        return f"{head}\n{self.frame}" if self.frame else head


class ProseSyntaxError(ProseError):
    """The input is not a valid pattern file or program.

    Carries every problem found (the parser recovers where it can); `file`,
    `line`, `column` and `message` describe the first one.
    """

    def __init__(self, problems: list[SyntaxProblem]) -> None:
        if not problems:
            raise ValueError("ProseSyntaxError needs at least one problem")
        self.problems = tuple(problems)
        first = self.problems[0]
        self.file = first.span.file
        self.line = first.span.line
        self.column = first.span.column
        self.message = first.message
        self.frame = first.frame
        super().__init__(first.format())

    @classmethod
    def at(cls, span: Span, message: str, text: str | None = None) -> ProseSyntaxError:
        frame = code_frame(text, span) if text else ""
        return cls([SyntaxProblem(span, message, frame)])

    def format(self) -> str:
        return "\n".join(problem.format() for problem in self.problems)


class InputReadError(ProseError):
    """A path could not be read (exit code 2)."""
