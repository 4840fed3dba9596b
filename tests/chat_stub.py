"""A chat-completions server on loopback for tests that answer by a rule of their own.

`ChatStub` does the HTTP (one thread a request, JSON in and out, a client that hung up
is no error); a subclass's `respond(user)` gets the last user message and returns the
status and the JSON body. `serving(stub)` runs one for a test and stops it after,
releasing any request it holds (`stub.stop`). tests/llm_server.py is the general
loopback provider (queued behaviours per model); this is for the few tests whose
answers depend on what was sent or on shared counters.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar


class ChatStub:
    """The server; `received` holds every user message, in arrival order."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                status, payload = stub.respond(body["messages"][-1]["content"])
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:  # the client gave up on this request
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def respond(self, user: str) -> tuple[int, dict[str, Any]]:
        """The status and JSON body answering a request whose last user message is `user`."""
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def completion(text: str, *, id: str = "c") -> dict[str, Any]:
    """A chat completion answering `text` (7 prompt tokens, 2 completion tokens)."""
    return {
        "id": id, "object": "chat.completion", "created": 0, "model": "stub",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
    }


def failure(message: str, code: str, kind: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body (its `type` is `kind`, else the code)."""
    return {"error": {"message": message, "type": kind or code, "code": code}}


Stub = TypeVar("Stub", bound=ChatStub)


def serving(stub: Stub) -> Iterator[Stub]:
    """Run `stub` for one test (a fixture's body: `yield from serving(Stub())`)."""
    stub.thread.start()
    yield stub
    stub.stop.set()
    stub.server.shutdown()
    stub.server.server_close()
