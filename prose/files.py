"""Reading a source file the way every command and the run time do.

Below everything that reads a pattern, an instance, a script or a trace's
source: I/O problems raise `InputReadError` (the CLI's exit 2), a file that is
not UTF-8 text or is empty raises `ProseSyntaxError` with its position (exit 1).
"""

from __future__ import annotations

from pathlib import Path

from prose.errors import InputReadError, ProseSyntaxError
from prose.source import Span


def read_text(path: str) -> str:
    """The file's text. Raises InputReadError (exit 2) or ProseSyntaxError (exit 1)."""
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise InputReadError(f"{path}: is a directory") from None
    except FileNotFoundError:
        raise InputReadError(f"{path}: no such file") from None
    except OSError as error:
        raise InputReadError(f"{path}: cannot read: {error.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise ProseSyntaxError.at(
            Span.point(path, line, column), "the file is not UTF-8 text"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise ProseSyntaxError.at(Span.point(path, 1, 1), "the file is empty")
    return text
