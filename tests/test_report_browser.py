"""The report in a real headless Chromium (Debian's `chromium`, driven by Playwright's Python API).

It loads with no console error, shows every call, opens a call's messages,
never runs what a model wrote, stays usable with thousands of calls, and a
tampered trace's page says so at the top. Screenshots go to `.ci/artifacts/`.
Without Chromium these tests are skipped, except under CI (`CI` set), where
`.ci/run` installs it and its absence is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from test_report import gate_run, hostile_script

from prose.report import write_report
from prose.report.browser import chromium_path, launched, opened
from prose.report.synthetic import write_synthetic_trace

ARTIFACTS = ROOT / ".ci" / "artifacts"


@pytest.fixture(scope="module", autouse=True)
def browser_at_hand() -> Iterator[None]:
    missing = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing = "playwright is not installed (pip install -e '.[dev]')"
    if missing is None and chromium_path() is None:
        missing = "no chromium (apt-get install -y chromium)"
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    yield


@pytest.fixture(scope="module")
def gate_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    trace = gate_run(tmp_path_factory.mktemp("gate"))
    return write_report(trace)


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    return write_report(gate_run(folder, hostile_script(folder)))


@pytest.fixture(scope="module")
def crowded_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(write_synthetic_trace(tmp_path_factory.mktemp("crowded") / "trace.jsonl",
                                              2000))


@pytest.fixture(scope="module")
def tampered_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    trace = gate_run(tmp_path_factory.mktemp("tampered"))
    lines = trace.read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if '"DONE"' in line)
    lines[first] = lines[first].replace('"DONE"', '"FAIL"', 1)
    trace.write_text("".join(lines), encoding="utf-8")
    return write_report(trace)


@pytest.fixture(scope="module")
def chromium(browser_at_hand: None, gate_page: Path, hostile_page: Path, crowded_page: Path,
             tampered_page: Path) -> Iterator[Any]:
    """One real headless Chromium for the module; each test opens its page in a context of
    its own (`opened(..., browser=chromium)`), so no cookie, storage or script is shared.

    The pages are written first: a run (`gate_run`) starts an event loop, which Playwright's
    sync API does not allow while its own is alive."""
    with launched() as browser:
        yield browser


def test_the_gate_report_loads_shows_every_call_and_opens_one(gate_page: Path, chromium: Any) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with opened(gate_page, browser=chromium) as report:
        page = report.page
        assert report.console == []
        assert page.locator("#steps .row").count() == 6
        assert page.get_attribute("#steps", "data-rows") == "6"
        assert page.locator("#summary").get_attribute("data-calls") == "6"
        assert page.locator("#integrity").inner_text().startswith("Audit: hash chain intact")
        page.screenshot(path=str(ARTIFACTS / "report-two-reviewer-gate.png"), full_page=True)
        assert page.locator("#detail").is_hidden()
        page.locator('#steps .row[data-index="2"]').click()
        detail = page.locator("#detail")
        assert detail.is_visible()
        assert page.locator("#detail-title").inner_text() == "call reviewer_b (c3)"
        text = detail.inner_text()
        assert "MESSAGES SENT" in text.upper() and "## candidate" in text
        assert "You try to disprove results." in text
        source = (ROOT / "patterns" / "two-reviewer-gate.prose.md").read_text().splitlines()
        line = next(i for i, text_line in enumerate(source, start=1)
                    if text_line.strip() == "review_b = call reviewer_b")
        assert f"{line} | review_b = call reviewer_b" in text
        assert "held (re-checked by prose audit)" in text
        assert page.locator("#detail .message").count() == 2
        page.screenshot(path=str(ARTIFACTS / "report-two-reviewer-gate-call.png"))
        page.keyboard.press("Escape")
        assert detail.is_hidden()
        assert page.locator("#transcript article.turn").count() == 2  # the first slot's two turns
        assert page.locator("svg.flow .edge").count() > 0
        assert report.console == []


def test_what_a_model_wrote_is_shown_never_run(hostile_page: Path, chromium: Any) -> None:
    with opened(hostile_page, browser=chromium) as report:
        page = report.page
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.locator("img").count() == 0
        page.locator('#steps .row[data-index="0"]').click()
        # the worker's value, the files it wrote, shown as JSON text: the page's HTML in it
        shown = page.locator("#detail pre.reply").inner_text()
        assert "</script><script>window.pwned = 1</script>" in shown
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert report.console == []


def test_two_thousand_calls_stay_responsive(crowded_page: Path, chromium: Any) -> None:
    with opened(crowded_page, browser=chromium) as report:
        page = report.page
        rows = int(page.get_attribute("#steps", "data-rows") or 0)
        assert rows > 2000
        assert page.locator("#steps .row").count() < 100  # only the rows in view are built
        page.locator("#steps").evaluate("list => { list.scrollTop = list.scrollHeight; }")
        last = page.locator(f'#steps .row[data-index="{rows - 1}"]')
        last.wait_for()
        last.click()
        assert page.locator("#detail").is_visible()
        assert page.locator("#transcript article.turn").count() == 25  # a page of turns
        page.locator("#transcript button.more").click()
        assert page.locator("#transcript article.turn").count() == 50
        assert report.console == []


def test_a_tampered_trace_says_so_at_the_top(tampered_page: Path, chromium: Any) -> None:
    with opened(tampered_page, browser=chromium) as report:
        banner = report.page.locator("#integrity")
        assert banner.get_attribute("data-state") == "tampered"
        assert "altered or cut" in banner.inner_text()
        assert banner.bounding_box()["y"] == 0  # type: ignore[index]
        report.page.screenshot(path=str(ARTIFACTS / "report-tampered.png"))
