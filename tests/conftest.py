"""Shared test helpers: run the `prose` CLI, in a new process or in this one.

`run_prose` starts a new interpreter, as a user's shell does: for exit codes,
output channels, imports and anything else a process owns. `run_prose_in_process`
calls the same click command in this interpreter (LiteLLM is imported once per
test session, not once per case) for the tests that check what a command does.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))

# PROSE_THOROUGH=1: the property tests draw many more examples (docs/testing.md, "prose's own
# test suite"); the everyday run keeps the counts that fit the suite in a few minutes.
THOROUGH = os.environ.get("PROSE_THOROUGH", "").strip() not in ("", "0")


def examples(everyday: int, thorough: int) -> int:
    """A property test's number of examples: `thorough` with PROSE_THOROUGH=1, else `everyday`."""
    return thorough if THOROUGH else everyday


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


def run_prose_in_process(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                         input: str | None = None) -> Result:
    """Run `prose ARGS` in this interpreter: the command the console script runs, its output
    captured, in `cwd` (the checkout by default). An exception it lets escape fails the test."""
    from click.testing import CliRunner

    from prose.cli.main import cli

    with contextlib.chdir(cwd or ROOT):
        done = CliRunner().invoke(cli, list(args), input=input, env=env, catch_exceptions=False,
                                  prog_name="prose")
    assert "Traceback" not in done.stderr, done.stderr
    assert "Traceback" not in done.stdout, done.stdout
    return Result(done.exit_code, done.stdout, done.stderr)


@pytest.fixture
def prose_cli() -> object:
    return run_prose


# Modules whose tests take longest (`--durations`, 2 cores), longest first. They are handed
# out first, alternately to the xdist workers, so that the run does not end with one worker
# finishing a long test while the other waits. Whole modules move, so module-scoped fixtures
# are still built once per worker.
LONGEST_FIRST = (
    "test_batch_ray.py", "test_soundness.py", "test_local_model.py", "test_batch.py",
    "test_syntax_properties.py", "test_runtime_http.py", "test_newcomer.py",
    "test_runtime_cli.py", "test_client_start.py", "test_examples.py", "test_local_engine.py",
    "test_doc_commands.py", "test_packaging.py", "test_prompt_bounds.py", "test_llm_import.py",
    "test_report_browser.py", "test_syntax_nesting.py", "test_lsp_server.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the longest modules first (a stable sort: the rest keep their order)."""
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FIRST)))
