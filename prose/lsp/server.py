"""The language server: pygls wiring from LSP messages to the feature modules.

Diagnostics are debounced per document: an edit schedules the quick pass (everything
but the information-hiding proofs, `prose.lsp.documents.DEFERRED`) after `quick_delay`
seconds and the complete pass after `complete_delay` seconds of quiet; each new edit
reschedules both. Until the complete pass runs again, the last one's deferred findings
stay on screen, moved with the lines they are on (dropped when their own line changed).
Open and save run the complete pass at once. A request (hover, definition, ...) always
answers from the current text.

Nothing here imports LiteLLM (tests/test_lsp_server.py checks it in the real process).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from prose import __version__
from prose.lsp.diagnostics import convert, shift
from prose.lsp.documents import DEFERRED, Analysis, DocumentStore, is_pattern


class ProseLanguageServer(LanguageServer):
    """The server's state: the documents, the debounce timers, the deferred findings shown."""

    def __init__(self) -> None:
        super().__init__("prose", __version__,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.store = DocumentStore()
        self.quick_delay = 0.05
        self.complete_delay = 0.4
        self.timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self.deferred: dict[str, list[lsp.Diagnostic]] = {}
        self.shut_down = False  # the client asked `shutdown` (the exit code says so)

    # --- diagnostics ---------------------------------------------------------------

    def publish(self, analysis: Analysis) -> None:
        """Send the diagnostics of `analysis` (a quick one keeps the deferred ones shown)."""
        found = convert(analysis.result.diagnostics, analysis.uri, analysis.path, analysis.lines)
        if analysis.complete:
            self.deferred[analysis.uri] = [d for d in found if _deferred(d)]
        else:
            found.extend(self.deferred.get(analysis.uri, []))
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=analysis.uri, diagnostics=found,
                                         version=analysis.version))

    def refresh(self, uri: str, complete: bool) -> None:
        """Analyse the current text of `uri` and publish (never raises)."""
        try:
            analysis = self.store.analysis(uri, complete=complete)
            if analysis is not None:
                self.publish(analysis)
        except Exception:  # a bug must not stop the server: log it and keep serving
            self.log_error(f"analysing {uri}")

    def schedule(self, uri: str, complete: bool, delay: float) -> None:
        """Run `refresh` after `delay` seconds, replacing one scheduled before."""
        key = (uri, "complete" if complete else "quick")
        previous = self.timers.pop(key, None)
        if previous is not None:
            previous.cancel()
        if delay <= 0:
            self.refresh(uri, complete)
            return
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self.timers.pop(key, None)
            self.refresh(uri, complete)

        self.timers[key] = loop.call_later(delay, fire)

    def cancel(self, uri: str) -> None:
        for kind in ("quick", "complete"):
            timer = self.timers.pop((uri, kind), None)
            if timer is not None:
                timer.cancel()

    def log_error(self, what: str) -> None:
        self.window_log_message(lsp.LogMessageParams(
            type=lsp.MessageType.Error, message=f"prose lsp: error {what}:\n{traceback.format_exc()}"))

    def current(self, uri: str, complete: bool = True) -> Analysis | None:
        """The analysis of the current text of an open pattern file (None for others)."""
        if self.store.get(uri) is None:
            return None
        return self.store.analysis(uri, complete=complete)


def _deferred(diagnostic: lsp.Diagnostic) -> bool:
    return isinstance(diagnostic.code, str) and diagnostic.code.startswith(DEFERRED)


def _safe(handler: Callable[..., Any]) -> Callable[..., Any]:
    """A request handler that logs an unexpected error and answers nothing instead."""

    def run(ls: ProseLanguageServer, params: Any) -> Any:
        try:
            return handler(ls, params)
        except Exception:
            ls.log_error(f"in {handler.__name__}")
            return None

    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run


def build_server() -> ProseLanguageServer:
    """A server with every feature registered (start it with `start_io()`)."""
    server = ProseLanguageServer()

    @server.feature(lsp.INITIALIZE)
    @_safe
    def initialize(ls: ProseLanguageServer, params: lsp.InitializeParams) -> None:
        _configure(ls, params.initialization_options)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    @_safe
    def did_open(ls: ProseLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        if not is_pattern(document.uri):
            return
        ls.store.update(document.uri, document.text, document.version)
        ls.schedule(document.uri, complete=True, delay=0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    @_safe
    def did_change(ls: ProseLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.store.get(uri) is None:
            return
        text = ls.workspace.get_text_document(uri).source
        ls.store.update(uri, text, params.text_document.version)
        ls.deferred[uri] = shift(ls.deferred.get(uri, []), params.content_changes)
        ls.schedule(uri, complete=False, delay=ls.quick_delay)
        ls.schedule(uri, complete=True, delay=ls.complete_delay)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    @_safe
    def did_save(ls: ProseLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.store.get(uri) is None:
            return
        ls.cancel(uri)
        ls.schedule(uri, complete=True, delay=0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    @_safe
    def did_close(ls: ProseLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.store.get(uri) is None:
            return
        ls.cancel(uri)
        ls.store.close(uri)
        ls.deferred.pop(uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: ProseLanguageServer, params: None) -> None:
        ls.shut_down = True
        for timer in ls.timers.values():  # no analysis after the client said it is done
            timer.cancel()
        ls.timers.clear()

    @server.feature(lsp.EXIT)
    def exit_(ls: ProseLanguageServer, params: None) -> None:
        _exit_within(EXIT_GRACE, 0 if ls.shut_down else 1)

    _register_requests(server)
    return server


# Seconds the process may take to end after `exit` before it ends itself: pygls waits for
# its reader threads as it stops, and one blocked on a standard input the client keeps
# open would hold the process (and the client waiting for it) for good.
EXIT_GRACE = 3.0


def _exit_within(seconds: float, code: int) -> None:
    """End the process with `code` after `seconds` unless it has ended by then."""

    def end() -> None:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)

    timer = threading.Timer(seconds, end)
    timer.daemon = True
    timer.start()


def _register_requests(server: ProseLanguageServer) -> None:
    from prose.lsp import actions, completion, hover, navigation

    # (feature, its options, whether the answer needs the complete analysis, the answer)
    requests: tuple[tuple[str, Any, bool, Callable[[Analysis, Any], Any]], ...] = (
        (lsp.TEXT_DOCUMENT_HOVER, None, True, lambda a, p: hover.hover(a, p.position)),
        (lsp.TEXT_DOCUMENT_DEFINITION, None, False,
         lambda a, p: navigation.definition(a, p.position)),
        (lsp.TEXT_DOCUMENT_REFERENCES, None, False,
         lambda a, p: navigation.references(a, p.position, p.context.include_declaration)),
        (lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, None, False,
         lambda a, p: navigation.document_symbols(a)),
        (lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[" ", "{", "`"]),
         False, lambda a, p: completion.complete(a, p.position)),
        (lsp.TEXT_DOCUMENT_FORMATTING, None, False, lambda a, p: actions.format_document(a)),
        (lsp.TEXT_DOCUMENT_CODE_ACTION,
         lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]), True,
         actions.code_actions),
    )
    for feature, options, complete, answer in requests:
        server.feature(feature, options)(_safe(_about_document(feature, answer, complete)))


def _about_document(feature: str, answer: Callable[[Analysis, Any], Any],
                    complete: bool) -> Callable[[ProseLanguageServer, Any], Any]:
    """The handler of a request about one document: `answer` from the analysis of its
    current text, nothing for a file that is no open pattern."""

    def handler(ls: ProseLanguageServer, params: Any) -> Any:
        analysis = ls.current(params.text_document.uri, complete=complete)
        return answer(analysis, params) if analysis else None

    handler.__name__ = f"on {feature}"
    return handler


def _configure(ls: ProseLanguageServer, options: Any) -> None:
    """`initializationOptions`: `{"quickDelay": seconds, "completeDelay": seconds}`."""
    if not isinstance(options, dict):
        return
    for key, attribute in (("quickDelay", "quick_delay"), ("completeDelay", "complete_delay")):
        value = options.get(key)
        if isinstance(value, int | float) and 0 <= value <= 60:
            setattr(ls, attribute, float(value))


def serve() -> None:
    """Run the server over stdin and stdout until the client says exit; the exit code is
    0 after `shutdown`, 1 without it (the protocol's rule)."""
    server = build_server()
    server.start_io()
    raise SystemExit(0 if server.shut_down else 1)
