"""`prose report`: one self-contained HTML page that shows a run, built from its trace alone.

`read_run` (model.py) reads and audits the trace and places every call in time;
`render_html` (html.py) writes the page, with the data-flow graph of the
pattern laid out as inline SVG (graph.py) and the CSS and JavaScript of
`assets/` inlined. Nothing is fetched, at build time or when the page opens.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING

from prose.report.html import render_html
from prose.report.model import RunReport, read_run

if TYPE_CHECKING:
    from prose.pattern_file import PatternFiles

__all__ = ["RunReport", "read_run", "render_html", "report_path", "write_report"]


def write_report(trace: str | Path, output: str | Path | None = None,
                 pattern: str | Path | None = None, files: PatternFiles | None = None) -> Path:
    """Write the report of the trace at `trace` to `output` (default: `report_path(trace)`).

    `files` are pattern files already read (`prose run --report` hands in the run's).
    Raises TraceReadError when the trace cannot be read, OSError when the page cannot be
    written, the target being a symbolic link included: a link planted where the report goes
    is not followed (it would overwrite whatever it points at).
    """
    target = Path(output) if output is not None else report_path(trace)
    page = render_html(read_run(trace, pattern, files)).encode("utf-8")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(target, flags, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP or target.is_symlink():
            raise OSError(errno.ELOOP, "it is a symbolic link, not followed", str(target)) from None
        raise
    with os.fdopen(handle, "wb") as file:
        file.write(page)
    return target


def report_path(trace: str | Path) -> Path:
    """Where a trace's report goes by default: `report.html` beside a run's `trace.jsonl` (its
    folder is the run's own), else the trace's name with `.report.html` (`ci.jsonl` gives
    `ci.report.html`), so traces sharing a folder do not overwrite each other's report."""
    path = Path(trace)
    if path.name == "trace.jsonl":
        return path.with_name("report.html")
    return path.with_name(path.stem + ".report.html")
