"""`prose lsp` end to end: pygls's own client talks to the real server process over stdio.

The tests open a pattern file of their own and ask what an editor would ask: most of
them of one `prose lsp` subprocess shared by the module (`shared_server`, started and
initialized once), the debounce test of a server of its own started with its delays.
`Session` is also used by tests/test_lsp_fuzz.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "-c", "from prose.cli.main import main; main()", "lsp"]
# The library says why its prose bullet is not checkable; these tests need one that does
# not (PH608 and its quick fix).
EXPLAINED = (" (not machine-checked: `is unaware of` would forbid the proposal, which the "
             "adversary must read)")
PATTERN = ((ROOT / "patterns" / "proposer-adversary.prose.md").read_text(encoding="utf-8")
           .replace(EXPLAINED, ""))

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


async def _start(options: dict[str, Any]) -> Session:
    """Start `prose lsp` with a client attached and initialize it with `options`."""
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
    except BaseException:
        _kill(session)
        raise
    return session


async def _stop(session: Session) -> None:
    """Shut the server down as an editor does; it must exit."""
    client = session.client
    try:
        try:
            await asyncio.wait_for(client.shutdown_async(None), 30)
        except TimeoutError:
            pytest.fail("the server did not answer `shutdown` within 30 s")
        client.exit(None)
        try:
            await asyncio.wait_for(client.stop(), 30)
        except TimeoutError:
            pytest.fail("the server did not end within 30 s of `exit`")
        assert client._server is not None and client._server.returncode == 0
    except BaseException:
        _kill(session)
        raise


def _kill(session: Session) -> None:
    server = session.client._server
    if server is not None and server.returncode is None:
        server.kill()
    print("server log:", *session.logs, sep="\n")


def _no_error_logged(logs: list[str]) -> None:
    assert not [log for log in logs if "error" in log], logs


async def _session(body: Callable[[Session], Awaitable[None]], options: dict[str, Any]) -> None:
    session = await _start(options)
    try:
        await body(session)
    except BaseException:
        _kill(session)
        raise
    await _stop(session)
    _no_error_logged(session.logs)


NO_DEBOUNCE = {"quickDelay": 0, "completeDelay": 0}


def run_session(body: Callable[[Session], Awaitable[None]], **options: Any) -> None:
    """Start the server, initialize it (no debounce unless `options` say), run `body`, shut down."""
    asyncio.run(_session(body, {**NO_DEBOUNCE, **options}))


class SharedServer:
    """One `prose lsp` (no debounce) for the tests of this module that open their own files.

    Each test opens documents of its own (a file under its own `tmp_path`, so a URI no other
    test uses) and asks about them, so the tests stay independent; the server is started and
    initialized once instead of once per test. Its event loop runs only while a test's body
    does; what the server sends in between waits in the pipe.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.session = self.loop.run_until_complete(_start(dict(NO_DEBOUNCE)))

    def run(self, body: Callable[[Session], Awaitable[None]]) -> None:
        """Run `body` on the shared session; the server logs no error meanwhile."""
        logged = len(self.session.logs)
        try:
            self.loop.run_until_complete(body(self.session))
        except BaseException:
            print("server log:", *self.session.logs[logged:], sep="\n")
            raise
        _no_error_logged(self.session.logs[logged:])

    def close(self) -> None:
        try:
            self.loop.run_until_complete(_stop(self.session))
        finally:
            self.loop.close()
        _no_error_logged(self.session.logs)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[SharedServer]:
    server = SharedServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def leaky_file(tmp_path: Path) -> tuple[str, str]:
    path = tmp_path / "leaky.prose.md"
    text = leaky_pattern()
    path.write_text(text, encoding="utf-8")
    return path.as_uri(), text


# --- diagnostics ------------------------------------------------------------------------------


def test_a_leak_is_published_with_the_path_it_took(leaky_file: tuple[str, str],
                                                    shared_server: SharedServer) -> None:
    uri, text = leaky_file
    found: list[lsp.Diagnostic] = []

    async def body(session: Session) -> None:
        await session.open(uri, text)
        found.extend(await session.published(uri, version=1))

    shared_server.run(body)
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
        leaky_file: tuple[str, str], shared_server: SharedServer) -> None:
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

    shared_server.run(body)
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
        print(json.dumps(sorted(m for m in ("litellm", "openai", "tiktoken", "httpx", "mcp")
                                if m in sys.modules)))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert json.loads(done.stdout) == []


# --- hover, navigation, completion, outline -------------------------------------------------


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """`text` with `edits` applied (ASCII text: UTF-16 columns are characters)."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def offset(position: lsp.Position) -> int:
        return offsets[position.line] + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def document(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


def test_hover_shows_who_sees_what(leaky_file: tuple[str, str],
                                   shared_server: SharedServer) -> None:
    uri, text = leaky_file
    hovers: dict[str, str] = {}

    async def body(session: Session) -> None:
        await session.open(uri, text)
        await session.published(uri, version=1)
        points = {
            "slot": position_of(text, "call proposer", offset=6, after="let revised"),
            "variable": position_of(text, "{attack}", offset=2),
            "parameter": position_of(text, "task_brief: task_brief", offset=14),
            "rule": position_of(text, "- `proposer` is unaware", offset=4),
        }
        for what, point in points.items():
            found = await session.client.text_document_hover_async(
                lsp.HoverParams(text_document=document(uri), position=point))
            assert found is not None, what
            assert isinstance(found.contents, lsp.MarkupContent)
            hovers[what] = found.contents.value
        # A rule code, as written in a suppression comment.
        line = line_of(text, "return {")
        version = session.change(uri, [lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=lsp.Position(line=line, character=0),
                            end=lsp.Position(line=line, character=0)),
            text="# prose: ignore[PK504]\n")])
        await session.published(uri, version=version)
        found = await session.client.text_document_hover_async(lsp.HoverParams(
            text_document=document(uri), position=lsp.Position(line=line, character=18)))
        assert found is not None and isinstance(found.contents, lsp.MarkupContent)
        hovers["code"] = found.contents.value

    shared_server.run(body)
    slot = hovers["slot"]
    assert slot.startswith("**slot** `proposer` (primary)\nrequires: task_brief\nensures: proposal")
    assert "- `proposer` sees only `task_brief` (line 33): checked, holds" in slot
    assert "- `proposer` is unaware of `adversary` (line 35): checked, **violated**" in slot
    assert "  - `task_brief` carries no slot output" in slot
    assert "  - `task_brief` carries `adversary`" in slot  # the leak, on the second call
    assert hovers["variable"].startswith("**variable** `attack` (bound at line 62)")
    assert "carries `adversary`" in hovers["variable"]
    assert hovers["parameter"].startswith("**parameter** `task_brief`: string -- what the proposer")
    assert hovers["rule"].startswith("**slot** `proposer`")  # the name in an invariant
    assert hovers["code"].startswith("**PK504** `")


def test_definition_and_references_cross_the_program_and_the_sections(
        leaky_file: tuple[str, str], shared_server: SharedServer) -> None:
    uri, text = leaky_file
    answers: dict[str, Any] = {}

    async def body(session: Session) -> None:
        await session.open(uri, text)
        await session.published(uri, version=1)
        client = session.client
        call = position_of(text, "call adversary", offset=7)
        answers["slot"] = await client.text_document_definition_async(
            lsp.DefinitionParams(text_document=document(uri), position=call))
        use = position_of(text, "proposal: proposal", offset=12)
        answers["variable"] = await client.text_document_definition_async(
            lsp.DefinitionParams(text_document=document(uri), position=use))
        answers["references"] = await client.text_document_references_async(lsp.ReferenceParams(
            text_document=document(uri), position=call,
            context=lsp.ReferenceContext(include_declaration=True)))
        answers["symbols"] = await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=document(uri)))
        in_call = position_of(text, "let revised = call proposer", offset=len("let revised = call "))
        answers["after call"] = await client.text_document_completion_async(lsp.CompletionParams(
            text_document=document(uri), position=in_call))
        line = line_of(text, "return {")
        answers["statement"] = await client.text_document_completion_async(lsp.CompletionParams(
            text_document=document(uri), position=lsp.Position(line=line, character=0)))

    shared_server.run(body)
    declared = line_of(text, "- `adversary`")
    assert [(loc.range.start.line, loc.range.start.character, loc.range.end.character)
            for loc in answers["slot"]] == [(declared, 3, 12)]
    bound = line_of(text, "let proposal = call proposer")
    assert [(loc.range.start.line, loc.range.start.character) for loc in answers["variable"]] \
        == [(bound, 4)]
    lines = sorted({loc.range.start.line for loc in answers["references"]})
    assert lines == sorted({
        declared,
        line_of(text, "- `adversary` sees only"),
        line_of(text, "- `proposer` is unaware of `adversary`"),
        line_of(text, "the result returns `proposer` and `adversary`"),
        line_of(text, "  - `adversary`: find what is wrong"),
        line_of(text, "let attack = call adversary"),
    })
    outline = {symbol.name: symbol for symbol in answers["symbols"]}
    assert {"Slots", "Config", "Invariants", "Parameters", "Delegation"} <= set(outline)
    assert [child.name for child in outline["Slots"].children] == ["proposer", "adversary"]
    assert [child.name for child in outline["Delegation"].children] == [
        "proposal", "attack", "revised"]
    after_call = {item.label for item in answers["after call"]}
    assert after_call == {"proposer", "adversary"}
    statement = {item.label for item in answers["statement"]}
    assert {"proposal", "attack", "task_brief", "proposer", "let", "call", "parallel"} <= statement


# --- formatting and code actions ------------------------------------------------------------


def test_formatting_and_quick_fixes_apply(tmp_path: Path, shared_server: SharedServer) -> None:
    text = (PATTERN
            .replace("- The adversary is not told that its attack will be weighed against the proposal",
                     "- The proposer never sees the adversary")
            .replace("let proposal = call proposer\n  task_brief: task_brief\n",
                     "let proposal =   call proposer\n  task_brief: task_brief\n  extra: task_brief\n",
                     1)
            .replace("{ result: { proposal: proposal,", "{ result: { proposal: proposl,"))
    path = tmp_path / "fixes.prose.md"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    results: dict[str, Any] = {}

    async def body(session: Session) -> None:
        await session.open(uri, text)
        found = await session.published(uri, version=1)
        results["codes"] = sorted(d.code for d in found if isinstance(d.code, str))
        results["formatting"] = await session.client.text_document_formatting_async(
            lsp.DocumentFormattingParams(text_document=document(uri),
                                         options=lsp.FormattingOptions(tab_size=2,
                                                                       insert_spaces=True)))
        actions = {}
        for code in ("PH608", "PH601", "PN101"):
            diagnostic = next(d for d in found if d.code == code)
            answer = await session.client.text_document_code_action_async(lsp.CodeActionParams(
                text_document=document(uri), range=diagnostic.range,
                context=lsp.CodeActionContext(diagnostics=[diagnostic])))
            actions[code] = answer
        results["actions"] = actions
        fixed = text
        for code in ("PH608", "PH601", "PN101"):
            action = actions[code][0]
            assert isinstance(action, lsp.CodeAction) and action.edit and action.edit.changes
            fixed = apply_edits(fixed, action.edit.changes[uri])
        results["fixed"] = fixed
        version = session.change(uri, [lsp.TextDocumentContentChangeWholeDocument(text=fixed)])
        results["after"] = await session.published(uri, version=version)

    shared_server.run(body)
    assert {"PH601", "PH608", "PN101"} <= set(results["codes"])
    edits = results["formatting"]
    assert len(edits) == 1
    assert "let proposal = call proposer\n" in apply_edits(text, edits)
    titles = {code: [a.title for a in found] for code, found in results["actions"].items()}
    assert titles == {
        "PH608": ["Rewrite as a checkable invariant: `proposer` never sees `adversary`"],
        "PH601": ["Declare `extra` in `requires:` of `proposer`"],
        "PN101": ["Rename to `proposal`", "Rename to `proposer`"],
    }
    fixed = results["fixed"]
    assert "- `proposer` never sees `adversary`\n" in fixed
    assert "  - requires: task_brief, extra\n" in fixed
    assert "{ result: { proposal: proposal," in fixed
    assert not {"PH601", "PH608", "PN101"} & {d.code for d in results["after"]}


def test_the_server_ends_after_exit_even_with_a_reader_waiting_on_open_stdin() -> None:
    """pygls waits for its reader threads as it stops; one blocked on a standard input the
    client keeps open must not keep the process (and the client waiting for it) alive."""
    program = textwrap.dedent("""
        import sys, threading
        from prose.lsp.server import _exit_within
        threading.Thread(target=sys.stdin.buffer.readline).start()  # not a daemon
        _exit_within(0.2, 0)
    """)
    process = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE)
    try:
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        assert process.stdin is not None
        process.stdin.close()


def test_exit_without_shutdown_ends_the_server_with_code_1() -> None:
    """The protocol's rule: `exit` before `shutdown` is an error exit (1), after it 0."""
    def frame(message: dict[str, Any]) -> bytes:
        body = json.dumps(message).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    for asked, code in ((True, 0), (False, 1)):
        messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"capabilities": {}}},
                    {"jsonrpc": "2.0", "method": "initialized", "params": {}}]
        if asked:
            messages.append({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        messages.append({"jsonrpc": "2.0", "method": "exit"})
        process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        assert process.stdin is not None
        try:
            process.stdin.write(b"".join(frame(m) for m in messages))
            process.stdin.flush()
            assert process.wait(timeout=60) == code  # stdin still open
        finally:
            if process.poll() is None:
                process.kill()
            process.stdin.close()
