"""Ctrl-C while `prose` starts (issue 35): pressed while the console script imports the
command line (click, then the command's modules), it used to print a traceback of
importlib frames, or click's "Aborted!" with exit 1. Now it is a quiet exit 130.

The installed console script runs, as a user's shell starts it. The test sends SIGINT at
moments counted from a module the process has imported (seen on stderr through
`PYTHONPROFILEIMPORTTIME`, which lists each import as it finishes): `click._compat`, in
the middle of importing click, or `click`, before the command's modules. So each press
lands in prose's start-up and none in Python's own (its `site` imports, before any prose
code; that one is Python's, docs/security.md).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.loopback import ctrl_c_as_in_a_terminal

ROOT = Path(__file__).resolve().parent.parent


def _console_script() -> str:
    script = Path(sys.executable).with_name("prose")
    command = str(script) if script.is_file() else shutil.which("prose")
    assert command is not None, "the `prose` console script is not installed (pip install -e .)"
    return command


def _interrupt_after(args: list[str], module: str, delay: float) -> tuple[int, str]:
    """Start `prose ARGS`, wait until it has imported `module`, wait `delay` s more, send
    SIGINT; its exit code and stderr without the import-time lines."""
    process = subprocess.Popen([_console_script(), *args], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
                               preexec_fn=ctrl_c_as_in_a_terminal)
    assert process.stderr is not None
    lines: list[bytes] = []  # read until the module's import-time line (never past it)
    try:
        for line in process.stderr:
            lines.append(line)
            if line.rsplit(b"|", 1)[-1].strip() == module.encode():
                break
        else:
            raise AssertionError(f"`{module}` was never imported")
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        _, rest = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    text = b"".join([*lines, rest]).decode("utf-8", "replace")
    told = "\n".join(line for line in text.splitlines() if not line.startswith("import time:"))
    return process.returncode, told


# Each command is given the library ten times, so it runs for about a second on a fast
# machine and the latest press (0.15 s after click) still lands in it (given the library
# once, parse had ended by then on a fast machine, and the press found nothing to stop).
LIBRARY = sorted(str(p) for p in (ROOT / "patterns").glob("*.md"))


@pytest.mark.parametrize(("module", "delay"), [
    ("click._compat", 0.0), ("click._compat", 0.002), ("click", 0.0), ("click", 0.05),
    ("click", 0.15)])
@pytest.mark.parametrize("command", [["lint", *["patterns/"] * 10], ["parse", *LIBRARY * 10]],
                         ids=["lint", "parse"])
def test_ctrl_c_while_prose_starts_exits_130_quietly(command: list[str], module: str,
                                                     delay: float) -> None:
    code, stderr = _interrupt_after(command, module, delay)
    assert code == 130, stderr
    assert "Traceback" not in stderr, stderr
    assert "Aborted!" not in stderr, stderr
