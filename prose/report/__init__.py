"""`prose report`: one self-contained HTML page that shows a run, built from its trace alone.

`read_run` (model.py) reads and audits the trace and places every call in time;
`render_html` (html.py) writes the page, with the data-flow graph of the
pattern laid out as inline SVG (graph.py) and the CSS and JavaScript of
`assets/` inlined. Nothing is fetched, at build time or when the page opens.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from prose.report.html import render_html
from prose.report.model import RunReport, read_run

if TYPE_CHECKING:
    from prose.pattern_file import PatternFiles

__all__ = ["RunReport", "read_run", "render_html", "write_report"]


def write_report(trace: str | Path, output: str | Path | None = None,
                 pattern: str | Path | None = None, files: PatternFiles | None = None) -> Path:
    """Write the report of the trace at `trace` to `output` (default: `report.html` beside it).

    `files` are pattern files already read (`prose run --report` hands in the run's).
    Raises TraceReadError when the trace cannot be read, OSError when the page cannot be written.
    """
    target = Path(output) if output is not None else Path(trace).with_name("report.html")
    page = render_html(read_run(trace, pattern, files))
    target.write_text(page, encoding="utf-8")
    return target
