"""A loopback OpenAI-compatible chat server for the LLM tests.

Runs `http.server` in a thread on 127.0.0.1 with a random port. Each model
name has a queue of scripted behaviours (`Reply`, `Status`, `Delay`, `Held`, `Raw`, `Echo`);
an empty queue answers `Reply("ok")`. Every request is recorded.

    with FakeLLMServer() as server:
        server.enqueue("fake", Status(500, "boom"), Reply("fine"))
        # litellm_params: {model: openai/fake, api_base: server.base_url}
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A 200 chat completion with `content`; usage as given (None: no usage block)."""

    content: str | None
    prompt_tokens: int | None = 11
    completion_tokens: int | None = 5
    finish_reason: str = "stop"
    # (name, arguments as JSON text) of tool calls the model asks for (content then null).
    tool_calls: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Status:
    """An error status with an OpenAI-style error body and extra headers."""

    code: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Delay:
    """Wait `seconds` (cut short when the server stops), then behave as `then`."""

    seconds: float
    then: Reply | Status | Raw = field(default_factory=lambda: Reply("late"))


@dataclass(frozen=True)
class Held:
    """Wait until the test sets `release` (at most `seconds`), then behave as `then`: a
    call kept in flight for exactly as long as the test needs."""

    release: threading.Event
    then: Reply | Status | Raw = field(default_factory=lambda: Reply("held"))
    seconds: float = 120.0


@dataclass(frozen=True)
class Raw:
    """A body sent as is (e.g. malformed JSON)."""

    body: bytes
    code: int = 200


@dataclass(frozen=True)
class Echo:
    """A 200 reply whose text is every header of the request, `name: value` a line: a
    provider that echoes what it was sent (keys included)."""


Behaviour = Reply | Status | Delay | Held | Raw | Echo


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeLLMServer:
    """The server; use as a context manager or call `start()`/`stop()`."""

    def __init__(self) -> None:
        self._queues: dict[str, deque[Behaviour]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._cancel = threading.Event()
        self.requests: list[Recorded] = []
        # Requests still sleeping from an earlier test are not counted.
        self._generation = 0
        self._in_flight: dict[int, int] = {}
        self.max_in_flight = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._cancel.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def enqueue(self, model: str, *behaviours: Behaviour) -> None:
        with self._lock:
            self._queues.setdefault(model, deque()).extend(behaviours)

    def reset(self) -> None:
        """Forget queues and requests; cut short the delays still running."""
        with self._lock:
            self._queues.clear()
            self.requests.clear()
            self.max_in_flight = 0
            self._generation += 1
            self._cancel.set()
            self._cancel = threading.Event()

    def models_called(self) -> list[str]:
        return [r.body.get("model", "") for r in self.requests]

    # Called from the handler threads -----------------------------------------------

    def _next(self, model: str) -> Behaviour:
        with self._lock:
            queue = self._queues.get(model)
            return queue.popleft() if queue else Reply("ok")

    def _enter(self, record: Recorded) -> tuple[int, threading.Event]:
        with self._lock:
            self.requests.append(record)
            count = self._in_flight.get(self._generation, 0) + 1
            self._in_flight[self._generation] = count
            self.max_in_flight = max(self.max_in_flight, count)
            return self._generation, self._cancel

    def _leave(self, generation: int) -> None:
        with self._lock:
            self._in_flight[generation] -= 1


def _completion(model: str, reply: Reply) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
    }
    if reply.tool_calls:
        body["choices"][0]["message"]["tool_calls"] = [
            {"id": f"call_{index}", "type": "function",
             "function": {"name": name, "arguments": arguments}}
            for index, (name, arguments) in enumerate(reply.tool_calls)
        ]
        body["choices"][0]["finish_reason"] = "tool_calls"
    if reply.prompt_tokens is not None and reply.completion_tokens is not None:
        body["usage"] = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }
    return body


def _handler_for(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body leave in one segment: keep-alive plus Nagle plus
        # delayed ACKs would otherwise add ~40 ms to every call.
        disable_nagle_algorithm = True
        wbufsize = -1

        def log_message(self, format: str, *args: object) -> None:
            del format, args

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            generation, cancel = server._enter(Recorded(self.path, dict(self.headers), body))
            model = str(body.get("model", ""))
            behaviour = server._next(model)
            if isinstance(behaviour, Echo):
                behaviour = Reply("".join(f"{name}: {value}\n"
                                          for name, value in self.headers.items()))
            try:
                self._behave(behaviour, model, cancel)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)
            finally:
                server._leave(generation)

        def _behave(self, behaviour: Behaviour, model: str, cancel: threading.Event) -> None:
            if isinstance(behaviour, Delay):
                if cancel.wait(behaviour.seconds) or server._stopping.is_set():
                    self.close_connection = True
                    return
                behaviour = behaviour.then
            elif isinstance(behaviour, Held):
                behaviour.release.wait(behaviour.seconds)
                if server._stopping.is_set():
                    self.close_connection = True
                    return
                behaviour = behaviour.then
            if isinstance(behaviour, Reply):
                self._send(200, json.dumps(_completion(model, behaviour)).encode(), {})
            elif isinstance(behaviour, Status):
                error = {"error": {"message": behaviour.message, "type": "fake", "code": None}}
                self._send(behaviour.code, json.dumps(error).encode(), behaviour.headers)
            elif isinstance(behaviour, Raw):
                self._send(behaviour.code, behaviour.body, {})

        def _send(self, code: int, data: bytes, headers: dict[str, str]) -> None:
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
