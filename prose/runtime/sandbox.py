"""Running a declared command inside a call's workspace, in an OS sandbox when there is one.

With bubblewrap (`bwrap`) the command sees the system folders read-only (`/usr`, `/etc`
and the Python prefix the run uses, so `python -m pytest` works), the workspace as
`/workspace` (the only writable tree it sees; `/tmp` is an empty tmpfs), no network and
no other process (`--unshare-all`), and dies with the run (`--die-with-parent`): the
isolation mode `bwrap`. Without it the command runs with the workspace as its folder and
a bare environment, nothing more: the mode `context-only` (the trace says so; seed 002's
word), which `--require-sandbox` refuses. `PROSE_NO_SANDBOX=1` makes a machine with
bubblewrap behave as one without (tests, and hosts where user namespaces are off).

Each command has a timeout, an output cap and a disk quota: past the cap the command is
stopped and its output cut with a note; past the timeout it is killed and the result says
so. The quota bounds how many bytes the workspace may grow by while the command runs: no
file may grow past it (`RLIMIT_FSIZE`: the write fails, or the program dies of SIGXFSZ),
the workspace's size is watched and the command is stopped once it is over, and under
bubblewrap the private `/tmp` is a tmpfs of that size. Without bubblewrap a command can
still write outside the workspace (the mode says so); with it, nowhere else is writable.
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from prose.runtime.workspace import folder_size

Isolation = Literal["bwrap", "context-only"]
NO_SANDBOX_ENV = "PROSE_NO_SANDBOX"
SANDBOX_ROOT = "/workspace"
_SYSTEM = ("/usr", "/etc", "/opt")
_LINKS = ("/bin", "/lib", "/lib64", "/sbin")
QUOTA_POLL_S = 0.1  # how often a running command's workspace is measured
QUOTA_TICK_S = 0.01  # how often the filesystem's used bytes are read between two measures


@cache
def _bwrap_works(bwrap: str) -> bool:
    """Whether bubblewrap can make a namespace here (a container may forbid it)."""
    try:
        probe = subprocess.run([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/",
                                "/", "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def bwrap_path() -> str | None:
    """The bubblewrap program when it exists, works and is not switched off."""
    if os.environ.get(NO_SANDBOX_ENV, "").strip() not in ("", "0"):
        return None
    found = shutil.which("bwrap")
    return found if found is not None and _bwrap_works(found) else None


def _used_bytes(folder: Path) -> int:
    """The bytes in use on `folder`'s filesystem (whoever wrote them): a cheap sign that
    the workspace may have grown."""
    try:
        found = os.statvfs(folder)
    except OSError:
        return 0
    return (found.f_blocks - found.f_bfree) * found.f_frsize


def isolation_mode() -> Isolation:
    """How commands of this run are isolated: `bwrap`, else `context-only`."""
    return "bwrap" if bwrap_path() is not None else "context-only"


def _python_roots() -> list[str]:
    roots = {str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return sorted(root for root in roots if not root.startswith(_SYSTEM))


def search_path() -> str:
    """Where a command's program is looked up: the run's Python first, then the system."""
    return os.pathsep.join([str(Path(sys.prefix) / "bin"), str(Path(sys.base_prefix) / "bin"),
                            "/usr/local/bin", "/usr/bin", "/bin"])


def resolve_program(name: str) -> str | None:
    """The absolute path of a command's program (looked up on `search_path`)."""
    if os.path.isabs(name):
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name, path=search_path())


def _environment(home: str) -> dict[str, str]:
    return {"PATH": search_path(), "HOME": home, "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": "/tmp" if home == SANDBOX_ROOT else home}


def bwrap_argv(bwrap: str, workspace: Path, argv: list[str],
               tmp_bytes: int | None = None) -> list[str]:
    """The bubblewrap command line that runs `argv` in the sandbox (see the module)."""
    out = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]
    for key, value in _environment(SANDBOX_ROOT).items():
        out += ["--setenv", key, value]
    for folder in _SYSTEM:
        out += ["--ro-bind-try", folder, folder]
    for link in _LINKS:
        if os.path.islink(link):
            out += ["--symlink", os.readlink(link), link]
        else:
            out += ["--ro-bind-try", link, link]
    # The empty /tmp goes first: a later mount shadows an earlier one, and the run's Python
    # may live under /tmp (a virtual environment in a temporary checkout).
    out += ["--proc", "/proc", "--dev", "/dev"]
    if tmp_bytes is not None:  # the private /tmp is memory: bounded as the workspace is
        out += ["--size", str(tmp_bytes)]
    out += ["--tmpfs", "/tmp"]
    for root in _python_roots():
        out += ["--ro-bind", root, root]
    out += ["--bind", str(workspace), SANDBOX_ROOT, "--chdir", SANDBOX_ROOT, "--", *argv]
    return out


@dataclass(frozen=True)
class CommandResult:
    """What a command did: its exit code (None: stopped), its output (cut to the cap), and
    why it was stopped if it was."""

    exit_code: int | None
    output: str
    cut: bool
    timed_out: bool
    isolation: Isolation
    duration_ms: float
    over_quota: bool = False

    def text(self) -> str:
        """The tool result the model reads."""
        notes = []
        if self.cut:
            notes.append("[output cut at the cap; the command was stopped]")
        if self.timed_out:
            notes.append("[the command ran past its timeout and was killed]")
        if self.over_quota:
            notes.append("[the command wrote past the workspace's disk quota and was stopped]")
        code = "killed" if self.exit_code is None else str(self.exit_code)
        return "\n".join([f"exit code: {code}", self.output, *notes]).strip()


async def run_command(argv: list[str], workspace: Path, *, timeout: float, max_output: int,
                      isolation: Isolation, max_disk: int | None = None) -> CommandResult:
    """Run `argv` (its program resolved already) in `workspace`, bounded by `timeout`
    seconds, `max_output` bytes of output (stdout and stderr together) and, with
    `max_disk`, the bytes the workspace may grow by (see the module)."""
    started = time.perf_counter()
    limit = folder_size(workspace) + max_disk if max_disk is not None else None
    if isolation == "bwrap":
        bwrap = bwrap_path() or "bwrap"
        command = bwrap_argv(bwrap, workspace, argv, max_disk)
        env = {"PATH": "/usr/bin:/bin"}
    else:
        command, env = argv, _environment(str(workspace))

    def bounded() -> None:  # in the child, before it runs the command
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    process = await asyncio.create_subprocess_exec(
        *command, cwd=str(workspace), env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True, preexec_fn=bounded)
    chunks: list[bytes] = []
    size = 0
    cut = timed_out = over = False

    async def watch() -> None:
        # The walk that measures the workspace costs a stat per file, so it runs every
        # QUOTA_POLL_S, or sooner when the filesystem's used bytes (one statvfs, every
        # QUOTA_TICK_S) grew by half the room left since the last walk: a command that
        # writes fast is stopped within a tick or two of passing the quota, not a poll.
        nonlocal over
        if limit is None:
            return
        walked_at, used_then, room = time.monotonic(), _used_bytes(workspace), max_disk or 0
        while True:
            await asyncio.sleep(QUOTA_TICK_S)
            used = _used_bytes(workspace)
            if used - used_then < room // 2 and time.monotonic() - walked_at < QUOTA_POLL_S:
                continue
            grown = await asyncio.to_thread(folder_size, workspace)
            if grown > limit:
                over = True
                _kill(process)
                return
            walked_at, used_then, room = time.monotonic(), used, limit - grown

    watcher = asyncio.create_task(watch())

    async def read() -> None:
        nonlocal size, cut
        assert process.stdout is not None
        while True:
            chunk = await process.stdout.read(65536)
            if not chunk:
                return
            room = max_output - size
            chunks.append(chunk[:room])
            size += min(len(chunk), room)
            if len(chunk) > room:
                cut = True
                _kill(process)
                return

    try:
        await asyncio.wait_for(read(), timeout)
    except TimeoutError:
        timed_out = True
        _kill(process)
    finally:
        watcher.cancel()
    if limit is not None and not over and folder_size(workspace) > limit:
        over = True  # it finished between two measurements, over the quota
    try:
        if cut or timed_out or over:  # drain what the killed process left, so the pipe closes
            assert process.stdout is not None
            while await asyncio.wait_for(process.stdout.read(65536), 5):
                pass
        exit_code: int | None = await asyncio.wait_for(process.wait(), 5)
    except TimeoutError:
        exit_code = None
    if cut or timed_out or over:
        exit_code = None
    output = b"".join(chunks).decode("utf-8", errors="replace")
    return CommandResult(exit_code, output, cut, timed_out, isolation,
                         round((time.perf_counter() - started) * 1000, 3), over)


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
