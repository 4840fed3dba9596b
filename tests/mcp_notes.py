"""The MCP tests' shared setup: the notes pattern, its tools on the tests' own server
(tests/mcp_notes_server.py, over stdio or streamable HTTP), a scripted run of it, and what
the two transports must both show (the tools listed and called, a server dying mid-run).

Used by tests/test_mcp_tools.py (stdio) and tests/test_mcp_http.py (HTTP).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from prose.llm.script import Script
from prose.runtime import RunOptions, RunResult, run_pattern
from prose.runtime.mcp_client import McpServers, McpToolSpec
from prose.runtime.toolbox import Provider
from tests.conftest import ROOT

# The stdio server's command line.
SERVER = (sys.executable, str(ROOT / "tests" / "mcp_notes_server.py"))

PATTERN = """---
name: notes-agent
kind: pattern
version: 0.1.0
---
# Notes agent

### Parameters

- `task`: string -- the task

### Slots

- `keeper` (primary)
  - requires: task
  - ensures: report object with `notes` (list)
  - tools: mcp:remember (writes), mcp:recall, mcp:crash

### Delegation

```prose
let r = call keeper
  task: task
return r
```
"""

# Two notes kept, then read back, then the answer.
KEEP_TWO = [
    {"tool": "mcp:remember", "args": {"text": "the adder subtracts"}},
    {"tool": "mcp:remember", "args": {"text": "tests fail"}},
    {"tool": "mcp:recall"},
    {"notes": ["the adder subtracts", "tests fail"]},
]
# A note kept, the server made to die, a read that finds it gone, the answer.
CRASH_MIDRUN = [
    {"tool": "mcp:remember", "args": {"text": "one"}},
    {"tool": "mcp:crash"},
    {"tool": "mcp:recall"},
    {"notes": []},
]


def notes_tools(*, url: str | None = None) -> dict[str, Provider]:
    """The pattern's three tools on the stdio server, or on the HTTP one at `url`."""
    command = () if url is not None else SERVER
    return {f"mcp:{name}": McpToolSpec(command, name, timeout=30, url=url)
            for name in ("remember", "recall", "crash")}


def run_notes(tmp_path: Path, tools: dict[str, Provider], responses: list[Any]) -> RunResult:
    """Run the notes pattern with `tools`, the keeper's turns scripted, traced in tmp_path."""
    path = tmp_path / "notes.prose.md"
    path.write_text(PATTERN, encoding="utf-8")
    script = Script.from_mapping({"slots": {"keeper": responses}})
    return asyncio.run(run_pattern(path, RunOptions(
        inputs={"task": "keep notes"}, script=script, tools=tools,
        trace_path=tmp_path / "trace.jsonl")))


def events(tmp_path: Path, kind: str) -> list[dict[str, Any]]:
    lines = (tmp_path / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def described(spec: McpToolSpec) -> tuple[str | None, dict[str, Any] | None]:
    """What the server says of the tool `spec` names: its description and input schema."""
    async def listed() -> tuple[str | None, dict[str, Any] | None]:
        servers = McpServers()
        try:
            return await servers.describe(spec)
        finally:
            await servers.close()

    return asyncio.run(listed())


def check_kept_two(tmp_path: Path, result: RunResult) -> dict[str, Any]:
    """The run of `KEEP_TWO`: both notes kept and read back, every tool output labelled by
    its tool; returns what the model was offered, by tool."""
    assert result.exit_code == 0, result.error and result.error.format()
    called = events(tmp_path, "tool")
    assert [e["output"] for e in called[:2]] == ["1 note(s) kept", "2 note(s) kept"]
    assert "the adder subtracts" in called[2]["output"] and "tests fail" in called[2]["output"]
    assert all(e["kind"] == "external" and e["provenance"] == [f"tool:{e['tool']}"]
               for e in called)
    [call] = events(tmp_path, "call")
    return {t["tool"]: t for t in call["agent"]["tools"]}


def check_crash_midrun(tmp_path: Path, result: RunResult, after_crash: str) -> None:
    """The run of `CRASH_MIDRUN`: the crash and the read after it are tool results with an
    error (the read's names `after_crash`), the run ends ok and its trace is sealed."""
    assert result.exit_code == 0, result.error and result.error.format()
    called = events(tmp_path, "tool")
    assert called[0]["error"] is None
    assert called[1]["error"] is not None and "mcp:crash" in called[1]["error"]
    assert called[2]["error"] is not None and after_crash in called[2]["error"]
    assert (tmp_path / "trace.jsonl.sha256").is_file()  # the trace is sealed
    assert events(tmp_path, "run_end")[0]["status"] == "ok"
