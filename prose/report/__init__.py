"""`prose report`: one self-contained HTML page that shows a run, built from its trace alone.

`read_run` (model.py) reads and audits the trace and places every call in time;
`render_html` (html.py) writes the page, with the data-flow graph of the
pattern laid out as inline SVG (graph.py) and the CSS and JavaScript of
`assets/` inlined. Nothing is fetched, at build time or when the page opens.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from prose.output_paths import check_output, open_output
from prose.report.html import render_html
from prose.report.model import RunReport, read_run

if TYPE_CHECKING:
    from prose.pattern_file import PatternFiles

__all__ = ["RunReport", "read_run", "render_html", "report_path", "write_report"]


def write_report(trace: str | Path, output: str | Path | None = None,
                 pattern: str | Path | None = None, files: PatternFiles | None = None) -> Path:
    """Write the report of the trace at `trace` to `output` (default: `report_path(trace)`).

    `files` are pattern files already read (`prose run --report` hands in the run's).
    Raises TraceReadError when the trace cannot be read, `OutputClash` when the target is the
    trace or the pattern the page is built from, OSError when the page cannot be written,
    the target being a symbolic link included: a link planted where the report goes is not
    followed (it would overwrite whatever it points at). `prose.output_paths` is the rule.
    """
    target = Path(output) if output is not None else report_path(trace)
    run = read_run(trace, pattern, files)
    reads = [("the trace", trace), ("the pattern", pattern),
             ("the run's pattern", run.pattern_path)]
    check_output("-o" if output is not None else "the report", target, reads, "the page needs")
    page = render_html(run).encode("utf-8")
    with os.fdopen(open_output(target), "wb") as file:
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
