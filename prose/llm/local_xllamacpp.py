"""The xllamacpp backend of the local model (the `local` extra, the default).

xllamacpp embeds llama.cpp's own server code and ships prebuilt manylinux
wheels on PyPI: installing it compiles nothing. A request is an OpenAI-style
chat completion handled in process (no port is opened); a JSON schema becomes
an llguidance grammar (built into the wheel), so the reply is valid JSON for
that schema. Replies are
streamed to a callback so that a cancelled call stops at the next token.
Imported only by `local_engine._load` when this backend is chosen.
"""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prose.llm.errors import BadRequestError, ContextWindowError
from prose.llm.local_engine import Generation, GenerationRequest

_QUIET = -1  # llama.cpp's log verbosity: nothing on stderr
# llguidance's options (the `x-guidance` key of a schema): compact JSON, so that no
# token goes to whitespace and the reply closes within its bounds (`local_schema`).
COMPACT_JSON = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
# llama.cpp's DRY sampler penalises repeating any sequence already in the context,
# the prompt included: a 135M model otherwise copies the argument it is asked to
# answer word for word. (A request's own sampling parameters come on top.)
DRY_SAMPLING: dict[str, Any] = {
    "dry_multiplier": 0.8,
    "dry_base": 1.75,
    "dry_allowed_length": 2,
    "dry_penalty_last_n": 4096,
}


class _Reply:
    """What the streamed chunks of one reply add up to."""

    def __init__(self, cancel: threading.Event | None) -> None:
        self.cancel = cancel
        self.parts: list[str] = []
        self.finish_reason = ""
        self.usage: Mapping[str, Any] = {}
        self.error: Any = None
        self.cancelled = False

    def __call__(self, chunk: Any) -> bool:
        """Take one chunk; True tells the server to stop generating."""
        if isinstance(chunk, Mapping):
            if chunk.get("error") is not None:
                self.error = chunk["error"]
            for choice in chunk.get("choices") or []:
                content = (choice.get("delta") or {}).get("content")
                if content:
                    self.parts.append(str(content))
                if choice.get("finish_reason"):
                    self.finish_reason = str(choice["finish_reason"])
            if chunk.get("usage"):
                self.usage = chunk["usage"]
        if self.cancel is not None and self.cancel.is_set():
            self.cancelled = True
            return True
        return False


def request_body(request: GenerationRequest) -> dict[str, Any]:
    """The server's chat-completion request for one call."""
    body: dict[str, Any] = {**DRY_SAMPLING, **request.sampling}
    body.update(
        messages=request.messages,
        max_tokens=request.max_tokens,
        stream=True,
        stream_options={"include_usage": True},
    )
    if request.response_format is not None:
        schema = request.response_format.get("schema")
        if isinstance(schema, Mapping):
            body["grammar"] = llguidance_grammar(schema)
        else:
            body["response_format"] = {"type": "json_object"}
    return body


def llguidance_grammar(schema: Mapping[str, Any]) -> str:
    """The llguidance grammar of JSON for `schema`, compact (`COMPACT_JSON`).

    (The server's own `response_format` path makes a GBNF grammar that lets a
    small model spend its tokens on whitespace; llguidance's `%json` honours
    `x-guidance`.)
    """
    return "%llguidance {}\nstart: %json " + json.dumps({**schema, "x-guidance": COMPACT_JSON})


def _raise_for(error: Any) -> None:
    message = str(error.get("message") if isinstance(error, Mapping) else error)
    kind = str(error.get("type") if isinstance(error, Mapping) else "")
    if kind == "exceed_context_size_error" or "context size" in message:
        raise ContextWindowError(message)
    raise BadRequestError(f"llama.cpp refused the request: {message}")


class XLlamaBackend:
    """One GGUF file served by an in-process llama.cpp server."""

    def __init__(self, server: Any) -> None:
        self._server = server
        self._served = False

    def generate(self, request: GenerationRequest) -> Generation:
        body = request_body(request)
        reply = _Reply(request.cancel)
        self._served = True
        try:
            result = self._server.handle_chat_completions(body, reply)
        except ValueError as error:  # e.g. a schema llama.cpp cannot turn into a grammar
            raise BadRequestError(f"llama.cpp refused the request: {error}") from None
        if isinstance(result, Mapping) and result.get("error") is not None:
            _raise_for(result["error"])
        if reply.error is not None:
            _raise_for(reply.error)
        usage = reply.usage
        finish = "cancelled" if reply.cancelled else (reply.finish_reason or "stop")
        return Generation(
            text="".join(reply.parts),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or len(reply.parts)),
            finish_reason=finish,
        )

    def close(self) -> None:
        """Free the server. One that has served no request is given a 1-token one first:
        freed before its task loop has started, xllamacpp's server waits for that loop
        forever (measured: 2 of 3 processes that loaded the model and exited at once
        hung at exit; a cancelled first call leaves a loaded, unused model)."""
        server, self._server = self._server, None
        if server is not None and not self._served:
            try:
                server.handle_completions({"prompt": " ", "max_tokens": 1})
            except Exception:  # freeing must not fail; the request only waits for the loop
                pass
        del server


def load(path: Path, *, threads: int, context: int) -> XLlamaBackend:
    """Start an in-process llama.cpp server on `path` (one slot, no HTTP)."""
    xllamacpp: Any = importlib.import_module("xllamacpp")
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = context
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = _QUIET
    params.warmup = False
    try:
        server = xllamacpp.Server(params)
    except (RuntimeError, ValueError) as error:
        raise BadRequestError(f"llama.cpp cannot load {path}: {error}") from None
    return XLlamaBackend(server)
