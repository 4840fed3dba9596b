"""The verification-command runner: plan-conformance's `verifier`.

Bind it in an instance file, next to the commands it may run:

    with:
      verifier: { python: "prose.tools.verification:run_checks" }
    inputs:
      verification_commands: ["pytest -q", "ruff check ."]

The commands are a trust boundary. They run with a shell on the reviewer's
machine, so they must come from whoever wrote the instance file, never from
the plan, the diff, prompt text or a model's output (all of which can carry
text from the repository under review). This function runs exactly the
commands in its one input and nothing else: it never reads commands from
anywhere else, never invents or detects any, and executes nothing at all when
the declaration is not a list of command strings. The pattern's invariants
(`verifier` sees only `verification_commands`, and never sees the extractor,
even indirectly) keep model output away from that input.

The commands run one after another, in the current directory, under one total
deadline (`DEFAULT_DEADLINE` seconds, or `$PROSE_VERIFICATION_DEADLINE`). A
command still running at the deadline is killed (TIMEOUT); a command the
deadline leaves no time for is not started (SKIPPED). Each run is recorded
with its command, status, exit code, duration and the tail of its output
(stdout and stderr together).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prose.tools.markers import fault, kind_of

DEFAULT_DEADLINE = 3300.0
DEADLINE_ENV = "PROSE_VERIFICATION_DEADLINE"
TAIL_CHARS = 2000
NONE_DECLARED = (
    "none declared: no verification commands were declared, so no claim that a "
    "command passes can be checked against a run"
)
# After a command exits, how long its output may take to reach end of file.
_DRAIN_GRACE = 2.0
_POLL = 0.02


class DeclarationError(ValueError):
    """`verification_commands` is not a list of command strings."""


@dataclass(frozen=True, slots=True)
class CommandRun:
    """One declared command and what happened when it ran (or why it did not)."""

    command: str
    status: str  # PASS, FAIL, TIMEOUT, SKIPPED or ERROR
    exit_code: int | None
    duration_seconds: float
    output_tail: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "status": self.status,
            "exit_code": self.exit_code,
            "duration_seconds": self.duration_seconds,
            "output_tail": self.output_tail,
        }


def parse_declaration(declared: object) -> list[str]:
    """The declared commands, in order. Accepts a list of non-blank strings, or
    that list as JSON text (agent variables often arrive as strings); null means
    none declared. Anything else raises DeclarationError."""
    if declared is None:
        return []
    value = declared
    if isinstance(declared, str):
        try:
            value = json.loads(declared)
        except json.JSONDecodeError as error:
            raise DeclarationError(f"not a JSON array of strings ({error.msg})") from None
    if not isinstance(value, list):
        raise DeclarationError(f"expected a list of command strings, got {kind_of(value)}")
    commands: list[str] = []
    for position, item in enumerate(value):
        if not isinstance(item, str):
            raise DeclarationError(f"item {position} is {kind_of(item)}, not a command string")
        if not item.strip():
            raise DeclarationError(f"item {position} is an empty command")
        commands.append(item)
    return commands


async def run_checks(verification_commands: object) -> dict[str, Any]:
    """Run the declared commands once, in order; the record for the checkers.

    Returns `{runs, note}`: one entry per declared command (`command`, `status`,
    `exit_code`, `duration_seconds`, `output_tail`) and a note. With no commands
    declared the note says so and nothing runs. With an invalid declaration
    nothing runs and the note starts with `PIPELINE-FAULT:`, which the verdict
    turns into DIVERGES.
    """
    return await run_declared(verification_commands, deadline=deadline_from_env())


def deadline_from_env() -> float:
    """`$PROSE_VERIFICATION_DEADLINE` seconds, else `DEFAULT_DEADLINE`."""
    raw = os.environ.get(DEADLINE_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_DEADLINE
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${DEADLINE_ENV} must be a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ValueError(f"${DEADLINE_ENV} must be more than 0 seconds, got {raw!r}")
    return value


async def run_declared(
    declared: object,
    *,
    deadline: float = DEFAULT_DEADLINE,
    cwd: str | Path | None = None,
    tail_chars: int = TAIL_CHARS,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """`run_checks` with the deadline, directory and tail length as arguments."""
    try:
        commands = parse_declaration(declared)
    except DeclarationError as error:
        return {
            "runs": [],
            "note": fault(f"verification_commands declaration invalid: {error}; nothing was run"),
        }
    if not commands:
        return {"runs": [], "note": NONE_DECLARED}
    runs: list[CommandRun] = []
    ends_at = clock() + deadline
    for command in commands:
        left = ends_at - clock()
        if left <= 0:
            runs.append(CommandRun(command, "SKIPPED", None, 0.0, "not started: the deadline had passed"))
            continue
        runs.append(await _run_one(command, left, cwd, tail_chars, clock))
    return {"runs": [run.as_dict() for run in runs], "note": _summary(runs)}


async def _run_one(
    command: str, timeout: float, cwd: str | Path | None, tail_chars: int,
    clock: Callable[[], float],
) -> CommandRun:
    started = clock()
    try:
        process = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,  # its own process group, so a kill reaches its children
        )
    except OSError as error:
        return CommandRun(command, "ERROR", None, _since(started, clock), f"could not start: {error}")
    tail = _Tail(tail_chars)
    assert process.stdout is not None
    reader = asyncio.create_task(tail.drain(process.stdout))
    try:
        exited = await _exited(process, timeout)
    except asyncio.CancelledError:
        _kill_group(process)
        reader.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), timeout=_DRAIN_GRACE)  # reap it, close the pipes
        raise
    duration = _since(started, clock)
    # Nothing the command started outlives it: a leftover would also hold the pipe open.
    _kill_group(process)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(reader), timeout=_DRAIN_GRACE)
    reader.cancel()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), timeout=_DRAIN_GRACE)
    if not exited:
        output = tail.text()
        note = f"killed at the deadline after {duration:.1f}s"
        return CommandRun(command, "TIMEOUT", None, duration, f"{output}\n[{note}]".lstrip("\n"))
    code = process.returncode
    status = "PASS" if code == 0 else "FAIL"
    return CommandRun(command, status, code, duration, tail.text())


async def _exited(process: asyncio.subprocess.Process, timeout: float) -> bool:
    """Wait until the command itself exits (True) or `timeout` passes (False).

    Not `process.wait()`: that also waits until every copy of the output pipe
    is closed, which a background child of the command can hold open.
    """
    ends_at = time.monotonic() + timeout
    while process.returncode is None:
        left = ends_at - time.monotonic()
        if left <= 0:
            return False
        await asyncio.sleep(min(_POLL, left))
    return True


class _Tail:
    """The last `chars` characters of a stream, in bounded memory."""

    def __init__(self, chars: int) -> None:
        self._chars = max(chars, 0)
        self._limit = self._chars * 4 + 4  # UTF-8: at most 4 bytes a character
        self._data = bytearray()

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self._data += chunk
            if len(self._data) > self._limit:
                del self._data[: len(self._data) - self._limit]

    def text(self) -> str:
        decoded = self._data.decode("utf-8", errors="replace")
        return decoded[-self._chars :] if self._chars else ""


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        elif process.returncode is None:
            process.kill()


def _since(started: float, clock: Callable[[], float]) -> float:
    return round(max(clock() - started, 0.0), 3)


def _summary(runs: list[CommandRun]) -> str:
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.status] = counts.get(run.status, 0) + 1
    order = ("PASS", "FAIL", "TIMEOUT", "SKIPPED", "ERROR")
    parts = ", ".join(f"{counts[status]} {status}" for status in order if status in counts)
    return f"{len(runs)} declared command(s) run once, in order: {parts}"

