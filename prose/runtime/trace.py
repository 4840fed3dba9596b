"""The run trace: JSON Lines events, plain slotted dataclasses, written through one buffer.

The start of a run and each finished call or judgement (with what was
written before it) reach the file before the run goes on, so a crash, even
a kill -9, loses no finished call: `--resume` replays them. Other events
(notes, errors, the end) wait in the buffer for the next of those, or for
`close`. A flush hands the lines to the operating system, which is all a
killed process needs; `close` also `fsync`s the trace, its seal and their
folder, so a finished run's trace survives a crash of the machine too,
unless the caller makes many traces durable at once (`sync=False`: the rows
of `prose batch`, whose results file syncs their folder's file system).

Every event carries `prev`, the sha256 of the previous line (None for the
first), so the trace is a tamper-evident chain: `verify_chain` recomputes it
(`integrity.py` holds the rules a trace is checked by).
Secrets never reach the file: values under keys that name a secret are
masked and the values of secret-looking environment variables (and the LLM
config's keys) are replaced wherever they occur, before the line is written,
by the one masking rule of `prose.llm.redact`.

The events are dataclasses, not pydantic models: a run makes one per call, the
interpreter fills it in field by field as the call goes, and it is encoded once
(`Event.to_dict`, then one `json.dumps`: `encode`). Validating and
dumping a model cost more than the rest of the trace did (docs/benchmarks.md).
Readers of a trace take its lines as plain JSON (`read_events`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import errno
import hashlib
import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, Literal

from prose.llm.redact import JsonScrubber, run_secrets
from prose.runtime.integrity import (
    finite_json,
    link_problem,
    output_sha256,
    parse_line,
    read_line,
    seal_path,
)


def json_default(value: Any) -> Any:
    """How a trace line writes a value JSON has no form for: a date or time in ISO 8601,
    a set as a list, bytes as UTF-8 text, a path and anything else as its `str`."""
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def encode(data: Any) -> str:
    """The JSON text of a trace line: NaN and infinities as null (`integrity.finite`: JSON
    has no such numbers), other values JSON has no form for by `json_default`."""
    return finite_json(data, ensure_ascii=False, default=json_default)


@dataclass(slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens}


_FIELD_NAMES: dict[type[Event], tuple[str, ...]] = {}


def _field_names(kind: type[Event]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(item.name for item in dataclasses.fields(kind))
    return names


@dataclass(slots=True, kw_only=True)
class Event:
    """One line of a trace: its fields in declaration order, the base's first."""

    type: str
    time: float = field(default_factory=time.time)
    run_id: str = ""
    prev: str | None = None

    # The events a crash must not lose: flushed to the file as soon as written.
    checkpoint: ClassVar[bool] = False

    def to_dict(self) -> dict[str, Any]:
        """The event as its trace line holds it (before masking)."""
        data = {name: getattr(self, name) for name in _field_names(type(self))}
        usage = data.get("usage")
        if isinstance(usage, Usage):
            data["usage"] = usage.to_dict()
        return data


@dataclass(slots=True, kw_only=True)
class RunStart(Event):
    type: str = field(default="run_start", init=False)
    pattern: str
    pattern_sha256: str
    inputs: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    bindings: dict[str, Any] = field(default_factory=dict)
    models: dict[str, Any] = field(default_factory=dict)
    policy: dict[str, Any] | None = None
    resumed_from: str | None = None
    # Agents: every slot's declared tools `{slot, tool, writes}` (`prose.lang.tools`), so the
    # audit judges tool calls again from the trace alone.
    tools: list[dict[str, Any]] | None = None

    checkpoint: ClassVar[bool] = True  # a resumed run takes its inputs from it


@dataclass(slots=True, kw_only=True)
class CallEvent(Event):
    """One attempt of one call (sent, failed or served from the cache)."""

    type: str = field(default="call", init=False)
    id: str
    slot: str
    index: int | None = None
    service: str
    model: str | None = None
    file: str = ""
    line: int = 0
    column: int = 0
    path: str = ""
    attempt: int = 1
    messages: list[dict[str, Any]] = field(default_factory=list)
    output: Any = None
    error: dict[str, Any] | None = None
    provenance: list[str] = field(default_factory=list)
    transitive: list[str] = field(default_factory=list)
    # The parallel branch the call ran in, and the branches the call outputs it was given
    # were made in (for `each A sees only its own chain`); absent outside any parallel.
    branch: list[str] | None = None
    chains: list[tuple[str, list[str], int, int]] | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    cache_hit: bool = False
    key: str | None = None
    sha256: str | None = None
    # Requests the providers were sent for this attempt (retries, fallbacks, a re-ask).
    requests: int = 0
    # The provider's finish_reason when it is not a plain stop ("length": cut at the token cap).
    finish_reason: str | None = None
    # A failed attempt's last reply as the model gave it (a reply that failed its schema).
    reply: str | None = None
    # A person's answer (docs/people.md): who answered, when (ISO 8601, UTC), how
    # (`terminal`, `prose answer`, `script`), and their note.
    answered: dict[str, Any] | None = None
    # An agent's call (docs/agents.md): its tools, its turns, its workspace (isolation
    # mode, manifest digest, what changed in it).
    agent: dict[str, Any] | None = None
    # What the control-flow invariants evaluated before the call (`prose.lang.gates`):
    # `conditions` of `runs only if`, digests of the inputs `gets the same` compares.
    gates: dict[str, Any] | None = None

    checkpoint: ClassVar[bool] = True


@dataclass(slots=True, kw_only=True)
class ToolEvent(Event):
    """One tool call of an agent's call `call`, with its result: written when it ends.

    `output` is what the model read (masked, cut at the cap), `sha256` its digest;
    `isolation` says how a command was confined (`bwrap`, `context-only`); `refused`
    holds the policy's reasons when the call was not run.
    """

    type: str = field(default="tool", init=False)
    call: str
    slot: str
    tool: str
    kind: str
    turn: int
    tool_call_id: str = ""
    arguments: Any = None
    output: str = ""
    error: str | None = None
    sha256: str | None = None
    duration_ms: float = 0.0
    isolation: str | None = None
    exit_code: int | None = None
    file: str = ""
    line: int = 0
    provenance: list[str] = field(default_factory=list)
    refused: dict[str, Any] | None = None
    # What the model asked for, as it asked (the turn's cache key, the call's id, name and
    # argument text), so `--resume` replays this result instead of running the tool again.
    asked: dict[str, Any] | None = None
    replayed: bool = False

    checkpoint: ClassVar[bool] = True

    def to_dict(self) -> dict[str, Any]:
        data = Event.to_dict(self)
        if data.get("gates") is None:
            data.pop("gates", None)  # most calls have none: the line stays as it was
        return data


@dataclass(slots=True, kw_only=True)
class JudgeEvent(Event):
    """A discretion condition or a choice decided by the judge model."""

    type: str = field(default="judge", init=False)
    id: str
    kind: Literal["condition", "choice"]
    text: str
    file: str = ""
    line: int = 0
    path: str = ""
    model: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    options: list[str] | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    decision: Any = None
    reason: str | None = None
    error: dict[str, Any] | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    cache_hit: bool = False
    key: str | None = None
    requests: int = 0
    finish_reason: str | None = None

    checkpoint: ClassVar[bool] = True


@dataclass(slots=True, kw_only=True)
class NoteEvent(Event):
    """Something worth recording that is not an error: a loop reaching `max`, an ignored branch."""

    type: str = field(default="note", init=False)
    what: str
    message: str
    file: str = ""
    line: int = 0
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class ErrorEvent(Event):
    type: str = field(default="error", init=False)
    code: str
    kind: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    slot: str | None = None
    # For an information-hiding stop: the rules broken, and the refused call's channels
    # and branch as the policy judged them, so `prose audit` can judge them again.
    rules: list[str] | None = None
    refused: dict[str, Any] | None = None


@dataclass(slots=True, kw_only=True)
class RunEnd(Event):
    type: str = field(default="run_end", init=False)
    status: Literal["ok", "error", "budget", "violation", "interrupted", "waiting"]
    exit_code: int
    result: Any = None
    error: dict[str, Any] | None = None
    totals: dict[str, Any] = field(default_factory=dict)


_BUFFER = 1 << 16  # bytes of lines that wait for a checkpoint at most


class TraceUnwritable(Exception):
    """The trace file could not be written (a full disk, a file-size limit): the run must
    stop, since a call it pays for now could not be recorded. Not a `ProseRuntimeError`, so
    no `catch` in a program takes it; the runner ends the run with exit 2 (`RunIOError`)."""

    def __init__(self, trace: Trace, error: OSError) -> None:
        super().__init__(f"cannot write the trace {trace.path}: {error.strerror or error}")
        self.error = error


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Trace:
    """An append-only JSONL trace with a hash chain; `None` path keeps events in memory only.

    `secrets` (longest first) replaces the environment's and `extra_secrets` when a caller
    has worked them out already (the rows of a batch share one list). `sync=False` leaves
    the `fsync` of `close` to the caller.
    """

    def __init__(
        self,
        path: str | Path | None,
        run_id: str,
        *,
        extra_secrets: Sequence[str] = (),
        secrets: Sequence[str] | None = None,
        sync: bool = True,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.sync = sync
        self.run_id = run_id
        self.events: list[Event] = []
        self._prev: str | None = None
        self._scrubber = JsonScrubber(
            run_secrets(extra_secrets) if secrets is None else secrets, dumps=encode)
        self._file: BinaryIO | None = None
        self._counter = 0
        # Lines wait in `_pending` until a checkpoint; what reached the file is known to the
        # byte (`_written`), so a write that fails (a full disk) leaves whole lines only.
        self._pending = bytearray()
        self._written = 0
        self._whole = hashlib.sha256()  # of the bytes in the file: the seal, without a re-read
        self._prev_written: str | None = None  # the sha256 of the file's last line
        # Why the trace could not be written (a full disk, a file-size limit): from then on
        # lines wait in memory and `close` tries once more; `lost` says what it could not keep.
        self.failure: OSError | None = None
        self.sealed = False
        self._reserve: Path | None = None  # room kept for the seal (`_reserve_seal`)
        if self.path is not None:
            try:
                self._file = self.path.open("wb", buffering=0)
            except FileNotFoundError:  # its folder is new (the rows of a batch share one)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("wb", buffering=0)
            self._reserve = _reserve_seal(self.path)

    def next_id(self, prefix: str = "c") -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def emit(self, event: Event) -> Event:
        """Write `event` (with `run_id` and `prev` filled in) as one line; a call or a
        judgement is flushed to the file at once (`Event.checkpoint`)."""
        event.run_id = self.run_id
        event.prev = self._prev
        data = event.to_dict()
        # The one masking rule (`prose.llm.redact`), walked only when something may be masked.
        line, recorded = self._scrubber.scrub(data)
        if recorded is not data and isinstance(event, CallEvent) and event.sha256 and (
                recorded.get("output") != data.get("output")):
            # The digest vouches for the output as recorded, masked text included.
            recorded["sha256"] = output_sha256(recorded.get("output"))
            line = encode(recorded)
        encoded = (line + "\n").encode("utf-8")
        self._prev = hashlib.sha256(encoded[:-1]).hexdigest()
        self.events.append(event)
        if self._file is not None:
            self._pending += encoded
            if self.failure is None and (event.checkpoint or len(self._pending) >= _BUFFER):
                self._flush()
        return event

    def _flush(self) -> None:
        """Write the waiting lines. A write that fails (ENOSPC, EFBIG, EIO) cuts the file
        back to its last whole line, keeps the lines that did not fit in memory, and raises
        `TraceUnwritable`: the run stops there (it must not pay for calls it cannot record)."""
        if self._file is None or not self._pending:
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
                raise TraceUnwritable(self, error) from None
            return
        self._whole.update(self._pending)
        self._written += done
        self._prev_written = self._prev
        self._pending.clear()

    def _keep_whole_lines(self, done: int) -> None:
        """After a failed write of `_pending` of which `done` bytes reached the file: cut
        the file after the last whole line, and chain the lines still waiting to it."""
        assert self._file is not None
        whole = self._pending.rfind(b"\n", 0, done) + 1
        with contextlib.suppress(OSError):
            os.ftruncate(self._file.fileno(), self._written + whole)
            self._file.seek(self._written + whole)
        if whole:
            kept = self._pending[:whole]
            self._whole.update(kept)
            self._written += whole
            start = kept.rfind(b"\n", 0, whole - 1) + 1
            self._prev_written = hashlib.sha256(kept[start:whole - 1]).hexdigest()
        # Lines that did not reach the file are dropped from it; later events chain to the
        # last line the file holds (they may still fit when `close` tries).
        del self._pending[:]
        self._prev = self._prev_written

    def lines_kept(self) -> int:
        """How many lines the file holds (after a failure: what a reader will find)."""
        if self.path is None:
            return 0
        with contextlib.suppress(OSError), self.path.open("rb") as file:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 16), b""))
        return 0

    def abandon(self) -> None:
        """Close the file without sealing it, whatever the writes left in its buffer: a
        trace that could not be written at all (nothing was sent)."""
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()
        if self._reserve is not None:
            with contextlib.suppress(OSError):
                self._reserve.unlink()

    def close(self) -> None:
        """Close the file and seal it: `<trace>.sha256` holds the whole file's sha256.

        The hash chain covers every line but the last (no line follows it);
        the seal covers the last one too. `sha256sum -c` can check it. Both
        files and the folder holding them are `fsync`ed before this returns (with `sync`).

        A trace that could not be written (`failure`: a full disk) is sealed as far as it
        goes, and close does not raise for it: see `_close_failed`.
        """
        if self._file is None or self.path is None:
            return
        if self.failure is None:
            with contextlib.suppress(TraceUnwritable):
                self._flush()
        if self.failure is not None:
            self._close_failed()
            return
        file, self._file = self._file, None
        try:
            if self.sync:
                os.fsync(file.fileno())
        except OSError as error:
            self.failure = error
        finally:
            with contextlib.suppress(OSError):
                file.close()
        self.sealed = self._write_seal(self._whole.hexdigest())
        if self.sync:
            _sync_folder(self.path.parent)

    def _close_failed(self) -> None:
        """Close a trace whose writes failed. A full disk may have room for the lines still
        waiting (the error and `run_end`) or for the seal, not both: the seal is written
        first, for the file as it will be with those lines; then the lines; if they do not
        fit, the file keeps its last whole line and the seal (same length, rewritten in
        place) covers that. `sealed` says whether a seal that holds was left."""
        assert self._file is not None
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
        file, self._file = self._file, None
        with contextlib.suppress(OSError):
            file.close()

    def _write_seal(self, digest: str, in_place: bool = False) -> bool:
        """Write the seal; False (and no seal file) when it cannot be written. `in_place`
        rewrites a seal of the same length without freeing its space first."""
        assert self.path is not None
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
    now, or the trace is no regular file (`--trace /dev/stdout`)."""
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


def end_uninterrupted(trace: Trace, end: RunEnd) -> None:
    """Write `end` and seal `trace` with Ctrl-C and SIGTERM held off (in the main thread):
    a second Ctrl-C, pressed while an interrupted run closes its trace, must not tear the
    `run_end` line or leave it without its seal (then the printed `resume:` would be
    refused as damaged). A signal that arrives meanwhile is dropped: the run is ending."""
    held: list[tuple[signal.Signals, Any]] = []
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, OSError):
                held.append((number, signal.signal(number, signal.SIG_IGN)))
    try:
        with contextlib.suppress(TraceUnwritable):  # kept as far as it goes: `trace.failure`
            trace.emit(end)
        trace.close()
    finally:
        for number, handler in held:
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def _sync_folder(folder: Path) -> None:
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


def read_events(path: str | Path) -> Iterator[dict[str, Any]]:
    """The events of a trace file, up to the first line that is not one (`integrity.read_line`:
    a torn last line, a crash mid-write, or a line a reader must not trust)."""
    with Path(path).open("rb") as handle:
        for raw in handle:
            raw = raw.rstrip(b"\n")
            if not raw:
                continue
            event, _ = read_line(raw)
            if event is None:
                return
            yield event


def verify_chain(path: str | Path) -> tuple[bool, int | None]:
    """(True, None) when every line's `prev` is the sha256 of the line before it.

    Otherwise (False, n): line n (1-based) does not follow from its predecessor
    (`prose.runtime.integrity.link_problem` says why).
    """
    prev: str | None = None
    with Path(path).open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip(b"\n")
            if link_problem(number, parse_line(line), prev) is not None:
                return False, number
            prev = hashlib.sha256(line).hexdigest()
    return True, None
