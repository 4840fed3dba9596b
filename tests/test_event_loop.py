"""prose's event loop runs LiteLLM's request preparation on the loop's thread (prose.llm.event_loop).

The real Router and the openai SDK send to the loopback server of `llm_server.py`;
the executor's counters say where LiteLLM's `completion` ran. If a LiteLLM upgrade
changes what `acompletion` gives the executor, these tests fail instead of the
thread hand-off coming back silently.
"""

from __future__ import annotations

import asyncio
import gc
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import FakeLLMServer, Reply

from prose.llm import ChatRequest, LLMConfig, Message, RouterClient, collector, event_loop
from prose.llm.event_loop import PrepInline, is_litellm_preparation

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

ROOT = Path(__file__).resolve().parent.parent
HELLO = [Message.user("Say hello.")]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


def client_for(server: FakeLLMServer) -> RouterClient:
    return RouterClient(LLMConfig(model_list=[{
        "model_name": "primary",
        "litellm_params": {"model": "openai/fake", "api_base": server.base_url,
                           "api_key": "sk-test-0123456789"},
    }], retries=0))


def test_router_calls_prepare_on_the_loop_thread(server: FakeLLMServer) -> None:
    server.reset()
    server.enqueue("fake", *(Reply(f"Hello {n}.") for n in range(3)))
    client = client_for(server)

    async def three_calls() -> tuple[PrepInline | None, list[str]]:
        executor = event_loop.install()
        replies = [await client.complete(ChatRequest("primary", HELLO)) for _ in range(3)]
        return executor, [reply.text for reply in replies]

    executor, texts = asyncio.run(three_calls())
    assert sorted(texts) == ["Hello 0.", "Hello 1.", "Hello 2."]
    assert executor is not None
    assert executor.inline == 3  # every call's preparation, none sent to a thread for it
    assert executor.threaded <= 1  # the first connection's DNS lookup (then cached)


def test_other_work_still_goes_to_a_thread() -> None:
    async def lookups() -> tuple[PrepInline | None, int, int]:
        executor = event_loop.install()
        loop = asyncio.get_running_loop()
        await loop.getaddrinfo("127.0.0.1", 80, type=socket.SOCK_STREAM)
        worker = await loop.run_in_executor(None, threading.get_ident)
        return executor, worker, threading.get_ident()

    executor, worker, own = asyncio.run(lookups())
    assert executor is not None
    assert (executor.inline, executor.threaded) == (0, 2)
    assert worker != own


def test_an_error_in_the_preparation_reaches_the_caller(server: FakeLLMServer) -> None:
    client = client_for(server)

    async def unknown_model() -> tuple[PrepInline | None, str]:
        executor = event_loop.install()
        try:
            await client.complete(ChatRequest("openai/", HELLO))
        except Exception as error:  # what kind does not matter here: that it arrives
            return executor, type(error).__name__
        return executor, "no error"

    _, kind = asyncio.run(unknown_model())
    assert kind != "no error"


def test_only_litellm_completion_is_recognised() -> None:
    import contextvars
    from functools import partial

    def completion(**kwargs: object) -> None:  # same name, not LiteLLM's
        return None

    context = contextvars.copy_context()
    assert not is_litellm_preparation(partial(context.run, partial(completion, model="m")))
    assert not is_litellm_preparation(threading.get_ident)
    completion.__module__ = "litellm.main"
    assert is_litellm_preparation(partial(context.run, partial(completion, model="m")))


def test_the_environment_switch_gives_litellm_its_thread_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROSE_LITELLM_THREAD", "1")

    async def installed() -> PrepInline | None:
        return event_loop.install()

    assert asyncio.run(installed()) is None
    monkeypatch.setenv("PROSE_LITELLM_THREAD", "0")
    assert isinstance(asyncio.run(installed()), PrepInline)


def test_prose_run_prepares_every_call_on_the_loop_thread(tmp_path: Path) -> None:
    """The CLI's run starts no executor thread for its calls (asyncio's would be `asyncio_N`);
    the one thread it may start syncs the closed trace to disk (`Trace.aclose`)."""
    code = (
        "import sys, threading, traceback\n"
        "started = []\n"
        "start = threading.Thread.start\n"
        "def spy(self):\n"
        "    if not any(f.name == 'aclose' for f in traceback.extract_stack()):\n"
        "        started.append(self.name)\n"
        "    start(self)\n"
        "threading.Thread.start = spy\n"
        "from prose.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('EXECUTOR THREADS', [n for n in started\n"
        "          if n.startswith(('asyncio_', 'prose-executor'))], file=sys.stderr)\n")
    command = [sys.executable, "-c", code, "run", str(ROOT / "examples" / "dialectic.yaml"),
               "--script", str(ROOT / "examples" / "dialectic.script.yaml"),
               "--trace", str(tmp_path / "t.jsonl"), "-q"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "EXECUTOR THREADS []" in done.stderr


class _Counted:
    """A result that counts how often it is formatted."""

    reprs = 0

    def __repr__(self) -> str:
        type(self).reprs += 1
        return "_Counted()"


def test_run_hands_back_the_value_without_formatting_it() -> None:
    async def main() -> _Counted:
        await asyncio.sleep(0)
        return _Counted()

    # As in a terminal: asyncio.run formats the result only when it installs its own
    # Ctrl-C handler, which it does not where SIGINT is ignored (a background job's).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _without_formatting(main)
    finally:
        signal.signal(signal.SIGINT, previous)


def _without_formatting(main: Callable[[], Coroutine[Any, Any, _Counted]]) -> None:
    value = event_loop.run(main())
    assert isinstance(value, _Counted)
    # asyncio.run itself formats its main task's result on the way out (a run's whole
    # RunResult); prose's runner does not.
    assert _Counted.reprs == 0
    asyncio.run(main())
    assert _Counted.reprs > 0  # the failure mode this guards against is real


def test_run_raises_what_the_coroutine_raises() -> None:
    async def main() -> None:
        raise KeyError("lost")

    with pytest.raises(KeyError, match="lost"):
        event_loop.run(main())


def test_run_sets_the_collector_thresholds_and_restores_them() -> None:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        async def inside() -> tuple[int, ...]:
            return tuple(gc.get_threshold())

        assert event_loop.run(inside()) == collector.THRESHOLDS
        assert gc.get_threshold() == (700, 10, 10)

        async def fails() -> None:
            assert gc.get_threshold() == collector.THRESHOLDS
            raise ValueError("inside the run")

        with pytest.raises(ValueError, match="inside the run"):
            event_loop.run(fails())
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_the_thresholds_spare_the_collector_on_many_short_lived_objects() -> None:
    """What the thresholds are for: allocations that die young set off far fewer
    collections (counted by gc.callbacks, not timed)."""
    collections = 0

    def count(phase: str, info: dict[str, int]) -> None:
        nonlocal collections
        collections += phase == "start"

    def churn() -> None:
        for _ in range(200):
            kept = [{"n": [i]} for i in range(500)]  # alive together, freed together
            del kept

    before = gc.get_threshold()
    gc.callbacks.append(count)
    try:
        gc.set_threshold(700, 10, 10)  # Python's defaults
        churn()
        default = collections
        collections = 0
        with collector.tuned():
            churn()
        tuned = collections
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*before)
    assert default > 10 * max(tuned, 1)
