"""llama.cpp behind a lock and one worker thread: the engine of the local provider.

Each GGUF file is loaded once per process (`engine_for`) and kept. Every
generation runs on one dedicated worker thread (`agenerate`), so
the event loop never blocks and calls are served one at a time, in order;
the lock also serialises synchronous callers on other threads. A cancelled
call (a timeout, a budget stop, a losing parallel branch) ends its reply at
the next token instead of holding the model until its cap.

`llama_cpp` is imported only when a model is loaded.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib
import importlib.util
import math
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prose.llm.errors import BadRequestError, ContextWindowError

# With 2 threads on a busy 2-core machine, llama.cpp's thread barrier spins and
# generation slows down tenfold; one thread is as fast on an idle machine for
# a 135M model (it is memory-bound). PROSE_LOCAL_THREADS overrides.
DEFAULT_THREADS = 1
DEFAULT_CONTEXT = 4096
# SmolLM2's recommended sampling; a fixed seed makes a run repeatable.
DEFAULT_SAMPLING: dict[str, Any] = {
    "temperature": 0.2,
    "top_p": 0.9,
    "repeat_penalty": 1.1,
    "seed": 0,
}
SAMPLING_PARAMS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "seed",
    "stop",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
)
INSTALL_HINT = "install the `local` extra: pip install 'prose-patterns[local]'"


@dataclass(frozen=True, slots=True)
class Generation:
    """What llama.cpp produced for one chat request."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


class Cancelled(Exception):
    """The call was cancelled before its generation started."""


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


class LocalEngine:
    """One loaded GGUF model. Use `engine_for(path)`; do not build one per call."""

    def __init__(self, path: Path, model: Any) -> None:
        self.path = path
        self._model = model
        self._lock = threading.Lock()

    def generate(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        response_format: Mapping[str, Any] | None = None,
        sampling: Mapping[str, Any] | None = None,
        cancel: threading.Event | None = None,
    ) -> Generation:
        """One chat completion with the model's own chat template (blocking)."""
        arguments: dict[str, Any] = {**DEFAULT_SAMPLING, **(sampling or {})}
        arguments.update(messages=[dict(m) for m in messages], max_tokens=max_tokens, stream=False)
        if response_format is not None:
            arguments["response_format"] = dict(response_format)
        if cancel is not None and response_format is None:
            # A structured reply is short (see `local.llama_response_format`) and runs to its end.
            arguments["logits_processor"] = [_EndWhenSet(cancel, self._model.token_eos())]
        with self._lock:
            if cancel is not None and cancel.is_set():
                raise Cancelled
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
            finish_reason=str(choice.get("finish_reason") or ""),
        )


# One worker thread and one engine per model file, for the whole process ---------------

_worker_pool: ThreadPoolExecutor | None = None
_engines: dict[Path, LocalEngine] = {}
_engines_lock = threading.Lock()


def _worker() -> ThreadPoolExecutor:
    global _worker_pool
    with _engines_lock:
        if _worker_pool is None:
            _worker_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="prose-local")
        return _worker_pool


def engine_for(path: Path) -> LocalEngine:
    """The engine for the GGUF file `path`, loading it on first use."""
    key = path.resolve()
    with _engines_lock:
        engine = _engines.get(key)
        if engine is None:
            if not _engines:
                atexit.register(close_all)
            engine = _engines[key] = LocalEngine(key, _load(key))
        return engine


def close_all() -> None:
    """Free every loaded model while the interpreter is still whole.

    Left to the garbage collector at shutdown, llama-cpp-python's `__del__`
    runs after its module globals are gone and prints an ignored-exception
    traceback on stderr.
    """
    with _engines_lock:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        close = getattr(engine._model, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # freeing memory at exit must never fail the run
                pass


async def agenerate(
    path: Path,
    messages: Sequence[Mapping[str, Any]],
    *,
    max_tokens: int,
    response_format: Mapping[str, Any] | None = None,
    sampling: Mapping[str, Any] | None = None,
) -> Generation:
    """Load (once) and generate on the worker thread; cancelling the caller stops it."""
    cancel = threading.Event()

    def work() -> Generation:
        return engine_for(path).generate(
            messages,
            max_tokens=max_tokens,
            response_format=response_format,
            sampling=sampling,
            cancel=cancel,
        )

    future = asyncio.get_running_loop().run_in_executor(_worker(), work)
    try:
        return await future
    except asyncio.CancelledError:
        cancel.set()
        raise


def loaded_models() -> list[Path]:
    """The model files loaded in this process."""
    with _engines_lock:
        return list(_engines)


def llama_cpp_installed() -> bool:
    """Whether llama-cpp-python can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("llama_cpp") is not None
    except (ImportError, ValueError):  # a broken install, or blocked in sys.modules
        return False


def _load(path: Path) -> Any:
    if not path.is_file():
        raise BadRequestError(f"no model file at {path}")
    try:
        llama_cpp = importlib.import_module("llama_cpp")
    except ImportError:
        raise BadRequestError(f"the local model needs llama-cpp-python: {INSTALL_HINT}") from None
    threads = _env_int("PROSE_LOCAL_THREADS", DEFAULT_THREADS)
    try:
        return llama_cpp.Llama(
            model_path=str(path),
            n_ctx=_env_int("PROSE_LOCAL_CONTEXT", DEFAULT_CONTEXT),
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
    except ValueError as error:
        raise BadRequestError(f"llama.cpp cannot load {path}: {error}") from None


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequestError(f"{name} must be a positive integer, not {raw!r}") from None
    if value < 1:
        raise BadRequestError(f"{name} must be a positive integer, not {raw!r}")
    return value
