"""The trace's file: whole lines, a seal, and what is kept when the disk fills up.

`Trace` (trace.py) encodes events and keeps the hash chain; this writes their lines.
Lines wait in memory until a checkpoint (a finished call) and are then written
unbuffered, so what reached the file is known to the byte. A write that fails (a
full disk: ENOSPC, a file-size limit: EFBIG) cuts the file back to its last whole
line and raises `TraceUnwritable`: the run stops, since a call it paid for now could
not be recorded. `close` seals what the file holds; room for the seal is kept from the
start (`_reserve_seal`), because a disk the trace filled has none left for it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from pathlib import Path

from prose.output_paths import open_output
from prose.runtime.integrity import seal_path

_BUFFER = 1 << 16  # bytes of lines that wait for a checkpoint at most


class TraceUnwritable(Exception):
    """The trace file could not be written (a full disk, a file-size limit): the run must
    stop, since a call it pays for now could not be recorded. Not a `ProseRuntimeError`, so
    no `catch` in a program takes it; the runner ends the run with exit 2 (`RunIOError`)."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"cannot write the trace {path}: {error.strerror or error}")
        self.error = error


class TraceWriter:
    """Appends encoded lines to `path` (created, with its folder); `close` seals it.

    The file is opened as every named output is (`prose.output_paths.open_output`): never
    through a symbolic link (OSError `ELOOP`), and locked until `close`, so a second run
    naming the same trace is refused (`OutputBusy`) before it cuts the first one's lines."""

    def __init__(self, path: Path, sync: bool) -> None:
        self.path = path
        self.sync = sync
        try:
            handle = open_output(path, lock=True)
        except FileNotFoundError:  # its folder is new (the rows of a batch share one)
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = open_output(path, lock=True)
        self._file = os.fdopen(handle, "wb", buffering=0)
        self._open = True
        self._pending = bytearray()
        self._pending_last: str | None = None  # the sha256 of the last line waiting
        self._written = 0  # bytes in the file, whole lines only
        self._whole = hashlib.sha256()  # of the bytes in the file: the seal, without a re-read
        self.last_line: str | None = None  # the sha256 of the file's last line
        # Why the file could not be written; from then on lines wait until `close`.
        self.failure: OSError | None = None
        self.sealed = False
        self._reserve = _reserve_seal(path)

    def append(self, line: bytes, sha256: str, checkpoint: bool) -> None:
        """Add an encoded line (`sha256`: of the line without its newline); a checkpoint
        writes every line waiting. Raises `TraceUnwritable` on the first write that fails."""
        self._pending += line
        self._pending_last = sha256
        if self.failure is None and (checkpoint or len(self._pending) >= _BUFFER):
            self._flush()

    def _flush(self) -> None:
        if not self._open or not self._pending:
            return
        done = 0
        try:
            while done < len(self._pending):
                wrote = self._file.write(self._pending[done:] if done else self._pending)
                if not wrote:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += wrote
        except OSError as error:
            self._keep_whole_lines(done)
            if self.failure is None:
                self.failure = error
                raise TraceUnwritable(self.path, error) from None
            return
        self._whole.update(self._pending)
        self._written += done
        self.last_line = self._pending_last
        self._pending.clear()

    def _keep_whole_lines(self, done: int) -> None:
        """After a failed write of which `done` bytes reached the file: cut the file after
        its last whole line, and drop the lines that did not reach it (later lines chain
        to `last_line`, and may still fit when `close` tries)."""
        whole = self._pending.rfind(b"\n", 0, done) + 1
        with contextlib.suppress(OSError):
            os.ftruncate(self._file.fileno(), self._written + whole)
            self._file.seek(self._written + whole)
        if whole:
            kept = self._pending[:whole]
            self._whole.update(kept)
            self._written += whole
            start = kept.rfind(b"\n", 0, whole - 1) + 1
            self.last_line = hashlib.sha256(kept[start:whole - 1]).hexdigest()
        del self._pending[:]

    def lines_kept(self) -> int:
        """How many lines the file holds (after a failure: what a reader will find)."""
        with contextlib.suppress(OSError), self.path.open("rb") as file:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 16), b""))
        return 0

    def abandon(self) -> None:
        """Close the file without sealing it (a trace that could not be written at all)."""
        if self._open:
            self._open = False
            with contextlib.suppress(OSError):
                self._file.close()
        if self._reserve is not None:
            with contextlib.suppress(OSError):
                self._reserve.unlink()
            self._reserve = None

    def close(self) -> None:
        """Write what waits, close the file and seal it: `<trace>.sha256` holds the whole
        file's sha256 (`sha256sum -c` checks it). With `sync`, the file, its seal and their
        folder are `fsync`ed before this returns. A failed trace is sealed as far as it
        goes and close does not raise for it: see `_close_failed`."""
        if not self._open:
            return
        if self.failure is None:
            with contextlib.suppress(TraceUnwritable):
                self._flush()
        if self.failure is not None:
            self._close_failed()
            return
        self._open = False
        try:
            if self.sync:
                os.fsync(self._file.fileno())
        except OSError as error:
            self.failure = error
        finally:
            with contextlib.suppress(OSError):
                self._file.close()
        self.sealed = self._write_seal(self._whole.hexdigest())
        if self.sync:
            sync_folder(self.path.parent)

    def _close_failed(self) -> None:
        """Close a trace whose writes failed. A full disk may have room for the lines still
        waiting (the error and `run_end`) or for the seal, not both: the seal is written
        first, for the file as it will be with those lines; then the lines; if they do not
        fit, the file keeps its last whole line and the seal (same length, rewritten in
        place) covers that. `sealed` says whether a seal that holds was left."""
        planned = self._whole.copy()
        planned.update(self._pending)
        self.sealed = self._write_seal(planned.hexdigest())
        failure, self.failure = self.failure, None
        try:
            self._flush()
        except TraceUnwritable:
            if self.sealed:
                self.sealed = self._write_seal(self._whole.hexdigest(), in_place=True)
        finally:
            self.failure = failure
        self._open = False
        with contextlib.suppress(OSError):
            self._file.close()

    def _write_seal(self, digest: str, in_place: bool = False) -> bool:
        """Write the seal; False (and no seal file) when it cannot be written. `in_place`
        rewrites a seal of the same length without freeing its space first."""
        path = seal_path(self.path)
        seal = f"{digest}  {self.path.name}\n".encode()
        reserve, self._reserve = self._reserve, None
        target = reserve if reserve is not None and not in_place else path
        flags = os.O_WRONLY | os.O_CREAT | (0 if in_place or reserve else os.O_TRUNC)
        try:
            handle = os.open(target, flags, 0o644)
            try:
                if os.pwrite(handle, seal, 0) != len(seal):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                os.ftruncate(handle, len(seal))
                if self.sync:
                    os.fsync(handle)
            finally:
                os.close(handle)
            if target != path:
                os.replace(target, path)
        except OSError as error:
            if reserve is not None:
                with contextlib.suppress(OSError):
                    reserve.unlink()
            if self.failure is None:
                self.failure = error
            with contextlib.suppress(OSError):  # a torn seal would say the trace was edited
                path.unlink()
            return False
        return True


def _reserve_seal(path: Path) -> Path | None:
    """Keep room for the seal while the run writes its trace: a hidden file of one block
    beside it, which `close` fills with the seal and renames. A disk that fills during the
    run then still takes the seal of what the trace kept. None when there is no room even
    now, or the trace is no regular file (`--trace /dev/full`)."""
    if not path.is_file():
        return None
    reserve = path.with_name(f".{path.name}.sha256.part")
    try:
        handle = os.open(reserve, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError:
        return None
    try:
        os.write(handle, bytes(4096))
    except OSError:
        os.close(handle)
        with contextlib.suppress(OSError):
            reserve.unlink()
        return None
    os.close(handle)
    return reserve


def sync_folder(folder: Path) -> None:
    """`fsync` a folder, so the names of files created in it last a crash of the machine."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform that cannot open folders (Windows): nothing to sync
        return
    try:
        os.fsync(handle)
    except OSError:  # a file system that cannot sync a folder
        pass
    finally:
        os.close(handle)
