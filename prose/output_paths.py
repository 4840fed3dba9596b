"""Where a command writes: one rule for every file prose writes that a person names.

- An output is never one of the files the command reads (`same_file`, `check_output`):
  `prose run --trace q.prose.md` wrote its trace over its own pattern, `prose report
  tr.jsonl -o tr.jsonl` its page over its trace. Hard links and links are followed when
  comparing, so another name for the same file is the same file.
- An output is never written through a symbolic link (`open_output`, `O_NOFOLLOW`): a
  link planted where a trace or a report goes would overwrite whatever it points at.
- An output belongs to one writer at a time (`open_output(..., lock=True)`, `flock`): a
  second run (or batch) naming the same file is refused before it cuts anything.

Used by `prose run` (its trace), `prose report` (its page) and `prose batch` (its results).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

from prose.errors import InputReadError

LINK_REASON = "it is a symbolic link, not followed"
BUSY_REASON = "another process is writing it (it holds the file's lock)"


class OutputClash(InputReadError):
    """An output path is a file the command reads (exit 2)."""


class OutputBusy(OSError):
    """Another process holds the output file's lock."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(errno.EWOULDBLOCK, BUSY_REASON, str(path))


Reads = Iterable[tuple[str, "str | Path | None"]]  # (what it is, its path) of each file read


def same_file(output: str | Path, reads: Reads) -> tuple[str, str] | None:
    """The first `(what, path)` of `reads` that `output` is the same file as (links and hard
    links followed), else None. A path that does not exist is no file yet: it clashes
    with nothing."""
    try:
        written = os.stat(output)
    except OSError:
        return None
    for what, path in reads:
        if path is None:
            continue
        try:
            read = os.stat(path)
        except OSError:
            continue
        if (read.st_dev, read.st_ino) == (written.st_dev, written.st_ino):
            return what, str(path)
    return None


def check_output(flag: str, output: str | Path, reads: Reads, purpose: str) -> None:
    """Raise `OutputClash` when `output` (given as `flag`) is a file of `reads`: `--trace q.prose.md is the pattern q.prose.md: the trace needs a file of its own
    (writing it would destroy what this command reads)`."""
    clash = same_file(output, reads)
    if clash is not None:
        what, path = clash
        raise OutputClash(f"{flag} {output} is {what} {path}: {purpose} a file of its own "
                          "(writing it would destroy what this command reads)")


def open_output(path: str | Path, *, lock: bool = False, truncate: bool = True) -> int:
    """Open `path` for writing (created `0o644`) without following a symbolic link, and return
    its descriptor. `lock`: take the file's exclusive lock first, and cut it (`truncate`)
    only once it is held, so a file another process writes is left whole. Raises OSError:
    `errno.ELOOP` for a link, `OutputBusy` for a file another process holds."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    if truncate and not lock:
        flags |= os.O_TRUNC
    try:
        handle = os.open(path, flags, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP or Path(path).is_symlink():
            raise OSError(errno.ELOOP, LINK_REASON, str(path)) from None
        raise
    if not lock:
        return handle
    try:
        lock_exclusive(handle, path)
        if truncate and os.path.isfile(path):
            os.ftruncate(handle, 0)
    except BaseException:
        os.close(handle)
        raise
    return handle


def lock_exclusive(handle: int, path: str | Path) -> None:
    """Take the exclusive lock of the open file `handle` without waiting; `OutputBusy` when
    another process holds it. The lock goes with the descriptor's last close."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system: no lock
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise OutputBusy(path) from None
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise  # a file that takes no lock (a device, some network file systems) is left be
