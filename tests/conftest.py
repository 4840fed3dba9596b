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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from llm_server import FakeLLMServer
from sandbox_fixtures import MODES

if TYPE_CHECKING:
    from prose.runtime.sandbox import Isolation
    from prose.runtime.workspace import Workspace

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


# Modules whose tests take longest, with their seconds on 2 busy cores (per-test wall time,
# summed; a suite run on 2026-12-02). `pytest_collection_modifyitems` uses them to give each
# xdist worker about the same share of long tests to start with.
LONG_MODULES = {
    "test_local_model.py": 50, "test_batch.py": 35, "test_runtime_http.py": 35,
    "test_batch_ray.py": 30, "test_soundness.py": 25, "test_syntax_nesting.py": 20,
    "test_runtime_cli.py": 15, "test_event_loop.py": 13, "test_otel.py": 12,
    "test_format.py": 12, "test_layering.py": 12, "test_prompt_bounds.py": 11,
    "test_report.py": 11, "test_report_browser.py": 11, "test_local_engine.py": 9,
    "test_newcomer.py": 9, "test_doc_commands.py": 9, "test_llm_http.py": 9,
    "test_examples.py": 8, "test_llm_import.py": 7, "test_ledger_audit.py": 7,
    "test_client_start.py": 6, "test_syntax_properties.py": 6, "test_lsp_server.py": 6,
    "test_lsp_fuzz.py": 6, "test_packaging.py": 5,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the tests for `--dist worksteal` (pyproject.toml).

    worksteal gives each of N workers one consecutive part of the collection (part k starts
    at about k/N of it) and, when a worker runs out, moves the end of the longest remaining
    queue to it. So each part starts with its share of the long modules (longest first, each
    to the part with the least so far) and is filled up with the other tests in their own
    order; whatever is left at the end is balanced by stealing. Whole modules stay together,
    so module-scoped fixtures are built once per worker that runs the module.
    """
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    modules: dict[Path, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.path, []).append(item)
    long = sorted((path for path in modules if path.name in LONG_MODULES),
                  key=lambda path: -LONG_MODULES[path.name])
    rest = [item for path, tests in modules.items() if path.name not in LONG_MODULES
            for item in tests]
    parts: list[list[pytest.Item]] = [[] for _ in range(workers)]
    seconds = [0.0] * workers
    for path in long:
        lightest = seconds.index(min(seconds))
        parts[lightest].extend(modules[path])
        seconds[lightest] += LONG_MODULES[path.name]
    ordered: list[pytest.Item] = []
    remaining = len(items)
    for index, part in enumerate(parts):
        size = remaining // (workers - index)  # the share worksteal sends this part's worker
        remaining -= size
        fill = max(0, size - len(part))
        ordered.extend(part + rest[:fill])
        del rest[:fill]
    items[:] = ordered + rest


@pytest.fixture(scope="module")
def module_server() -> Iterator[FakeLLMServer]:
    """One loopback OpenAI-compatible server per test module (`tests/llm_server.py`)."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def server(module_server: FakeLLMServer) -> FakeLLMServer:
    """The module's loopback server, its queues, requests and delays forgotten."""
    module_server.reset()
    return module_server


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> Isolation:
    """Each isolation mode of a sandbox test; bubblewrap is skipped where it is not usable."""
    from prose.runtime.sandbox import isolation_mode

    wanted: Isolation = request.param
    if wanted == "bwrap" and isolation_mode() != "bwrap":
        pytest.skip("bubblewrap is not usable on this machine")
    return wanted


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    """A laid-out workspace for a sandbox test: a file and a task."""
    from prose.runtime.workspace import lay_out

    space = lay_out({"files": {"a.py": "x = 1\n"}, "task": "t"})
    yield space
    space.remove()
