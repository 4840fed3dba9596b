"""`prose lsp` end to end: pygls's own client talks to the real server process over stdio.

Each test starts `prose lsp` in a subprocess, initializes it, opens a pattern file and
asks what an editor would ask. `Session` is also used by tests/test_lsp_fuzz.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "-c", "from prose.cli.main import main; main()", "lsp"]
PATTERN = (ROOT / "patterns" / "proposer-adversary.prose.md").read_text(encoding="utf-8")

LEAKY_PROGRAM = '''```prose
let proposal = call proposer
  task_brief: task_brief

let attack = call adversary
  task_brief: task_brief
  proposal: proposal

let revised = call proposer
  task_brief: "Answer again, knowing: {attack}"

return { result: { proposal: revised, attack: attack } }
'''


def leaky_pattern() -> str:
    """proposer-adversary where the proposer is given the attack (PH604)."""
    start = PATTERN.index("```prose")
    end = PATTERN.index("```\n\n### Notes")
    return PATTERN[:start] + LEAKY_PROGRAM + PATTERN[end:]


def line_of(text: str, needle: str) -> int:
    """The 0-based line of the first line containing `needle`."""
    return next(i for i, line in enumerate(text.split("\n")) if needle in line)


def position_of(text: str, needle: str, offset: int = 0, after: str | None = None) -> lsp.Position:
    """The LSP position of `needle` (+ `offset` characters), on a line after one holding `after`."""
    lines = text.split("\n")
    start = line_of(text, after) if after else 0
    for number in range(start, len(lines)):
        column = lines[number].find(needle)
        if column >= 0:
            return lsp.Position(line=number, character=column + offset)
    raise AssertionError(f"{needle!r} not found")


class Session:
    """A running `prose lsp` with a client attached; diagnostics collected per URI."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.diagnostics: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.logs: list[str] = []
        self.changed = asyncio.Event()
        self.versions: dict[str, int] = {}

    async def open(self, uri: str, text: str) -> None:
        self.versions[uri] = 1
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)))

    def change(self, uri: str, changes: list[Any]) -> int:
        self.versions[uri] += 1
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=changes))
        return self.versions[uri]

    async def published(self, uri: str, *, version: int | None = None,
                        where: Callable[[list[lsp.Diagnostic]], bool] | None = None,
                        timeout: float = 30) -> list[lsp.Diagnostic]:
        """Wait for diagnostics of `uri` (of `version`, matching `where`) and return them."""

        async def wait() -> list[lsp.Diagnostic]:
            while True:
                for params in reversed(self.diagnostics.get(uri, [])):
                    if version is not None and params.version != version:
                        continue
                    if where is None or where(params.diagnostics):
                        return params.diagnostics
                    break
                self.changed.clear()
                await self.changed.wait()

        return await asyncio.wait_for(wait(), timeout)


async def _session(body: Callable[[Session], Awaitable[None]], options: dict[str, Any]) -> None:
    client = LanguageClient("prose-tests", "1")
    session = Session(client)

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(ls: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
        session.diagnostics.setdefault(params.uri, []).append(params)
        session.changed.set()

    @client.feature(lsp.WINDOW_LOG_MESSAGE)
    def on_log(ls: LanguageClient, params: lsp.LogMessageParams) -> None:
        session.logs.append(params.message)

    await client.start_io(*SERVER)
    try:
        await asyncio.wait_for(client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), initialization_options=options)), 60)
        client.initialized(lsp.InitializedParams())
        await body(session)
        await asyncio.wait_for(client.shutdown_async(None), 30)
        client.exit(None)
        await asyncio.wait_for(client.stop(), 30)
    except BaseException:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
        print("server log:", *session.logs, sep="\n")
        raise
    assert not [log for log in session.logs if "error" in log], session.logs


def run_session(body: Callable[[Session], Awaitable[None]], **options: Any) -> None:
    """Start the server, initialize it (no debounce unless `options` say), run `body`, shut down."""
    settings = {"quickDelay": 0, "completeDelay": 0}
    settings.update(options)
    asyncio.run(_session(body, settings))


@pytest.fixture
def leaky_file(tmp_path: Path) -> tuple[str, str]:
    path = tmp_path / "leaky.prose.md"
    text = leaky_pattern()
    path.write_text(text, encoding="utf-8")
    return path.as_uri(), text


# --- diagnostics ------------------------------------------------------------------------------


def test_a_leak_is_published_with_the_path_it_took(leaky_file: tuple[str, str]) -> None:
    uri, text = leaky_file
    found: list[lsp.Diagnostic] = []

    async def body(session: Session) -> None:
        await session.open(uri, text)
        found.extend(await session.published(uri, version=1))

    run_session(body)
    leak = next(d for d in found if d.code == "PH604")
    assert leak.severity == lsp.DiagnosticSeverity.Error
    assert leak.source == "prose"
    assert leak.message.startswith("`proposer` receives output of `adversary` through `task_brief`")
    property_line = line_of(text, 'task_brief: "Answer again')
    assert leak.range.start == lsp.Position(line=property_line, character=2)
    assert leak.code_description is not None
    assert leak.code_description.href.endswith("docs/rules/PH604.md")
    assert Path(leak.code_description.href.removeprefix("file://")).is_file()
    related = [(r.location.range.start.line, r.location.range.start.character, r.message)
               for r in leak.related_information or []]
    produced = line_of(text, "let attack = call adversary")
    assert related == [
        (produced, 13, "output of `adversary` produced here"),
        (produced, 0, "copied into `attack` here"),
        (property_line, 14, "interpolated into a string here"),
        (line_of(text, "- `proposer` is unaware of `adversary`"), 2,
         "invariant: `proposer` is unaware of `adversary`"),
    ]
    assert all(r.location.uri == uri for r in leak.related_information or [])
    info = next(d for d in found if d.code == "PH608")
    assert info.severity == lsp.DiagnosticSeverity.Information


def test_a_broken_edit_still_reports_the_spec_and_the_syntax_error(
        leaky_file: tuple[str, str]) -> None:
    uri, text = leaky_file
    found: list[lsp.Diagnostic] = []

    async def body(session: Session) -> None:
        await session.open(uri, text)
        await session.published(uri, version=1)
        line = line_of(text, "let attack = call adversary")
        # A string left open in the program, and the version removed from the frontmatter.
        version = session.change(uri, [
            lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=lsp.Position(line=line, character=0),
                                end=lsp.Position(line=line, character=0)),
                text='let oops = "unclosed\n'),
            lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=lsp.Position(line=3, character=0),
                                end=lsp.Position(line=4, character=0)),
                text=""),
        ])
        found.extend(await session.published(uri, version=version))

    run_session(body)
    codes = {d.code for d in found}
    assert "PS001" in codes  # the syntax error
    assert "PS107" in codes  # the spec finding: `version` is missing
    syntax = next(d for d in found if d.code == "PS001")
    assert "not closed" in syntax.message


def test_edits_are_debounced_into_one_quick_and_one_complete_pass(
        leaky_file: tuple[str, str]) -> None:
    uri, text = leaky_file
    published: list[lsp.PublishDiagnosticsParams] = []

    async def body(session: Session) -> None:
        await session.open(uri, text)
        await session.published(uri, version=1)
        line = line_of(text, "return {")
        version = 1
        for _ in range(5):  # five quick keystrokes: a comment typed at the end of the program
            version = session.change(uri, [lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=lsp.Position(line=line, character=0),
                                end=lsp.Position(line=line, character=0)),
                text="#")])
        await session.published(uri, version=version,
                                where=lambda ds: any(d.code == "PH604" for d in ds))
        await asyncio.sleep(0.5)
        published.extend(session.diagnostics[uri])

    run_session(body, quickDelay=0.2, completeDelay=0.3)
    versions = [p.version for p in published]
    assert versions[0] == 1
    assert set(versions[1:]) == {6}  # nothing for the versions typed over
    assert len(versions) <= 3
    # The leak stays on screen through the quick pass (it is on a line the edit did not touch).
    assert all(any(d.code == "PH604" for d in p.diagnostics) for p in published)


def test_the_server_never_imports_litellm(leaky_file: tuple[str, str]) -> None:
    uri, text = leaky_file
    code = textwrap.dedent(
        f"""
        import json, sys
        from lsprotocol import types as lsp
        from prose.lsp.server import build_server
        server = build_server()
        server.store.update({uri!r}, {text!r}, 1)
        analysis = server.store.analysis({uri!r})
        assert analysis.explanation is not None and analysis.index.occurrences
        print(json.dumps(sorted(m for m in ("litellm", "openai", "tiktoken", "httpx")
                                if m in sys.modules)))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert json.loads(done.stdout) == []
