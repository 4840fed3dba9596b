"""The llama-cpp-python backend of the local model (the `local-llamacpp` extra).

llama-cpp-python has no wheel on PyPI for Linux: pip compiles llama.cpp from
source (a C compiler and cmake, minutes of CPU). It is kept for people who
already have it; `xllamacpp` (`local_xllamacpp.py`) is the default.
Imported only by `local_engine._load` when this backend is chosen.
"""

from __future__ import annotations

import importlib
import math
import threading
from pathlib import Path
from typing import Any

from prose.llm.errors import BadRequestError, ContextWindowError
from prose.llm.local_engine import Generation, GenerationRequest


class _EndWhenSet:
    """A llama.cpp logits processor that ends the reply once `event` is set.

    It leaves only the end-of-sequence token possible. (An exception raised
    here would be swallowed by the ctypes callback; it is not used with a
    grammar, which may not allow the reply to end there.)
    """

    def __init__(self, event: threading.Event, end_token: int) -> None:
        self.event = event
        self.end_token = end_token

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.event.is_set():
            scores.fill(-math.inf)
            scores[self.end_token] = 0.0
        return scores


class LlamaCppBackend:
    """One GGUF file loaded by llama-cpp-python."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def generate(self, request: GenerationRequest) -> Generation:
        arguments: dict[str, Any] = dict(request.sampling)
        arguments.update(messages=request.messages, max_tokens=request.max_tokens, stream=False)
        if request.response_format is not None:
            arguments["response_format"] = dict(request.response_format)
        elif request.cancel is not None:
            # A structured reply is short (see `local.llama_response_format`) and runs to its end.
            arguments["logits_processor"] = [_EndWhenSet(request.cancel, self._model.token_eos())]
        try:
            result = self._model.create_chat_completion(**arguments)
        except ValueError as error:
            if "context window" in str(error):
                raise ContextWindowError(str(error)) from None
            raise BadRequestError(f"llama.cpp refused the request: {error}") from None
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return Generation(
            text=choice["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=str(choice.get("finish_reason") or "stop"),
        )

    def close(self) -> None:
        close = getattr(self._model, "close", None)
        if callable(close):
            close()


def load(path: Path, *, threads: int, context: int) -> LlamaCppBackend:
    """Load `path` with llama-cpp-python."""
    llama_cpp: Any = importlib.import_module("llama_cpp")
    try:
        model = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=context,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
    except ValueError as error:
        raise BadRequestError(f"llama.cpp cannot load {path}: {error}") from None
    return LlamaCppBackend(model)
