"""The event loop prose runs on: LiteLLM's request preparation stays on the loop's thread.

    result = event_loop.run(run_pattern(pattern, options))   # instead of asyncio.run

`litellm.acompletion` hands its synchronous part (building the provider
request: parameter mapping, model info, the client) to
`loop.run_in_executor(None, ...)`, then awaits the HTTP call on the loop. The
preparation does no I/O for the providers prose routes (OpenAI-compatible
servers, the scripted and embedded models), so the thread costs more than the
work: a hand-off to a pool thread and back per call (a self-pipe write and two
GIL switches), with every worker thread contending for the GIL with the loop
(bench/batch.py measures the difference: docs/benchmarks.md).

`PrepInline`, the loop's default executor, runs exactly that function, LiteLLM's
`completion`, in the calling thread; everything else given to the default
executor (DNS lookups by `loop.getaddrinfo`, any blocking helper) still goes to a
pool thread. A provider whose preparation blocks (a cloud credential refreshed
over the network) blocks the loop for that moment: a run that needs the thread
back sets `PROSE_LITELLM_THREAD=1`.

`install` sets it on a loop prose did not create (a Ray actor's). Nothing here
imports LiteLLM: the function is recognised by its module and name.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import os
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from functools import partial
from typing import Any, TypeVar, cast

from prose.llm import collector

T = TypeVar("T")

# LiteLLM's synchronous entry point that `acompletion` sends to the executor
# (its `@client` wrapper keeps the wrapped function's module and name).
_PREPARATION = ("litellm.main", "completion")


def is_litellm_preparation(fn: Callable[..., Any]) -> bool:
    """Whether `fn` is what `litellm.acompletion` gives the executor:
    `partial(context.run, partial(completion, **kwargs))`."""
    if isinstance(fn, partial) and isinstance(getattr(fn.func, "__self__", None),
                                              contextvars.Context) and len(fn.args) == 1:
        fn = fn.args[0]
    if not isinstance(fn, partial):
        return False
    target = fn.func
    return (getattr(target, "__module__", None), getattr(target, "__name__", None)) \
        == _PREPARATION


class PrepInline(concurrent.futures.ThreadPoolExecutor):
    """A default executor that runs LiteLLM's request preparation in the caller's thread.

    `inline` and `threaded` count what it did (the tests and the benchmark read them).
    """

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="prose-executor")
        self.inline = 0
        self.threaded = 0

    def submit(self, fn: Callable[..., T], /, *args: Any,
               **kwargs: Any) -> concurrent.futures.Future[T]:
        if args or kwargs or not is_litellm_preparation(fn):
            self.threaded += 1
            return super().submit(fn, *args, **kwargs)
        self.inline += 1
        return _settled(fn)


def _settled(fn: Callable[[], T]) -> concurrent.futures.Future[T]:
    """`fn()`'s outcome in a future that is already done.

    On a running loop it is a future of that loop: `run_in_executor` hands such a future
    back as it is (`asyncio.wrap_future`), where a `concurrent.futures.Future` is chained
    to a new one through `call_soon_threadsafe`, a write to the loop's self-pipe, a read
    and a turn of the loop for every call (about 50 µs of CPU against 2 µs, measured on
    the preparation's path alone). `run_in_executor` is the only caller of this
    executor's `submit` with LiteLLM's preparation.
    """
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    future: Any = loop.create_future() if loop is not None else concurrent.futures.Future()
    try:
        future.set_result(fn())
    except BaseException as error:  # the awaiting coroutine gets it, as from a thread
        future.set_exception(error)
    return cast("concurrent.futures.Future[T]", future)


def wanted() -> bool:
    """False when `PROSE_LITELLM_THREAD` asks for LiteLLM's own thread hand-off."""
    return os.environ.get("PROSE_LITELLM_THREAD", "").strip().lower() in ("", "0", "false", "no")


def install(loop: asyncio.AbstractEventLoop | None = None) -> PrepInline | None:
    """Make `PrepInline` the default executor of `loop` (the running one by default)."""
    if not wanted():
        return None
    executor = PrepInline()
    (loop or asyncio.get_running_loop()).set_default_executor(executor)
    return executor


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on a loop whose default executor is `PrepInline`, with the
    garbage collector's thresholds of `prose.llm.collector` while it runs.

    The main task itself returns None and `main`'s value is handed back beside it: on
    its way out, asyncio's runner asks `signal.getsignal` for its SIGINT handler, a
    partial holding the main task, and the failed enum lookup in there formats the
    task's repr, result included (a run's whole `RunResult`, every event: 0.15 s after
    a 1,000-call run).
    """
    kept: list[T] = []
    running: list[asyncio.Task[Any]] = []

    async def keep() -> None:
        task = asyncio.current_task()
        if task is not None:
            running.append(task)
        kept.append(await main)

    with collector.tuned(), asyncio.Runner() as runner, _ctrl_c_cancels(runner, running) as hit:
        install(runner.get_loop())
        try:
            runner.run(keep())
        except asyncio.CancelledError:
            if hit:  # our Ctrl-C: the run closed its trace; say so as Python would
                raise KeyboardInterrupt from None
            raise
    return kept[0]


@contextlib.contextmanager
def _ctrl_c_cancels(runner: asyncio.Runner,
                    running: list[asyncio.Task[Any]]) -> Iterator[list[int]]:
    """While the run's task runs, Ctrl-C (SIGINT) cancels it, once, and never raises
    `KeyboardInterrupt` in the middle of the loop: asyncio's own handler raises it on a
    second Ctrl-C wherever the main thread is, and pressed while an interrupted run wrote
    its `run_end` and seal, that left the trace unsealed (then refused by `--resume` as
    damaged). Later presses are counted and dropped, also once the run has returned (the
    process is ending: a press between here and the command's exit would print a
    traceback). Yields the presses seen. Only in the main thread, and only over Python's
    default handler."""
    hits: list[int] = []
    if threading.current_thread() is not threading.main_thread() or (
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield hits
        return
    loop = runner.get_loop()

    def cancel(number: int, frame: Any) -> None:
        hits.append(number)
        if len(hits) > 1:
            return
        if not running:  # the run has not started: nothing to close
            raise KeyboardInterrupt
        loop.call_soon_threadsafe(running[0].cancel)

    previous = signal.signal(signal.SIGINT, cancel)
    try:
        yield hits
    finally:
        if not hits:  # after a Ctrl-C the handler stays and drops presses: the caller ends
            signal.signal(signal.SIGINT, previous)
