"""The PDL side of bench/pdl_compare.py: PDL programs run in a worker process of their own.

PDL changes process-wide state when it is imported and on every model call:
`import pdl.pdl` sets `DISABLE_AIOHTTP_TRANSPORT=True` in the environment (so
LiteLLM builds httpx clients instead of aiohttp ones), and each model block
sets `litellm.input_callback`. Run in the benchmark's own process, both would
change how prose, LangGraph and the bare Router call LiteLLM. So PDL runs in
one long-lived worker (this file, started once per benchmark run), exactly as
PDL configures itself; the benchmark sends it one job per timed run, and the
worker measures the run itself (wall, `time.process_time()` of its process,
garbage-collector time, optionally the tracemalloc peak) and reports back.

Each job runs one `bench/pdl/*.pdl` file with `pdl.pdl.exec_file` (parse,
validate, run: as `pdl prog.pdl` does), the run's variables passed as its
initial scope. All jobs share one PDL event loop thread (PDL's default starts
a new, never-stopped thread per `exec_file`).

The worker also runs PDL's floor (program `FLOOR`): the same calls made with
`litellm.acompletion` and the same parameters as PDL's model blocks, on the
same event-loop thread, with no PDL program: stages run one after the other,
the calls of a stage at most `cap` at a time (`asyncio.Semaphore`) or one
after the other. PDL's figures over this floor are PDL's own cost.

Protocol: one JSON job per line on stdin, one JSON reply per line on stdout.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PROGRAMS = Path(__file__).resolve().parent / "pdl"
MISSING = (
    "PDL is not installed. It is a bench-only dependency: "
    "pip install -e '.[bench]' (or pip install prompt-declaration-language), then run again."
)
FLOOR = "litellm.acompletion"
# LiteLLM's import downloads its price list unless told not to (as prose imports it).
OFFLINE = {"LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "true"}


def pdl_version() -> str | None:
    """The installed PDL's version, or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prompt-declaration-language")
    except PackageNotFoundError:
        return None


class PdlWorker:
    """The worker process; a context manager. `run(job)` blocks until the reply."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> PdlWorker:
        self._process = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **OFFLINE},
        )
        return self

    def __exit__(self, *exc: object) -> None:
        process = self._process
        if process is None:
            return
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def run(
        self,
        program: str,
        scope: dict[str, Any],
        *,
        memory: bool = False,
        record: bool = False,
    ) -> dict[str, Any]:
        """Run `bench/pdl/<program>.pdl` once with `scope`. `memory`: trace the peak
        (slower, so not on timed runs); `record`: return every call's messages and
        the stub's prompt tokens, in call order."""
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        job = {"program": program, "scope": scope, "memory": memory, "record": record}
        process.stdin.write(json.dumps(job) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        if not line.strip():
            raise RuntimeError(f"the PDL worker died running {program}.pdl")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"PDL failed running {program}.pdl: {reply['error']}")
        return reply


# The worker process ----------------------------------------------------------------------


class _Recorder:
    """Wraps PDL's LiteLLM call: counts the calls; when on, keeps each one's messages and
    the prompt tokens the stub reported, in call order."""

    def __init__(self) -> None:
        self.messages: list[list[dict[str, Any]]] = []
        self.prompt_tokens: list[int] = []
        self.calls = 0
        self.on = False

    def install(self) -> None:
        from pdl.pdl_llms import LitellmModel

        original = LitellmModel.async_generate_text

        async def recorded(block: Any, model_id: str, messages: Any, parameters: Any) -> Any:
            self.calls += 1
            if not self.on:
                return await original(block, model_id, messages, parameters)
            sent = [dict(m) for m in messages]
            index = len(self.messages)
            self.messages.append(sent)
            self.prompt_tokens.append(0)
            reply = await original(block, model_id, messages, parameters)
            self.prompt_tokens[index] = int(reply[1]["usage"]["prompt_tokens"])
            return reply

        LitellmModel.async_generate_text = staticmethod(recorded)  # type: ignore[method-assign]


async def _floor(scope: dict[str, Any]) -> int:
    """`scope["stages"]` (lists of message lists) through `litellm.acompletion`, PDL's call."""
    import asyncio

    from litellm import acompletion

    parameters = scope["llm"]
    calls = 0
    for stage in scope["stages"]:
        cap = scope.get("cap")
        semaphore = asyncio.Semaphore(cap or 1)

        async def one(messages: list[dict[str, str]], semaphore: Any = semaphore) -> None:
            async with semaphore:
                await acompletion(model="openai/stub", messages=messages, **parameters)

        if cap:
            await asyncio.gather(*(one(messages) for messages in stage))
        else:
            for messages in stage:
                await one(messages)
        calls += len(stage)
    return calls


def _serve() -> None:
    import asyncio

    from bench.runtime import CollectorClock

    try:
        from pdl.pdl import exec_file
        from pdl.pdl_scheduler import create_event_loop_thread
    except ImportError:
        print(json.dumps({"error": MISSING}), flush=True)
        return
    # Replies go to the real stdout; anything else printed (LiteLLM prints its
    # "Give Feedback" banner on errors) goes to stderr, off the protocol.
    replies, sys.stdout = sys.stdout, sys.stderr
    loop = create_event_loop_thread()
    recorder = _Recorder()
    recorder.install()
    for line in sys.stdin:
        job = json.loads(line)
        program = PROGRAMS / f"{job['program']}.pdl"
        floor = job["program"] == FLOOR
        recorder.messages, recorder.prompt_tokens, recorder.calls = [], [], 0
        recorder.on = bool(job["record"])
        gc.collect()
        if job["memory"]:
            tracemalloc.start()
        try:
            with CollectorClock() as collector:
                wall, cpu = time.perf_counter(), time.process_time()
                if floor:
                    future = asyncio.run_coroutine_threadsafe(_floor(job["scope"]), loop)
                    recorder.calls = future.result()
                    out: dict[str, Any] = {"result": None}
                else:
                    out = exec_file(program, {"event_loop": loop}, scope=job["scope"], output="all")
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        except Exception as error:  # reported to the benchmark, which stops
            print(
                json.dumps({"error": f"{type(error).__name__}: {error}"}), file=replies, flush=True
            )
            continue
        finally:
            peak = tracemalloc.get_traced_memory()[1] if job["memory"] else 0
            tracemalloc.stop()
        reply = {
            "wall_s": wall,
            "cpu_s": cpu,
            "gc_s": collector.seconds,
            "calls": recorder.calls,
            "result": out["result"],
            "peak_bytes": peak,
            "messages": recorder.messages,
            "prompt_tokens": recorder.prompt_tokens,
        }
        print(json.dumps(reply, default=str), file=replies, flush=True)


if __name__ == "__main__":
    _serve()
