"""A run trace read for review: its events with line numbers, and its hash chain checked.

The chain is checked on the raw bytes of each line (what the runtime hashed),
so a byte edited into invalid UTF-8 or invalid JSON is a broken link at that
line, not an unreadable file. A file is unreadable (`TraceReadError`, exit 2)
only when it cannot be opened, is empty, or holds no prose event at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prose.errors import ProseError
from prose.runtime.integrity import link_problem, read_line, read_trace_bytes


class TraceReadError(ProseError):
    """The trace cannot be read or is not a prose trace (exit code 2)."""


@dataclass(frozen=True, slots=True)
class TraceLine:
    """One event of the trace and the 1-based line it is on."""

    number: int
    event: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.event.get("type", ""))


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """The first line whose `prev` is not the sha256 of the line before it."""

    line: int
    reason: str


@dataclass(frozen=True)
class LoadedTrace:
    """The parseable events of a trace, in order, and the state of its hash chain."""

    path: Path
    lines: tuple[TraceLine, ...]
    line_count: int
    chain_break: ChainBreak | None = None
    digests: tuple[str, ...] = field(default=(), repr=False)

    @property
    def chain_ok(self) -> bool:
        return self.chain_break is None

    def of_type(self, kind: str) -> Iterator[TraceLine]:
        return (line for line in self.lines if line.type == kind)

    @property
    def run_start(self) -> TraceLine | None:
        return next(self.of_type("run_start"), None)

    @property
    def run_end(self) -> TraceLine | None:
        ends = list(self.of_type("run_end"))
        return ends[-1] if ends else None

    @property
    def calls(self) -> list[TraceLine]:
        return list(self.of_type("call"))

    @property
    def judgements(self) -> list[TraceLine]:
        return list(self.of_type("judge"))

    @property
    def run_id(self) -> str:
        start = self.run_start
        if start is not None:
            return str(start.event.get("run_id", ""))
        return str(self.lines[0].event.get("run_id", "")) if self.lines else ""

    @property
    def pattern_name(self) -> str:
        """The pattern's name (from the recorded policy), else its file name."""
        start = self.run_start
        if start is None:
            return ""
        policy = start.event.get("policy") or {}
        if isinstance(policy, dict) and policy.get("pattern"):
            return str(policy["pattern"])
        name = Path(str(start.event.get("pattern", ""))).name
        return name.removesuffix(".prose.md")


def nesting(event: Mapping[str, Any]) -> str:
    """`a>b>` for a call inside nested pattern instances (slot `a`, then `b`); "" at the top.

    The runtime starts the loop path of a nested pattern's calls with that prefix.
    """
    head = str(event.get("path") or "").split("/", 1)[0]
    return head if head.endswith(">") else ""


def slot_label(event: Mapping[str, Any], *, index: bool = True) -> str:
    """The call's slot as a reader should see it: `reviewers[1]`, `review>proposer`."""
    slot = nesting(event) + str(event.get("slot", "?"))
    return slot if not index or event.get("index") is None else f"{slot}[{event['index']}]"


def load_trace(path: str | Path) -> LoadedTrace:
    """Read `path` and check its hash chain; raises TraceReadError when it is no trace."""
    trace_path = Path(path)
    try:
        data = read_trace_bytes(trace_path)
    except IsADirectoryError:
        raise TraceReadError(f"{path}: is a folder, not a trace file") from None
    except OSError as error:
        raise TraceReadError(f"{path}: cannot read: {error.strerror or error}") from None
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # the newline that ends the last event
    if not raw_lines:
        raise TraceReadError(f"{path}: the file is empty, not a trace")
    lines: list[TraceLine] = []
    digests: list[str] = []
    chain_break: ChainBreak | None = None
    prev: str | None = None
    for number, raw in enumerate(raw_lines, start=1):
        event, why = read_line(raw)
        if event is not None:
            lines.append(TraceLine(number, event))
        if chain_break is None:
            chain_break = _link(number, event, prev, why)
        prev = hashlib.sha256(raw).hexdigest()
        digests.append(prev)
    if not lines:
        raise TraceReadError(f"{path}: no line is a prose trace event")
    return LoadedTrace(trace_path, tuple(lines), len(raw_lines), chain_break, tuple(digests))


def _link(number: int, event: dict[str, Any] | None, prev: str | None,
          why: str | None) -> ChainBreak | None:
    """Why line `number` does not follow from the line before it, or None."""
    reason = link_problem(number, event, prev, why)
    return ChainBreak(number, reason) if reason is not None else None
