"""Batch progress on stderr: rows done, calls in flight, tokens and cost.

`live` draws a rich progress bar (on a terminal; rich is imported only then),
`plain` prints a line every few seconds (a pipe, CI, a log), `json` prints the
same as one JSON object per line (`--json`), `quiet` prints nothing (`-q`).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import IO, Any, Literal

Mode = Literal["live", "plain", "json", "quiet"]


@dataclass(frozen=True)
class Snapshot:
    """Where a batch is: rows done of `total`, calls in flight (None: not known), spent so far."""

    done: int
    total: int
    failed: int
    in_flight: int | None
    tokens: int
    cost_usd: float
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": "progress",
            "rows_done": self.done,
            "rows": self.total,
            "rows_failed": self.failed,
            "calls_in_flight": self.in_flight,
            "tokens": self.tokens,
            "cost_usd": round(self.cost_usd, 8),
            "seconds": round(self.seconds, 3),
        }

    def line(self) -> str:
        flight = "?" if self.in_flight is None else str(self.in_flight)
        return (f"rows {self.done}/{self.total} ({self.failed} failed), {flight} calls in flight, "
                f"{self.tokens:,} tokens, ${self.cost_usd:.4f}, {self.seconds:.1f}s")


def choose_mode(quiet: bool, as_json: bool, stream: IO[str] | None = None) -> Mode:
    if quiet:
        return "quiet"
    if as_json:
        return "json"
    return "live" if (stream or sys.stderr).isatty() else "plain"


class BatchProgress:
    """Shows `Snapshot`s as the mode says; `every` seconds between plain and json lines."""

    def __init__(self, mode: Mode, stream: IO[str] | None = None, every: float = 2.0) -> None:
        self.mode = mode
        self.stream = stream if stream is not None else sys.stderr
        self.every = every
        self._last = 0.0
        self._bar: Any = None
        self._task: Any = None

    def show(self, snapshot: Snapshot, final: bool = False) -> None:
        if self.mode == "quiet":
            return
        if self.mode == "live":
            self._live(snapshot)
            return
        now = time.monotonic()
        if not final and now - self._last < self.every:
            return
        self._last = now
        text = json.dumps(snapshot.to_dict()) if self.mode == "json" else snapshot.line()
        self.stream.write(text + "\n")
        self.stream.flush()

    def _live(self, snapshot: Snapshot) -> None:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                TextColumn("rows"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                console=Console(file=self.stream), transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task("rows", total=snapshot.total, detail="")
        flight = "?" if snapshot.in_flight is None else str(snapshot.in_flight)
        detail = (f"{snapshot.failed} failed  {flight} in flight  {snapshot.tokens:,} tokens  "
                  f"${snapshot.cost_usd:.4f}")
        self._bar.update(self._task, completed=snapshot.done, detail=detail)

    def warn(self, text: str) -> None:
        """Print `text` as a warning whatever the mode (`-q` included): what the person
        running the batch must hear of, such as a row trace that was damaged."""
        if self._bar is not None:
            self._bar.console.print(f"warning: {text}", markup=False, highlight=False)
            return
        self.stream.write(f"warning: {text}\n")
        self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
