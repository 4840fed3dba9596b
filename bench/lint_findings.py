"""Lint output with many findings: 20,004 diagnostics in one 10,000-line pattern (issue 14.10).

Run: python bench/lint_findings.py   (writes the `lint-findings` section of docs/benchmarks.md)

Before the fix, every code frame split the whole file again, so the `full`
format took time proportional to findings x lines (47 s for 20,000 findings
in the issue). The frames of a file now share one `LineIndex`, and the text
formats show at most `MAX_SHOWN_PER_FILE` findings per file. Measured here,
in one process: the checker alone; the `full` rendering as it was (each
frame splits the file), with the shared index but every finding shown, and
as `prose lint` prints it now; `concise` and `json`; then cold `prose lint`
runs in each format.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.lint import HEADER
from bench.report import best_of, load_average, median_command, stamp, write_section
from prose.check import lint_text
from prose.diagnostics import Diagnostic, Summary, render
from prose.diagnostics.frame import StyledLine, frame_lines, plain
from prose.diagnostics.render_text import MAX_SHOWN_PER_FILE, render_full
from prose.diagnostics.summary import ordered

LINES = 10_000


def pattern(lines: int) -> str:
    """`lines` statements, each reading an undefined name: an error and a warning apiece."""
    body = "".join(f"let value_{i} = missing_{i}\n" for i in range(lines))
    return HEADER + body + "return { result: 1 }\n```\n"


def full_as_before(diagnostics: Sequence[Diagnostic], sources: Mapping[str, str]) -> str:
    """The `full` format's frames as they were made before the fix: the text split per frame."""
    lines: list[StyledLine] = []
    for diagnostic in ordered(diagnostics):
        text = sources.get(diagnostic.path)
        if text is not None:
            lines.extend(frame_lines(text, diagnostic.span, context=1, caret_style="error"))
        for label in diagnostic.secondary:
            note = sources.get(label.span.file)
            if note is not None:
                lines.extend(frame_lines(note, label.span, context=0, caret_style="note"))
    return "\n".join(plain(lines))


def main() -> None:
    text = pattern(LINES)
    load_before = load_average()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "findings.prose.md"
        path.write_text(text, encoding="utf-8")
        name = str(path)
        check_s = best_of(lambda: lint_text(text, name), repeat=3)
        diagnostics = lint_text(text, name).diagnostics
        sources = {name: text}
        summary = Summary.of(diagnostics, files=1)
        before_s = best_of(lambda: full_as_before(diagnostics, sources), repeat=1)
        indexed_s = best_of(
            lambda: render_full(diagnostics, sources, summary, color=False, limit=None), repeat=3
        )
        rows = [
            ("`full`, each frame splits the file (before)", before_s),
            ("`full`, one line index per file, every finding shown", indexed_s),
        ]
        for output_format in ("full", "concise", "json"):
            seconds = best_of(
                lambda f=output_format: render(f, diagnostics, sources, summary, color=False),
                repeat=3,
            )
            rows.append((f"`{output_format}` as `prose lint` prints it", seconds))
        command = [sys.executable, "-c", "from prose.cli.main import main; main()", "lint"]
        cold = []
        for output_format in ("full", "concise", "json"):
            started = time.perf_counter()
            median_command([*command, "--format", output_format, name], repeat=3)
            cold.append((output_format, (time.perf_counter() - started) / 3))
    table = "\n".join(f"| {label} | {seconds:.3f} s |" for label, seconds in rows)
    cold_table = "\n".join(
        f"| cold `prose lint --format {output_format}` | {seconds:.2f} s |"
        for output_format, seconds in cold
    )
    body = f"""## Lint with many findings

{stamp()}
Load average {load_before:.2f} before, {load_average():.2f} after.

A {text.count(chr(10)):,}-line pattern with {len(diagnostics):,} findings
({summary.errors:,} errors, {summary.warnings:,} warnings): each of its
{LINES:,} statements reads an undefined name. The text formats show
{MAX_SHOWN_PER_FILE} findings per file and say how many more there are; `json`
lists all of them.

| measure | time |
|---|---|
| the checker alone (`lint_text`) | {check_s:.3f} s |
{table}
{cold_table}

In-process rows: best of 3 (the "before" row: 1 run); cold rows: mean of 3
new processes, imports and the check included.
"""
    write_section("lint-findings", body)
    print(body)


if __name__ == "__main__":
    main()
