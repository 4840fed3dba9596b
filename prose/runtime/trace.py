"""The run trace: JSON Lines events modelled with pydantic, written through one buffer.

The start of a run and each finished call or judgement (with what was
written before it) reach the file before the run goes on, so a crash, even
a kill -9, loses no finished call: `--resume` replays them. Other events
(notes, errors, the end) wait in the buffer for the next of those, or for
`close`.

Every event carries `prev`, the sha256 of the previous line (None for the
first), so the trace is a tamper-evident chain: `verify_chain` recomputes it
(`integrity.py` holds the rules a trace is checked by).
Secrets never reach the file: values under keys that name a secret are
masked and the values of secret-looking environment variables (and the LLM
config's keys) are replaced wherever they occur, before the line is written,
by the one masking rule of `prose.llm.redact`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, Field

from prose.llm.redact import JsonScrubber, run_secrets
from prose.runtime.integrity import link_problem, output_sha256, parse_line, seal_path


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class Event(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    time: float = Field(default_factory=time.time)
    run_id: str = ""
    prev: str | None = None


class RunStart(Event):
    type: Literal["run_start"] = "run_start"
    pattern: str
    pattern_sha256: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict)
    bindings: dict[str, Any] = Field(default_factory=dict)
    models: dict[str, Any] = Field(default_factory=dict)
    policy: dict[str, Any] | None = None
    resumed_from: str | None = None


class CallEvent(Event):
    """One attempt of one call (sent, failed or served from the cache)."""

    type: Literal["call"] = "call"
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
    messages: list[dict[str, Any]] = Field(default_factory=list)
    output: Any = None
    error: dict[str, Any] | None = None
    provenance: list[str] = Field(default_factory=list)
    transitive: list[str] = Field(default_factory=list)
    # The parallel branch the call ran in, and the branches the call outputs it was given
    # were made in (for `each A sees only its own chain`); absent outside any parallel.
    branch: list[str] | None = None
    chains: list[tuple[str, list[str], int, int]] | None = None
    usage: Usage = Field(default_factory=Usage)
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


class JudgeEvent(Event):
    """A discretion condition or a choice decided by the judge model."""

    type: Literal["judge"] = "judge"
    id: str
    kind: Literal["condition", "choice"]
    text: str
    file: str = ""
    line: int = 0
    path: str = ""
    model: str | None = None
    values: dict[str, Any] = Field(default_factory=dict)
    options: list[str] | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list)
    decision: Any = None
    reason: str | None = None
    error: dict[str, Any] | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    cache_hit: bool = False
    key: str | None = None
    requests: int = 0
    finish_reason: str | None = None


class NoteEvent(Event):
    """Something worth recording that is not an error: a loop reaching `max`, an ignored branch."""

    type: Literal["note"] = "note"
    what: str
    message: str
    file: str = ""
    line: int = 0
    detail: dict[str, Any] = Field(default_factory=dict)


class ErrorEvent(Event):
    type: Literal["error"] = "error"
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


class RunEnd(Event):
    type: Literal["run_end"] = "run_end"
    status: Literal["ok", "error", "budget", "violation", "interrupted"]
    exit_code: int
    result: Any = None
    error: dict[str, Any] | None = None
    totals: dict[str, Any] = Field(default_factory=dict)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Trace:
    """An append-only JSONL trace with a hash chain; `None` path keeps events in memory only.

    `secrets` (longest first) replaces the environment's and `extra_secrets` when a caller
    has worked them out already (the rows of a batch share one list).
    """

    def __init__(
        self,
        path: str | Path | None,
        run_id: str,
        *,
        extra_secrets: Sequence[str] = (),
        secrets: Sequence[str] | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.run_id = run_id
        self.events: list[Event] = []
        self._prev: str | None = None
        self._scrubber = JsonScrubber(
            run_secrets(extra_secrets) if secrets is None else secrets)
        self._file: BinaryIO | None = None
        self._counter = 0
        self._whole = hashlib.sha256()  # of every byte written: the seal, without a re-read
        if self.path is not None:
            try:
                self._file = self.path.open("wb")
            except FileNotFoundError:  # its folder is new (the rows of a batch share one)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("wb")

    def next_id(self, prefix: str = "c") -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def emit(self, event: Event) -> Event:
        """Write `event` (with `run_id` and `prev` filled in) as one line; a call or a
        judgement is flushed to the file at once (`CHECKPOINTS`)."""
        event.run_id = self.run_id
        event.prev = self._prev
        data = event.model_dump(mode="json")
        # The one masking rule (`prose.llm.redact`), walked only when something may be masked.
        line, recorded = self._scrubber.scrub(data)
        if recorded is not data and isinstance(event, CallEvent) and event.sha256 and (
                recorded.get("output") != data.get("output")):
            # The digest vouches for the output as recorded, masked text included.
            recorded["sha256"] = output_sha256(recorded.get("output"))
            line = json.dumps(recorded, ensure_ascii=False, default=str)
        encoded = line.encode("utf-8")
        self._prev = hashlib.sha256(encoded).hexdigest()
        self.events.append(event)
        if self._file is not None:
            self._file.write(encoded + b"\n")
            self._whole.update(encoded + b"\n")
            if isinstance(event, CHECKPOINTS):
                self._file.flush()
        return event

    def close(self) -> None:
        """Close the file and seal it: `<trace>.sha256` holds the whole file's sha256.

        The hash chain covers every line but the last (no line follows it);
        the seal covers the last one too. `sha256sum -c` can check it.
        """
        if self._file is not None:
            self._file.close()
            self._file = None
            if self.path is not None:
                seal = f"{self._whole.hexdigest()}  {self.path.name}\n".encode()
                handle = os.open(seal_path(self.path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                                 0o644)
                try:
                    os.write(handle, seal)
                finally:
                    os.close(handle)


# The events a crash must not lose, each flushed to the file when written: the start (a
# resumed run takes its inputs from it) and every finished call or judgement.
CHECKPOINTS = (RunStart, CallEvent, JudgeEvent)


def read_events(path: str | Path) -> Iterator[dict[str, Any]]:
    """The events of a trace file; a torn last line (a crash mid-write) is skipped."""
    with Path(path).open(encoding="utf-8") as handle:
        for raw in handle:
            raw = raw.rstrip("\n")
            if not raw:
                continue
            try:
                yield json.loads(raw)
            except json.JSONDecodeError:
                return


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
