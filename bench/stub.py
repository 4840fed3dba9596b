"""A fast loopback OpenAI-compatible chat server for the benchmarks, in its own process.

`tests/llm_server.py` runs a thread per request inside the measured process,
so its work would be counted as the client's CPU time and would compete with
it for the GIL. This stub is one asyncio loop in a child process: the
benchmark's `time.process_time()` then measures the client alone.

The delay and the reply length are chosen by the path of the `api_base`, so
one server serves every deployment of a benchmark (`tools=K`: a request that offers
tools and holds fewer than K tool results is answered with a call of the first tool
offered, arguments `{"term": "bench"}`; an agent then takes K tool turns and answers):

    with StubServer() as stub:
        api_base = stub.base_url(latency_ms=50, words=80)
        # -> http://127.0.0.1:PORT/latency=50/words=80/v1

Usage counts whitespace-separated words, like the scripted model:
`prompt_tokens` over every message's content, `completion_tokens` over the
reply. `GET /stats` returns the requests served and the most in flight at
once since the last `POST /reset`.

Run alone: python bench/stub.py   (prints the port, serves until stdin closes)
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

_SETTING = re.compile(r"/(latency|words|tools)=(\d+(?:\.\d+)?)")
_WORDS = (
    "the proposal holds because each service keeps its own state and the team "
    "can change one part without breaking the rest while reviews stay small"
).split()


class _Counters:
    def __init__(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0


def _reply_text(words: int, serial: int) -> str:
    text = [_WORDS[(serial + i) % len(_WORDS)] for i in range(words)]
    return " ".join(text) if text else "ok"


def _completion(body: dict[str, Any], words: int, serial: int, tools: int = 0) -> bytes:
    content = _reply_text(words, serial)
    messages = body.get("messages") or []
    message: dict[str, Any] = {"role": "assistant", "content": content}
    finish = "stop"
    offered = body.get("tools") or []
    if offered and sum(1 for m in messages if m.get("role") == "tool") < tools:
        name = offered[0]["function"]["name"]
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{serial}", "type": "function",
             "function": {"name": name, "arguments": json.dumps({"term": "bench"})}}]}
        finish, content = "tool_calls", ""
    prompt = sum(
        len(str(message.get("content") or "").split()) for message in body.get("messages") or []
    )
    completion = len(content.split())
    return json.dumps(
        {
            "id": f"chatcmpl-bench-{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
    ).encode()


async def _handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, counters: _Counters
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            method, path, _ = request_line.split(" ", 2)
            length = 0
            for line in header_lines:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            raw = await reader.readexactly(length) if length else b""
            if method == "GET" and path.endswith("/stats"):
                data = json.dumps(
                    {"requests": counters.requests, "max_in_flight": counters.max_in_flight}
                ).encode()
            elif path.endswith("/reset"):
                counters.requests = counters.max_in_flight = 0
                data = b"{}"
            else:
                counters.requests += 1
                serial = counters.requests
                counters.in_flight += 1
                counters.max_in_flight = max(counters.max_in_flight, counters.in_flight)
                settings = {key: float(value) for key, value in _SETTING.findall(path)}
                try:
                    if settings.get("latency"):
                        await asyncio.sleep(settings["latency"] / 1000)
                    body = json.loads(raw or b"{}")
                    data = _completion(body, int(settings.get("words", 5)), serial,
                                       int(settings.get("tools", 0)))
                finally:
                    counters.in_flight -= 1
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                + f"content-length: {len(data)}\r\n\r\n".encode()
                + data
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
        pass  # the client closed the connection, or the server is stopping
    finally:
        writer.close()


async def _serve() -> None:
    counters = _Counters()
    server = await asyncio.start_server(
        lambda r, w: _handle(r, w, counters), "127.0.0.1", 0, backlog=1024
    )
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    loop = asyncio.get_running_loop()
    # Serve until the parent closes our stdin (or dies).
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


class StubServer:
    """The stub in a child process; a context manager that starts and stops it."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> StubServer:
        self._process = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        self.port = int(self._process.stdout.readline())
        return self

    def __exit__(self, *exc: object) -> None:
        process = self._process
        if process is None:
            return
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def base_url(self, latency_ms: float = 0, words: int = 5, tools: int = 0) -> str:
        extra = f"/tools={tools}" if tools else ""
        return f"http://127.0.0.1:{self.port}/latency={latency_ms:g}/words={words}{extra}/v1"

    def cpu_seconds(self) -> float:
        """The stub process's CPU time so far (user and system, from /proc): a bench that
        shares the machine with the stub reports how much of it the stub took."""
        assert self._process is not None
        fields = Path(f"/proc/{self._process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stats(self) -> dict[str, int]:
        """Requests served and the most in flight at once since the last reset."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=5) as reply:
            stats: dict[str, int] = json.loads(reply.read())
            return stats

    def reset(self) -> None:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/reset", method="POST")
        with urllib.request.urlopen(request, timeout=5):
            pass


if __name__ == "__main__":
    asyncio.run(_serve())
