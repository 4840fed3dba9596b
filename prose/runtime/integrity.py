"""What a trace vouches for: its hash chain, each output's digest and its seal.

One definition of each check, for the three readers that trust a trace:
`prose run --resume` (which replays finished calls from it and refuses a
damaged one), `prose audit` (which reports every finding) and
`verify_chain`.

- The chain: every line's `prev` is the sha256 of the raw line before it (the
  first line's is null). It covers every line but the last.
- The digest: a call's `sha256` is the sha256 of its output as recorded in
  the trace (text as is, anything else as sorted JSON), masked secrets included.
- The seal: `<trace>.sha256`, written when the run closes its trace, is the
  sha256 of the whole file, so it covers the last line too. A trace whose
  `run_end` is there must have its seal.

A crash can tear the last line (a partial write); a torn last line is not
damage, it is where the run stopped, and it is never replayed.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prose.bounded import MAX_TRACE_BYTES, JSONBoundError, loads_bounded
from prose.runtime.event_shape import shape_problem


def output_sha256(output: Any) -> str:
    """The digest of a call's output as the trace records it (a number JSON cannot
    write, NaN or an infinity, as null: `finite`)."""
    text = output if isinstance(output, str) else finite_json(output, ensure_ascii=False,
                                                              sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def finite_json(value: Any, **options: Any) -> str:
    """`json.dumps(value, **options)` with NaN and infinities written as null (`finite`),
    as a trace line writes them; the common case, with none, is dumped once."""
    strict, lenient = _encoders(tuple(sorted(options.items())))
    try:
        return strict.encode(value)
    except ValueError as error:
        if "float" not in str(error):
            raise
        return lenient.encode(finite(value))


@functools.lru_cache(maxsize=16)
def _encoders(options: tuple[tuple[str, Any], ...]) -> tuple[json.JSONEncoder, json.JSONEncoder]:
    """The encoders `json.dumps` would make for `options`, refusing NaN and not, made once
    (`json.dumps` makes one on every call given an option; an encoder is reentrant)."""
    return json.JSONEncoder(allow_nan=False, **dict(options)), json.JSONEncoder(**dict(options))


def finite(value: Any) -> Any:
    """`value` with every NaN and infinity replaced by None: how a trace line records
    them, since JSON has no such numbers."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def seal_path(trace: Path) -> Path:
    """Where the seal of a trace file is written."""
    return trace.with_name(trace.name + ".sha256")


def link_problem(number: int, event: Mapping[str, Any] | None, prev: str | None,
                 why: str | None = None) -> str | None:
    """Why line `number` (1-based, parsed as `event`; `why` it is not one, `read_line`)
    does not follow from the line before it."""
    if event is None:
        return f"line {number} is not a valid trace event ({why or 'it was altered or cut'})"
    if event.get("prev") == prev:
        return None
    if number == 1:
        return ("line 1 has a `prev` hash, but the first event of a trace has none "
                "(lines were removed before it, or it was altered)")
    return (f"line {number}'s `prev` is not the sha256 of line {number - 1} "
            f"(line {number - 1} or line {number} was altered, or a line was inserted or removed)")


def output_problem(event: Mapping[str, Any]) -> str | None:
    """Why a finished call's recorded output does not match its recorded digest, or None."""
    digest = event.get("sha256")
    if event.get("type") != "call" or not digest or event.get("error") is not None:
        return None
    if output_sha256(event.get("output")) == digest:
        return None
    return "the recorded output does not match its recorded sha256"


def seal_problem(trace: Path, data: bytes, ended: bool) -> str | None:
    """Why the seal does not vouch for the trace's bytes `data` (`ended`: it has a run_end)."""
    seal = seal_path(trace)
    if not seal.is_file():
        if ended:
            return ("the run ended but its seal (`.sha256`) is missing, so nothing vouches "
                    "for the last line")
        return None
    recorded = seal.read_text(encoding="utf-8", errors="replace").split()[:1]
    if recorded != [hashlib.sha256(data).hexdigest()]:
        return "the trace changed after the run closed it (its sha256 no longer matches the seal)"
    return None


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """A trace line as an event, or None when it is not one."""
    return read_line(raw)[0]


def read_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """A trace line as an event, or (None, why it is not one): not UTF-8 or JSON, past a
    bound (`prose.bounded.loads_bounded`: a 5,000-digit number, nested too deep), not an
    object with `type` and `prev`, or a field of the wrong type (`prose.runtime.event_shape`)."""
    try:
        data = loads_bounded(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "it is not UTF-8"
    except JSONBoundError as error:
        return None, f"its JSON is past a bound ({error})"
    except ValueError:
        return None, "it is not JSON"
    if not (isinstance(data, dict) and isinstance(data.get("type"), str) and "prev" in data):
        return None, "it is not an object with a `type` and a `prev`"
    problem = shape_problem(data)
    return (None, problem) if problem is not None else (data, None)


@dataclass(frozen=True)
class Damage:
    """The first line of a trace its chain, digests or seal do not vouch for.

    `trusted`: how many lines from the start a forced resume (`--resume --force`) may
    replay: the lines before the damage, less the one a broken link also puts in doubt.
    """

    line: int
    reason: str
    trusted: int


def replayed_lines(damage: Damage) -> str:
    """What a forced resume of a trace with `damage` replays, in words."""
    if damage.trusted == 0:
        return "no line"
    return "line 1" if damage.trusted == 1 else f"lines 1-{damage.trusted}"


@dataclass(frozen=True)
class CheckedTrace:
    """A trace's events that can be trusted, in order, and the first damage, if any.

    `events` are the first `damage.trusted` lines when there is damage (never the damaged
    line, nor the line before a broken link); a torn last line is dropped and is not damage (`torn` says whether there was one).
    """

    events: tuple[dict[str, Any], ...]
    damage: Damage | None
    torn: bool


def read_trace_bytes(path: str | Path) -> bytes:
    """The bytes of a trace file, refused (OSError, EFBIG) past `MAX_TRACE_BYTES` before
    any is read: the readers that check a trace hold it whole."""
    with Path(path).open("rb") as handle:
        data = handle.read(MAX_TRACE_BYTES + 1)
    if len(data) > MAX_TRACE_BYTES:
        raise OSError(errno.EFBIG, f"the trace is larger than {MAX_TRACE_BYTES:,} bytes "
                      "(prose.bounded.MAX_TRACE_BYTES)")
    return data


def check_trace(path: str | Path) -> CheckedTrace:
    """Read a trace and check its chain, each output's digest and its seal. Raises OSError."""
    trace = Path(path)
    data = read_trace_bytes(trace)
    raw_lines = data.split(b"\n")
    torn = bool(raw_lines) and raw_lines[-1] != b""
    if not torn:
        raw_lines.pop()  # the newline that ends the last event
    events: list[dict[str, Any]] = []
    prev: str | None = None
    for number, raw in enumerate(raw_lines, start=1):
        event, why = read_line(raw)
        last = number == len(raw_lines)
        if event is None and last and torn:
            return CheckedTrace(tuple(events), None, True)  # a crash mid-write: where it stopped
        problem = link_problem(number, event, prev, why)
        if problem is not None:
            # A broken link at line N is an edit of line N or of line N-1 (its `prev` names
            # the bytes of N-1): neither is vouched for, so a forced replay stops before both.
            return CheckedTrace(tuple(events[:-1]), Damage(number, problem, len(events[:-1])),
                                torn)
        assert event is not None
        problem = output_problem(event)
        if problem is not None:  # line N's link holds: line N-1 is vouched for by it
            return CheckedTrace(tuple(events), Damage(number, problem, len(events)), torn)
        events.append(event)
        prev = hashlib.sha256(raw).hexdigest()
    ended = any(event.get("type") == "run_end" for event in events)
    problem = seal_problem(trace, data, ended)
    if problem is not None:  # only the seal covers the last line
        return CheckedTrace(tuple(events[:-1]), Damage(len(raw_lines), problem,
                                                       len(events[:-1])), torn)
    return CheckedTrace(tuple(events), None, torn)
