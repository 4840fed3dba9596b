"""Shared test helpers: run the real `prose` CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_prose(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
              input: str | None = None, timeout: float = 120) -> Result:
    """Run `prose ARGS` in a fresh interpreter, as a user would."""
    command = [sys.executable, "-c", "from prose.cli.main import main; main()", *args]
    full_env = {**os.environ, **(env or {})}
    done = subprocess.run(command, cwd=cwd or ROOT, env=full_env, capture_output=True,
                          text=True, input=input, timeout=timeout, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    assert "Traceback" not in done.stdout, done.stdout
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def prose_cli() -> object:
    return run_prose
