"""A report opened in a real headless Chromium: for the tests, the benchmark and the docs' screenshots.

Playwright's Python API drives the system's Chromium (Debian's `chromium`
package; `$PROSE_CHROMIUM` names another), never a browser of its own
download. Nothing in `prose report` needs this module; it imports
Playwright only when a page is opened.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The Chromium executable to drive, or None when there is none."""
    named = os.environ.get("PROSE_CHROMIUM")
    if named:
        return named
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


@dataclass
class OpenedReport:
    """A report loaded in a page: the page, what its console said, and how long it took."""

    page: Any  # playwright.sync_api.Page
    console: list[str] = field(default_factory=list)
    load_ms: float = 0.0  # from navigation to the page's script having rendered everything
    script_ms: float = 0.0  # the page's own clock at that moment (performance.now())


@contextmanager
def opened(html: str | Path, *, width: int = 1280, height: int = 900,
           browser: Any = None) -> Iterator[OpenedReport]:
    """Open the report at `html` in headless Chromium; console errors and page errors are collected.

    `browser`, a Chromium already launched by Playwright (`launched`), opens the page in a
    context of its own, closed afterwards; without it a Chromium is launched for this page."""
    if browser is not None:
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            yield _load(context.new_page(), html)
        finally:
            context.close()
        return
    with launched() as own:
        yield _load(own.new_page(viewport={"width": width, "height": height}), html)


@contextmanager
def launched() -> Iterator[Any]:
    """A headless Chromium (a `playwright.sync_api.Browser`), closed on the way out."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise RuntimeError("no Chromium found (apt-get install chromium, or set PROSE_CHROMIUM)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable)
        try:
            yield browser
        finally:
            browser.close()


def _load(page: Any, html: str | Path) -> OpenedReport:
    report = OpenedReport(page)
    page.on("console", lambda message: report.console.append(
        f"{message.type}: {message.text}") if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: report.console.append(f"pageerror: {error}"))
    started = time.perf_counter()
    page.goto(Path(html).resolve().as_uri())
    page.wait_for_selector("body[data-ready=true]", state="attached")
    report.load_ms = (time.perf_counter() - started) * 1000
    report.script_ms = float(page.get_attribute("body", "data-ready-ms") or 0)
    return report


def screenshots(html: str | Path, folder: str | Path, name: str, *, open_call: int | None = 1) -> list[Path]:
    """Save `NAME.png` (the whole page) and, with `open_call`, `NAME-call.png` (that row opened)."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    written = [target / f"{name}.png"]
    with opened(html) as report:
        report.page.screenshot(path=str(written[0]), full_page=True)
        if open_call is not None:
            report.page.locator(f'#steps .row[data-index="{open_call}"]').click()
            report.page.wait_for_selector("#detail:not([hidden])")
            written.append(target / f"{name}-call.png")
            report.page.screenshot(path=str(written[1]))
    return written
