"""A `python:` slot's function, called off the event loop.

A plain function runs in a thread of its own, so the loop stays free while it works:
`--timeout` and Ctrl-C stop the run at once (the call in flight is recorded as
cancelled) instead of after every call of a loop of slow functions. Such functions run
one at a time in the process, as they did on the loop's own thread, so a function that
is not thread-safe is still never entered twice at once. The thread is a daemon: a
function that never returns does not keep a stopped run's process alive. An `async def`
function runs on the loop, as before.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any

_ONE_AT_A_TIME = threading.Lock()


async def call_function(function: Callable[..., Any], arguments: Mapping[str, Any]) -> Any:
    """`function(**arguments)`, awaited when it gives an awaitable."""
    if inspect.iscoroutinefunction(function):
        return await function(**arguments)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(outcome: Any, error: BaseException | None) -> None:
        if done.cancelled():  # the run stopped waiting (a timeout, Ctrl-C)
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(outcome)

    def work() -> None:
        outcome: Any = None
        failure: BaseException | None = None
        try:
            with _ONE_AT_A_TIME:
                outcome = function(**arguments)
        except BaseException as error:  # a user's function may raise anything: handed over
            failure = error
        try:
            loop.call_soon_threadsafe(settle, outcome, failure)
        except RuntimeError:  # the loop is closed: the run is over
            pass

    threading.Thread(target=work, name="prose python slot", daemon=True).start()
    result = await done
    if inspect.isawaitable(result):
        result = await result
    return result
