"""Live progress on stderr: a line per call as it starts and ends.

On a terminal the calls in flight are shown in one live status line (rich,
imported only then) and each finished call prints a line above it; anywhere
else (a pipe, CI, a log file) every start and end is one plain line. This is
an observer hooked into the run (`RunOptions.progress`), as Burr's hooks are:
the interpreter does not know how it is shown.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import IO, Any

from prose.errors import printable


def _label(info: Mapping[str, Any]) -> str:
    slot = str(info.get("slot", "?"))
    return slot if info.get("index") is None else f"{slot}[{info['index']}]"


def end_line(info: Mapping[str, Any]) -> str:
    """`ok  slot (model) 12+5 tokens 0.84s` or `xx  slot line 7: kind: message`, control
    characters escaped (a provider's error body, a callable's exception, `printable`)."""
    return printable(_end_line(info))


def _end_line(info: Mapping[str, Any]) -> str:
    label, model = _label(info), info.get("model") or "python"
    error = info.get("error")
    if error:
        return f"  xx  {label} line {info.get('line')}: {error.get('kind')}: {error.get('message')}"
    usage = info.get("usage") or {}
    seconds = (info.get("latency_ms") or 0) / 1000
    cached = " (cached)" if info.get("cache_hit") else ""
    cut = (" -- warning: the reply stopped at the token cap (finish_reason: length); raise "
           "the slot's max_tokens" if info.get("finish_reason") == "length" else "")
    return (
        f"  ok  {label} ({model}) {usage.get('prompt_tokens', 0)}+"
        f"{usage.get('completion_tokens', 0)} tokens {seconds:.2f}s{cached}{cut}"
    )


def start_line(info: Mapping[str, Any]) -> str:
    return printable(f"  ... {_label(info)} ({info.get('model') or 'python'}) line "
                     f"{info.get('line')}")


class Progress:
    """The progress hook; `live=None` means: live when `stream` is a terminal."""

    def __init__(
        self, enabled: bool = True, *, live: bool | None = None, stream: IO[str] | None = None
    ):
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.live = enabled and (self.stream.isatty() if live is None else live)
        self.in_flight: dict[str, str] = {}
        self._status: Any = None
        self._console: Any = None

    def __call__(self, phase: str, info: Mapping[str, Any]) -> None:
        if not self.enabled:
            return
        if not self.live:
            self.stream.write((start_line(info) if phase == "start" else end_line(info)) + "\n")
            self.stream.flush()
            return
        key = str(info.get("id"))
        if phase == "start":
            self.in_flight[key] = _label(info)
        else:
            self.in_flight.pop(key, None)
            self._console_().print(end_line(info), highlight=False, markup=False)
        self._show()

    def _console_(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream)
        return self._console

    def _show(self) -> None:
        text = printable(f"{len(self.in_flight)} in flight: " + ", ".join(self.in_flight.values()))
        if not self.in_flight:
            if self._status is not None:
                self._status.stop()
                self._status = None
            return
        if self._status is None:
            self._status = self._console_().status(text)
            self._status.start()
        else:
            self._status.update(text)

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
