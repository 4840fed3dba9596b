"""The `prose` console script: a Ctrl-C before the command starts is a quiet exit 130.

Importing the command line (click, then the command's own modules) takes a good part
of a second. Python's handler raises `KeyboardInterrupt` wherever that import is, so a
Ctrl-C pressed then printed a traceback of importlib frames (or click's "Aborted!",
exit 1). Until the command's module is imported nothing has been written, so a Ctrl-C
ends the process at once with 130 (as a shell reports SIGINT). This module imports
only `os` and `signal` before it installs that handler; `prose.cli.main` puts Python's
back when the command's module is in (`LazyGroup.get_command`), and the command handles
Ctrl-C its own way from there (`prose run` seals its trace). The commands that only read
and print (`lint`, `parse`, `explain`, `rules`, `list`: `QUIET_TO_THE_END`) keep this
handler to their end.

A Ctrl-C during Python's own start-up, before this module runs (its `site` imports,
some 20-40 ms), is still Python's.

The cyclic garbage collector is off while the command line loads (`prose.cli.collector`).
"""

from __future__ import annotations

import gc
import os
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # nothing more is imported before the handler is in
    from types import FrameType
    from typing import Any


def _quit_quietly(number: int, frame: FrameType | None) -> None:
    os._exit(128 + number)  # nothing to flush or close: the command has not started


# `prose.cli.main` restores Python's handler when the handler it finds carries this mark.
_quit_quietly.prose_quiet_start = True  # type: ignore[attr-defined]


def main() -> Any:
    """Console-script entry point: hold Ctrl-C quiet and the collector off, then run
    `prose.cli.main.main`."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        # Only in place of Python's own handler: a process started with Ctrl-C ignored
        # (a background job, `nohup`) keeps ignoring it.
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _quit_quietly)
    except (ValueError, OSError):  # not the main thread, or no signals here: as before
        pass
    from prose.cli.collector import hold

    hold(was_enabled=collecting)
    from prose.cli.main import main as run_command_line

    return run_command_line()
