"""The results file: one JSON line per row, in input order, appended as rows finish.

Rows finish out of order; a finished row waits in memory until every row
before it is written (the executors keep a bounded window of rows in flight,
so that wait is bounded too). Each write appends every line that has become
ready in one `write` of an `O_APPEND` file, so a crash of the process (kill -9
included: the kernel keeps what was written) leaves the results file a prefix
of whole rows, at worst followed by one torn line. The file is `fsync`ed at
most every `FSYNC_EVERY_S` and when it is closed, so a crash of the machine
loses at most that much of the newest rows, which `--resume` runs again (a
blocking `fsync` per row held every call in flight back). Given `traces`,
the batch's traces folder, each of those syncs first syncs the
file system holding it (`syncfs`, Linux; elsewhere the rows' traces are left
to the operating system), so the traces of the rows written so far
reach the disk before their lines are synced: one system call for every
trace finished since the last one.

`--resume` keeps the longest prefix of finished rows (`scan`: statuses ok,
error and hiding-violation, each line's `row` its position) and cuts the
file there; every row after it runs again (or is taken from its trace, see
`prose.batch.plan.run_row`). A finished row counts only while its line's
`inputs_sha256` is the digest of the inputs file's row now (`scan(digests=...)`):
a result is never kept for other inputs.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prose.batch.plan import FINISHED

FSYNC_EVERY_S = 0.5


@dataclass
class Tally:
    """Totals over rows: counts by status, calls, tokens, cost."""

    rows: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    cache_hits: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def add(self, record: dict[str, Any]) -> None:
        self.rows += 1
        status = str(record.get("status"))
        self.by_status[status] = self.by_status.get(status, 0) + 1
        self.calls += int(record.get("calls") or 0)
        self.cache_hits += int(record.get("cache_hits") or 0)
        self.tokens += int(record.get("tokens") or 0)
        self.cost_usd += float(record.get("cost_usd") or 0.0)

    @property
    def ok(self) -> int:
        return self.by_status.get("ok", 0)

    @property
    def failed(self) -> int:
        return self.by_status.get("error", 0) + self.by_status.get("hiding-violation", 0)


@dataclass(frozen=True)
class Prefix:
    """The finished rows at the start of an existing results file."""

    rows: int
    size: int  # bytes they take
    tally: Tally
    # Finished rows after `rows` dropped because the inputs file no longer has their inputs
    # there (their `inputs_sha256` differs from the row's, or is missing).
    changed: int = 0


def scan(path: Path, digests: Iterator[str] | None = None) -> Prefix:
    """The longest prefix of finished rows of the results file at `path` (none if absent).

    With `digests` (the `inputs_sha256` of each row of the inputs file, in order), the
    prefix also stops at the first row whose recorded digest is not the row's now: a row
    inserted, removed, reordered or edited runs again, with every row after it, rather than
    keep the result of other inputs. `changed` counts the finished rows so dropped.
    """
    tally = Tally()
    size = 0
    changed = 0
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return Prefix(0, 0, tally)
    with handle:
        for raw in handle:
            line = _finished_line(raw, tally.rows + changed)
            if line is None:
                break
            if changed or (digests is not None
                           and line.get("inputs_sha256") != next(digests, None)):
                changed += 1  # counted, not kept: it runs again
                continue
            tally.add(line)
            size += len(raw)
    return Prefix(tally.rows, size, tally, changed)


def _finished_line(raw: bytes, row: int) -> dict[str, Any] | None:
    """The results line `raw` when it is whole and the finished row `row`, else None."""
    if not raw.endswith(b"\n"):
        return None  # torn by a crash
    try:
        line = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(line, dict) or line.get("row") != row or line.get("status") not in FINISHED:
        return None
    return line


class ResultsBusy(Exception):
    """Another process is writing the results file (it holds the file's lock)."""


class ResultsUnwritable(Exception):
    """A results line could not be written (a full disk): the file was cut back to its last
    whole row; `rows` rows are in it. The batch stops (exit 2); `--resume` continues."""

    def __init__(self, path: Path, error: OSError, rows: int) -> None:
        super().__init__(f"cannot write the results {path}: {error.strerror or error}")
        self.error = error
        self.rows = rows


class ResultsFile:
    """Appends rows in input order from `start` on; `written` is called for each row written.

    Every line is written with `secrets` masked (`prose.llm.redact`, the one masking rule of
    the traces): a provider that echoes a key leaves it in no row's result or error.

    The file is locked (`flock`, exclusive) from opening to `close`: a second batch writing
    it, or a `--resume` while the first still runs, gets `ResultsBusy` before it reads or
    cuts anything. Open it, then `scan` it and `keep` the finished prefix.
    """

    def __init__(
        self,
        path: Path,
        written: Callable[[dict[str, Any]], None] | None = None,
        traces: Path | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
        from prose.llm.redact import JsonScrubber

        self._scrubber = JsonScrubber(secrets)
        self.path = path
        self.traces = traces
        self.next = 0
        self.pending: dict[int, dict[str, Any]] = {}
        self.written = written
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            _lock(self._fd, path)
        except BaseException:
            os.close(self._fd)
            self._fd = -1
            raise
        self._synced = time.monotonic()
        self._size = 0  # bytes of whole rows in the file (from `keep` on)
        self.failure: ResultsUnwritable | None = None

    def keep(self, prefix: Prefix) -> None:
        """Continue after `prefix` (what `scan` found): drop what follows it."""
        self.next = prefix.rows
        os.ftruncate(self._fd, prefix.size)
        os.fsync(self._fd)
        self._size = prefix.size

    def put(self, record: dict[str, Any]) -> int:
        """Add a finished row; write it and every row it was holding back. How many were written."""
        self.pending[int(record["row"])] = record
        ready: list[dict[str, Any]] = []
        while self.next in self.pending:
            ready.append(self.pending.pop(self.next))
            self.next += 1
        if ready:
            if self.failure is not None:
                raise self.failure
            data = "".join(self._scrubber.scrub(r)[0] + "\n" for r in ready)
            view = memoryview(data.encode("utf-8"))
            try:
                while view:
                    wrote = os.write(self._fd, view)
                    if not wrote:
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    view = view[wrote:]
            except OSError as error:
                self.failure = self._cut_back(error, len(ready))
                raise self.failure from None
            self._size += len(data.encode("utf-8"))
            if time.monotonic() - self._synced >= FSYNC_EVERY_S:
                self._sync()
                self._synced = time.monotonic()
            if self.written is not None:
                for row in ready:
                    self.written(row)
        return len(ready)

    def _cut_back(self, error: OSError, rows: int) -> ResultsUnwritable:
        """After a failed write of `rows` rows: the file keeps its whole rows only."""
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, self._size)
        self.next -= rows
        return ResultsUnwritable(self.path, error, self.next)

    def close(self) -> None:
        if self._fd >= 0:
            try:
                self._sync()
            except OSError as error:
                if self.failure is None:
                    self.failure = ResultsUnwritable(self.path, error, self.next)
            finally:
                os.close(self._fd)
                self._fd = -1

    def _sync(self) -> None:
        if self.traces is not None:
            sync_file_system(self.traces)
        os.fsync(self._fd)


def _lock(fd: int, path: Path) -> None:
    from prose.output_paths import OutputBusy, lock_exclusive

    try:
        lock_exclusive(fd, path)
    except OutputBusy:
        raise ResultsBusy() from None


def is_results_file(path: Path) -> bool:
    """Whether the file at `path` is absent, empty, or starts as a results file does (a JSON
    object naming its row): what `--resume` may cut after its finished rows."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(1 << 20)
    except FileNotFoundError:
        return True
    if not first:
        return True
    if not first.endswith(b"\n"):  # a first row torn by a crash
        return first.startswith(b'{"row": 0,')
    try:
        line = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(line, dict) and "row" in line and "status" in line


def sync_file_system(folder: Path) -> bool:
    """Write everything cached for the file system holding `folder` to its disk (Linux's
    `syncfs`). False when it could not: no such call here, or no such folder yet."""
    call = _syncfs()
    if call is None:
        return False
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return False
    try:
        return bool(call(handle) == 0)
    finally:
        os.close(handle)


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        call: Callable[[int], int] = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):  # a C library without it
        return None
    return call


def summary(
    before: Tally, now: Tally, seconds: float, out: Path, stopped: str | None = None,
    changed: int = 0,
) -> dict[str, Any]:
    """The batch's summary: every row in the results file, and what this invocation did
    (`changed`: results of an earlier invocation dropped because their inputs changed)."""
    rows = before.rows + now.rows
    by_status = dict(before.by_status)
    for status, count in now.by_status.items():
        by_status[status] = by_status.get(status, 0) + count
    return {
        "event": "summary",
        "results": str(out),
        "rows": rows,
        "rows_ok": by_status.get("ok", 0),
        "rows_failed": before.failed + now.failed,
        "rows_budget": by_status.get("budget", 0),
        "rows_waiting": by_status.get("waiting", 0),
        "rows_by_status": by_status,
        "rows_resumed": before.rows,  # finished by an earlier invocation, not run again
        # finished by an earlier invocation for other inputs: dropped, run again
        "rows_rerun_inputs_changed": changed,
        "calls": now.calls,
        "cache_hits": now.cache_hits,
        "tokens": now.tokens,
        "cost_usd": round(now.cost_usd, 8),
        "seconds": round(seconds, 3),
        "calls_per_s": round(now.calls / seconds, 1) if seconds > 0 else 0.0,
        "stopped": stopped,
    }


def summary_text(data: dict[str, Any]) -> str:
    """The summary as lines for a person."""
    resumed = f" ({data['rows_resumed']} finished before this run)" if data["rows_resumed"] else ""
    changed = data.get("rows_rerun_inputs_changed") or 0
    rerun = (f"\nresume: the inputs of row {data['rows_resumed']} changed since its result "
             f"was written: {changed} earlier result(s) from there on were dropped, and those "
             "rows ran again" if changed else "")
    stopped = "; stopped early by --fail-fast" if data.get("stopped") == "fail-fast" else ""
    traces = str(data["results"]).rsplit(".", 1)[0] + ".traces"
    waiting = (f", {data['rows_waiting']} waiting for a person (prose pending {traces}; "
               "answer, then --resume)") if data.get("rows_waiting") else ""
    return (
        f"rows: {data['rows']}{resumed}: {data['rows_ok']} ok, {data['rows_failed']} failed, "
        f"{data['rows_budget']} stopped by a budget{waiting}{stopped}\n"
        f"this run: {data['calls']:,} calls ({data['cache_hits']:,} from the cache or a trace), "
        f"{data['tokens']:,} tokens, ${data['cost_usd']:.4f}, {data['seconds']:.1f}s, "
        f"{data['calls_per_s']:.1f} calls/s\n"
        f"results: {data['results']}{rerun}"
    )
