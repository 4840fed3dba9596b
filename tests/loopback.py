"""A project that talks to the loopback provider (`llm_server.py`), shared by the CLI tests.

The fixtures `module_server` (one server per test module) and `server` (the same server,
its queues and requests forgotten before each test) live in `tests/conftest.py`;
`write_project` writes a pattern and a `prose.yaml` whose deployment `fast` sends to
the server's model `echo` (or another), so the real CLI, LiteLLM and HTTP all run.

    def test_x(tmp_path: Path, server: FakeLLMServer) -> None:
        server.enqueue("echo", Reply("hi"))
        project = write_project(tmp_path, server)
        done = run_prose_in_process("run", "echo.prose.md", "--input", "task=t", cwd=project)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from llm_server import FakeLLMServer


def worker_pattern(program: str, *, name: str = "echo", title: str = "Echo",
                   summary: str = "One call whose output is the result.") -> str:
    """A pattern of one slot, `worker` (requires `task`), one parameter `task` and one
    return key `result`, whose program is `program`."""
    return f"""---
name: {name}
kind: pattern
version: 0.1.0
---

# {title}

{summary}

### Slots

- `worker`
  - requires: task
  - ensures: an answer

### Invariants

- none

### Parameters

- `task`: string -- the task

### Returns

- `result`: the answer

### Delegation

```prose
{program}
```
"""


# One call whose output is the result.
ECHO_PATTERN = worker_pattern("let answer = call worker\n  task: task\nreturn { result: answer }")

# `rounds` calls in a row, each told its round, so every call has its own key.
ROUNDS_PATTERN = """---
name: rounds
kind: pattern
version: 0.1.0
---

# Rounds

One call per round.

### Slots

- `worker`
  - ensures: an answer

### Config

- `rounds` (integer, default: 3): how many

### Invariants

- none

### Parameters

- `task`: string -- the task

### Returns

- `result`: the answers

### Delegation

```prose
let out = repeat rounds as i:
  call worker
    task: task
    round: i
return { result: out }
```
"""


def write_project(
    folder: Path,
    server: FakeLLMServer,
    *,
    pattern: str = ECHO_PATTERN,
    name: str = "echo.prose.md",
    model: str = "echo",
    deployments: Mapping[str, str] | None = None,
    api_key: str = "none",
    api_base: str | None = None,
    params: str = "",
    settings: Mapping[str, Any] | None = None,
    rows: Iterable[Mapping[str, Any]] | None = None,
) -> Path:
    """Write `name` (the pattern) and a `prose.yaml` with one deployment, `fast`, sending to
    `openai/MODEL` at the server (`deployments`: several, name -> the server's model name;
    `params`: more litellm_params of each, YAML flow text; `settings`: more top-level
    settings); `rows`, when given, go to `rows.jsonl`. Returns `folder`."""
    (folder / name).write_text(pattern, encoding="utf-8")
    extra = f", {params}" if params else ""
    lines = ["model_list:"]
    for deployment, served in (deployments or {"fast": model}).items():
        lines += [
            f"  - model_name: {deployment}",
            f"    litellm_params: {{model: openai/{served}, api_base: "
            f"'{api_base or server.base_url}', api_key: '{api_key}'{extra}}}",
        ]
    lines += [
        "default_model: fast",
        "retries: 0",
        *(f"{key}: {json.dumps(value)}" for key, value in (settings or {}).items()),
    ]
    (folder / "prose.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if rows is not None:
        (folder / "rows.jsonl").write_text(
            "".join(json.dumps(dict(row)) + "\n" for row in rows), encoding="utf-8")
    return folder


def ctrl_c_as_in_a_terminal() -> None:
    """In a child (`preexec_fn`): SIGINT at its default, as in a terminal. A shell starts a
    background job (`cmd &` without job control, as CI may run the suite) with SIGINT
    ignored and every child inherits that; Python then installs no KeyboardInterrupt
    handler, and a test's Ctrl-C would be ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def prose_process(*args: str, cwd: Path, env: Mapping[str, str] | None = None,
                  **popen: Any) -> subprocess.Popen[bytes]:
    """`prose ARGS` started in a new interpreter in `cwd` (not waited for): for the tests
    that signal it, kill it or read its output as it comes."""
    command = [sys.executable, "-c", "from prose.cli.main import main; main()", *args]
    return subprocess.Popen(command, cwd=cwd, env={**os.environ, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def wait_for_requests(server: FakeLLMServer, count: int, timeout: float = 60) -> None:
    """Wait until the server has received `count` requests (fails after `timeout` s)."""
    deadline = time.monotonic() + timeout
    while len(server.requests) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"the server got {len(server.requests)} of {count} requests")
        time.sleep(0.02)
