"""The garbage collector's thresholds in a process prose runs: sized for LiteLLM's calls.

    with collector.tuned():      # prose.llm.event_loop.run does this for every CLI run
        ...

One LiteLLM call allocates thousands of container objects (pydantic models,
dicts, its logging payload), nearly all freed by reference counting before the
call ends. CPython's default thresholds, (700, 10, 10), start a young
collection every 700 net allocations of containers, so every call sets off
several; whatever is alive at that moment (each call in flight: 64 of them
under a cap of 64) is promoted and scanned again by the older generations,
and the oldest holds LiteLLM's whole import, some 400,000 objects. On the
1,000-item `parallel for` against the loopback stub that was 0.6 to 0.9 ms
of collector time per call (in interleaved runs), more than the interpreter's
own cost; with `THRESHOLDS` it is about 0.1 ms (docs/benchmarks.md, "Runtime").

A young collection now waits for 20,000 allocations: by then the calls that
made them have mostly ended and freed them, so little survives to be scanned
again. The older generations keep Python's ratios (10, 10): garbage in
reference cycles waits longer to be freed, but not much longer. Measured on
`prose batch` over 10,000 rows: peak RSS 245 MB with Python's thresholds,
271 MB with these, 328 MB with (20000, 50, 20), whose collector time per call
was hardly lower (0.10 ms against 0.11 ms).

`tuned` restores the previous thresholds on the way out, so a program that
embeds prose keeps its own settings outside a run. A process that is prose's
alone (a Ray worker of `prose batch`) calls `apply` once.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (20_000, 10, 10)


def apply() -> tuple[int, int, int]:
    """Set `THRESHOLDS` for the rest of the process; the thresholds they replace."""
    previous = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    return previous


@contextmanager
def tuned() -> Iterator[None]:
    """`THRESHOLDS` inside the block, the previous thresholds after it."""
    previous = apply()
    try:
        yield
    finally:
        gc.set_threshold(*previous)
