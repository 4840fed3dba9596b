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
import hashlib
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from prose.llm.redact import JsonScrubber, run_secrets
from prose.runtime.integrity import (
    finite_json,
    link_problem,
    output_sha256,
    parse_line,
    read_line,
)
from prose.runtime.trace_writer import TraceUnwritable, TraceWriter


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
    # The entry of a map-valued slot called (`billing` of `handlers`), for its own rules.
    entry: str | None = None
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
        self._counter = 0
        self._file = TraceWriter(self.path, sync) if self.path is not None else None

    @property
    def secrets(self) -> list[str]:
        """The secrets every line is masked for (longest first): files written beside the
        trace (a person's questions) are masked for the same."""
        return self._scrubber.secrets

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
            try:
                self._file.append(encoded, self._prev, event.checkpoint)
            except TraceUnwritable:  # the lines that did not fit are gone: chain to the file
                self._prev = self._file.last_line
                raise
        return event

    @property
    def failure(self) -> OSError | None:
        """Why the file could not be written (a full disk), or None (`trace_writer`)."""
        return self._file.failure if self._file is not None else None

    @property
    def sealed(self) -> bool:
        return self._file is not None and self._file.sealed

    def lines_kept(self) -> int:
        """How many lines the file holds (after a failure: what a reader will find)."""
        return self._file.lines_kept() if self._file is not None else 0

    def abandon(self) -> None:
        """Close the file without sealing it: a trace that could not be written at all
        (nothing was sent)."""
        if self._file is not None:
            self._file.abandon()

    def close(self) -> None:
        """Close the file and seal it: `<trace>.sha256` holds the whole file's sha256.

        The hash chain covers every line but the last (no line follows it); the seal
        covers the last one too. A trace whose file could not be written is kept and
        sealed as far as it goes (`failure`, `sealed`); close does not raise for it.
        """
        if self._file is not None:
            self._file.close()


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
