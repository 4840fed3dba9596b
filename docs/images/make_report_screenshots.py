"""Regenerate the report screenshots in docs/images/ (docs/report.md shows them).

Run: python docs/images/make_report_screenshots.py
It runs the acceptance command in a temporary folder,

    prose run examples/two-reviewer-gate.yaml --script examples/two-reviewer-gate.script.yaml --report

opens the report.html it wrote in headless Chromium (prose.report.browser) and
saves: report-overview.png (the top of the page), report-call.png (a call
opened), report-flow.png (the data-flow graph), report-transcripts.png and
report-tampered.png (the same run's trace with one byte changed).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from prose.report import write_report  # noqa: E402
from prose.report.browser import opened  # noqa: E402

IMAGES = ROOT / "docs" / "images"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.jsonl"
        subprocess.run([sys.executable, "-c", "from prose.cli.main import main; main()", "run",
                        "examples/two-reviewer-gate.yaml", "--script",
                        "examples/two-reviewer-gate.script.yaml", "--report", "--trace",
                        str(trace), "-q"], cwd=ROOT, check=True, capture_output=True)
        with opened(trace.with_name("report.html"), height=1000) as report:
            page = report.page
            page.screenshot(path=str(IMAGES / "report-overview.png"))
            page.locator("#flow").scroll_into_view_if_needed()
            page.locator("svg.flow").screenshot(path=str(IMAGES / "report-flow.png"))
            page.locator("#transcripts").scroll_into_view_if_needed()
            page.screenshot(path=str(IMAGES / "report-transcripts.png"))
            page.evaluate("window.scrollTo(0, 0)")
            page.locator('#steps .row[data-index="2"]').click()
            page.screenshot(path=str(IMAGES / "report-call.png"))
        lines = trace.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[2] = lines[2].replace('"DONE"', '"FAIL"', 1)
        tampered = Path(folder) / "tampered" / "trace.jsonl"
        tampered.parent.mkdir()
        tampered.write_text("".join(lines), encoding="utf-8")
        with opened(write_report(tampered), height=420) as report:
            report.page.screenshot(path=str(IMAGES / "report-tampered.png"))
    for name in sorted(IMAGES.glob("report-*.png")):
        print(f"wrote {name.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
