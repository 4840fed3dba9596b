"""The server survives random edits sent through the real protocol.

Hypothesis makes one edit per example (insert, delete or replace, anywhere, with text
full of the language's punctuation, line breaks and non-ASCII characters) and sends it
to one long-lived `prose lsp` process; every 25 edits and at the end a hover must be
answered, and the last diagnostics must be those of a fresh lint of the final text.

`PROSE_LSP_FUZZ_EDITS` sets the number of edits (300 by default; the 10,000-edit run
is recorded in docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from test_lsp_server import PATTERN, SERVER, Session, _stop

from prose.lsp.diagnostics import convert
from prose.lsp.documents import analyse
from prose.lsp.incremental import ProgramCache
from prose.lsp.positions import utf16_column

EDITS = int(os.environ.get("PROSE_LSP_FUZZ_EDITS", "300"))
EOL = re.compile(r"\r\n|\r|\n")
T = TypeVar("T")

PIECES = st.sampled_from([
    "let ", "call ", "proposer", "adversary", "task_brief", " = ", ":", "\n", "\n  ", "  ",
    '"', '"""', "{", "}", "[", "]", "(", ")", ",", "`", "#", "- ", "### ", "```", "```prose\n",
    "parallel:\n", "if x:\n", "for a in b:\n", "return ", "é", "😀", "\t", "\r\n", "x",
])


class Fuzz:
    """One server process and the text the client believes it holds."""

    def __init__(self, uri: str, text: str) -> None:
        self.uri = uri
        self.text = text
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = LanguageClient("prose-fuzz", "1")
        self.session = Session(self.client)
        self.edits = 0

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(ls: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
            self.session.diagnostics[params.uri] = [params]  # keep only the last
            self.session.changed.set()

        @self.client.feature(lsp.WINDOW_LOG_MESSAGE)
        def on_log(ls: LanguageClient, params: lsp.LogMessageParams) -> None:
            self.session.logs.append(params.message)

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def start(self) -> None:
        async def start() -> None:
            self.session.changed = asyncio.Event()
            await self.client.start_io(*SERVER)
            await self.client.initialize_async(lsp.InitializeParams(
                capabilities=lsp.ClientCapabilities(),
                initialization_options={"quickDelay": 0, "completeDelay": 0.02}))
            self.client.initialized(lsp.InitializedParams())
            await self.session.open(self.uri, self.text)

        self.run(start(), timeout=120)

    def stop(self) -> None:
        try:
            self.run(_stop(self.session), timeout=90)
        finally:
            server = self.client._server
            if server is not None and server.returncode is None:
                server.kill()
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)

    def position(self, offset: int) -> lsp.Position:
        """The LSP position of a character offset (line breaks: `\\r\\n`, `\\r`, `\\n`)."""
        before = self.text[:offset]
        breaks = list(EOL.finditer(before))
        start = breaks[-1].end() if breaks else 0
        return lsp.Position(line=len(breaks), character=utf16_column(before[start:], offset - start))

    def snap(self, offset: int) -> int:
        """Never between the two characters of a `\\r\\n` (no position is there)."""
        offset = min(offset, len(self.text))
        if 0 < offset < len(self.text) and self.text[offset - 1:offset + 1] == "\r\n":
            return offset + 1
        return offset

    def edit(self, start: int, end: int, new: str) -> None:
        start, end = sorted((self.snap(start), self.snap(end)))
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=self.position(start), end=self.position(end)), text=new)
        self.text = self.text[:start] + new + self.text[end:]

        async def send() -> None:
            self.session.change(self.uri, [change])

        self.run(send())
        self.edits += 1
        if self.edits % 25 == 0:
            self.answers()

    def answers(self) -> None:
        """A request is answered (the server is not stuck)."""
        position = self.position(len(self.text) // 2)

        async def ask() -> None:
            await asyncio.wait_for(self.client.text_document_hover_async(lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=self.uri), position=position)), 60)

        self.run(ask(), timeout=90)

    def last_diagnostics(self) -> list[lsp.Diagnostic]:
        version = self.session.versions[self.uri]

        async def wait() -> list[lsp.Diagnostic]:
            return await self.session.published(self.uri, version=version, timeout=60)

        return self.run(wait(), timeout=90)


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzz]:
    path: Path = tmp_path_factory.mktemp("fuzz") / "fuzzed.prose.md"
    path.write_text(PATTERN, encoding="utf-8")
    fuzz = Fuzz(path.as_uri(), PATTERN)
    fuzz.start()
    try:
        yield fuzz
    finally:
        fuzz.stop()


@settings(max_examples=EDITS, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(start=st.integers(0, 4000), length=st.integers(0, 40),
       new=st.lists(PIECES, max_size=4).map("".join))
def test_random_edits_never_crash_or_stall_the_server(fuzz: Fuzz, start: int, length: int,
                                                      new: str) -> None:
    if len(fuzz.text) > 20_000:  # keep the document a pattern's size
        new = ""
        length = 400
    at = start % (len(fuzz.text) + 1)
    fuzz.edit(at, at + length, new)


def test_after_the_edits_the_diagnostics_are_those_of_the_final_text(fuzz: Fuzz) -> None:
    assert fuzz.edits == EDITS
    fuzz.answers()
    published = fuzz.last_diagnostics()
    expected = analyse(fuzz.uri, fuzz.text, None, programs=ProgramCache())
    wanted = convert(expected.result.diagnostics, fuzz.uri, expected.path, expected.lines)
    assert sorted((d.code, d.range.start.line, d.message) for d in published) == \
        sorted((d.code, d.range.start.line, d.message) for d in wanted)
    assert fuzz.client._server is not None and fuzz.client._server.returncode is None
    assert not [log for log in fuzz.session.logs if "error" in log], fuzz.session.logs[:3]
