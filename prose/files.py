"""Reading a source file the way every command and the run time do.

Below everything that reads a pattern, an instance, a script or a trace's
source: I/O problems raise `InputReadError` (the CLI's exit 2), a file that is
not UTF-8 text, is empty or is longer than a reader's bound raises
`ProseSyntaxError` with its position (exit 1).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from prose.errors import InputReadError, ProseSyntaxError
from prose.source import Span


def read_text(path: str | Path, *, limit: int | None = None, empty_ok: bool = False) -> str:
    """The file's text, without a byte order mark.

    `limit`: refuse a file longer than this many bytes (read no further).
    `empty_ok`: accept a file with nothing but white space in it.
    Raises InputReadError (exit 2) or ProseSyntaxError (exit 1).
    """
    name = str(path)
    try:
        with Path(path).open("rb") as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
    except IsADirectoryError:
        raise InputReadError(f"{name}: is a directory") from None
    except FileNotFoundError:
        raise InputReadError(f"{name}: no such file") from None
    except OSError as error:
        raise InputReadError(f"{name}: cannot read: {error.strerror or error}") from None
    if limit is not None and len(data) > limit:
        raise ProseSyntaxError.at(
            _point(name, data, limit), f"the file is longer than {limit:,} bytes"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ProseSyntaxError.at(
            _point(name, data, error.start), "the file is not UTF-8 text"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not empty_ok and not text.strip():
        raise ProseSyntaxError.at(Span.point(name, 1, 1), "the file is empty")
    return text


def _point(file: str, data: bytes, offset: int) -> Span:
    """The position of byte `offset` of `data` (1-based line and column)."""
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return Span.point(file, line, column)


def write_whole(path: str | Path, data: bytes) -> None:
    """Write `path` so that it holds either its old bytes or `data`, never part of either:
    `data` goes to a temporary file beside it (flushed to disk), which then replaces it.
    A link is written through (the file it names is replaced), and the file keeps its
    permissions. A file with other hard links is rewritten in place once the temporary
    copy has shown there is room, so the links stay one file; if that write still fails,
    the old bytes are put back. Raises OSError as the write did (nothing is left behind)."""
    target = Path(os.path.realpath(path))
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        old = target.stat()
    except FileNotFoundError:
        old = None
    try:
        with temporary.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if old is not None:
            os.chmod(temporary, stat.S_IMODE(old.st_mode))
        if old is not None and old.st_nlink > 1:
            _rewrite_in_place(target, data)
            temporary.unlink()
        else:
            os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _rewrite_in_place(target: Path, data: bytes) -> None:
    before = target.read_bytes()
    try:
        target.write_bytes(data)
    except OSError:
        target.write_bytes(before)  # it fitted before
        raise
