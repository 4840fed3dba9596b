"""The console script holds the cyclic garbage collector off while it imports the command
line and the command's module, then freezes what was imported and collects again
(`prose.cli.collector`): the command's own work is collected as before.
A program that calls `prose.cli.main.main` itself keeps its collector as it set it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Records whether the collector runs just before and just after the command's module is
# imported, and at the end of the process (after the command).
_SPY = """
import atexit, gc, sys
import prose.cli.main as cli_main
seen = []
real = cli_main.LazyGroup.get_command
def spy(self, ctx, name):
    seen.append(gc.isenabled())
    command = real(self, ctx, name)
    seen.append(gc.isenabled())
    return command
cli_main.LazyGroup.get_command = spy
atexit.register(lambda: print("seen", seen, "frozen", gc.get_freeze_count() > 0, flush=True))
sys.argv = ["prose", *sys.argv[1:]]
"""


def _seen(entry: str, *args: str) -> str:
    code = _SPY + entry
    done = subprocess.run([sys.executable, "-P", "-c", code, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_console_script_collects_once_the_command_is_imported() -> None:
    seen = _seen("from prose.cli.entry import main; main()", "rules", "PN101")
    assert seen == "seen [False, True] frozen True"


def test_a_program_calling_main_keeps_its_collector() -> None:
    seen = _seen("from prose.cli.main import main; main()", "rules", "PN101")
    assert seen == "seen [True, True] frozen False"
