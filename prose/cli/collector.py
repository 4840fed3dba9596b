"""The cyclic garbage collector while `prose` starts: off during the imports, then on.

Importing the command line and a command's modules makes tens of thousands of objects
and no garbage; the collections they set off scanned those objects again and again, and
the interpreter's collection at exit scanned them once more (together about a sixth of a
cold `prose lint`'s CPU time, docs/benchmarks.md). The console script (`prose.cli.entry`)
turns the collector off first thing and hands that over here (`hold`); when the
command's module is imported (`prose.cli.main.LazyGroup.get_command`), `collect_from_here`
freezes everything made so far (no collection scans it again) and turns the collector on
for the command's own work. A program that calls `prose.cli.main.main` itself keeps its
collector as it set it.
"""

from __future__ import annotations

import gc

_held = False  # the console script turned the collector off (not a program's own choice)


def hold(was_enabled: bool) -> None:
    """The console script turned the collector off; `was_enabled`: it was on before."""
    global _held
    _held = was_enabled


# A command that only reads and prints collects after this many new objects rather than
# Python's 700: linting the pattern library makes fewer (the default's 110 collections
# were ~20 ms), a large tree still is collected as it goes (its cycles are few: about 50
# objects a file, from exceptions and closures).
READ_ONLY_THRESHOLD = 100_000


def collect_from_here(read_only: bool) -> None:
    """The command's module is imported: keep what is in memory out of every later
    collection and collect again. A command that only reads and prints (`read_only`)
    collects less often, and freezes again at exit, so the interpreter's last collection
    does not scan its objects either (such a command leaves no file of its own open for
    that collection to close)."""
    global _held
    if not _held:
        return
    _held = False
    gc.freeze()
    if read_only:
        import atexit

        gc.set_threshold(READ_ONLY_THRESHOLD, *gc.get_threshold()[1:])
        atexit.register(gc.freeze)
    gc.enable()
