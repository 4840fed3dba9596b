"""Agents' external tools served by an MCP server (the official `mcp` SDK, over stdio).

A FastMCP-style server of the tests' own (tests/mcp_notes_server.py) is started by the
run on first use, listed (the model is offered its tools' own schemas) and called from
scripted turns; notes kept by one call are read by the next (one process a run); a
server that dies mid-run gives a clear tool result and a sealed trace. `prose lint`
never imports `mcp`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from prose.llm.script import Script
from prose.runtime import RunOptions, RunResult, run_pattern
from prose.runtime.mcp_client import McpToolSpec
from prose.runtime.toolbox import Provider
from prose.spec.instance_loader import load_instance
from tests.conftest import ROOT

pytest.importorskip("mcp")

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


def tools() -> dict[str, Provider]:
    return {f"mcp:{name}": McpToolSpec(SERVER, name, timeout=30)
            for name in ("remember", "recall", "crash")}


def run(tmp_path: Path, responses: list[Any]) -> RunResult:
    path = tmp_path / "notes.prose.md"
    path.write_text(PATTERN, encoding="utf-8")
    script = Script.from_mapping({"slots": {"keeper": responses}})
    return asyncio.run(run_pattern(path, RunOptions(
        inputs={"task": "keep notes"}, script=script, tools=tools(),
        trace_path=tmp_path / "trace.jsonl")))


def events(tmp_path: Path, kind: str) -> list[dict[str, Any]]:
    lines = (tmp_path / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def test_a_stdio_server_is_listed_and_called(tmp_path: Path) -> None:
    result = run(tmp_path, [
        {"tool": "mcp:remember", "args": {"text": "the adder subtracts"}},
        {"tool": "mcp:remember", "args": {"text": "tests fail"}},
        {"tool": "mcp:recall"},
        {"notes": ["the adder subtracts", "tests fail"]},
    ])
    assert result.exit_code == 0, result.error and result.error.format()
    called = events(tmp_path, "tool")
    assert [e["output"] for e in called[:2]] == ["1 note(s) kept", "2 note(s) kept"]
    assert "the adder subtracts" in called[2]["output"] and "tests fail" in called[2]["output"]
    assert all(e["kind"] == "external" and e["provenance"] == [f"tool:{e['tool']}"]
               for e in called)
    [call] = events(tmp_path, "call")
    offered = {t["tool"]: t for t in call["agent"]["tools"]}
    assert offered["mcp:remember"]["mcp"]["tool"] == "remember"


def test_the_model_is_offered_the_servers_own_schemas(tmp_path: Path) -> None:
    from prose.runtime.mcp_client import McpServers

    async def listed() -> tuple[str | None, dict[str, Any] | None]:
        servers = McpServers()
        try:
            return await servers.describe(McpToolSpec(SERVER, "remember"))
        finally:
            await servers.close()

    description, schema = asyncio.run(listed())
    assert description == "Keep a note; say how many are kept."
    assert schema is not None and schema["required"] == ["text"]


def test_a_server_that_dies_midrun_is_a_clear_tool_result(tmp_path: Path) -> None:
    result = run(tmp_path, [
        {"tool": "mcp:remember", "args": {"text": "one"}},
        {"tool": "mcp:crash"},
        {"tool": "mcp:recall"},
        {"notes": []},
    ])
    assert result.exit_code == 0, result.error and result.error.format()
    called = events(tmp_path, "tool")
    assert called[0]["error"] is None
    assert called[1]["error"] is not None and "mcp:crash" in called[1]["error"]
    assert called[2]["error"] is not None and "stopped" in called[2]["error"]
    assert (tmp_path / "trace.jsonl.sha256").is_file()  # the trace is sealed
    assert events(tmp_path, "run_end")[0]["status"] == "ok"


def test_the_instance_names_a_server(tmp_path: Path) -> None:
    (tmp_path / "notes.prose.md").write_text(PATTERN, encoding="utf-8")
    text = ("pattern: notes.prose.md\nwith:\n  keeper: fast\ninputs: {task: t}\ntools:\n"
            "  mcp:remember: {server: [python, server.py]}\n"
            "  mcp:recall: {server: [python, server.py], tool: recall, timeout: 5}\n"
            "  mcp:crash: {server: python}\n")
    result = load_instance(text, str(tmp_path / "i.yaml"))
    found = [(d.code, d.span.line) for d in result.diagnostics]
    assert found == [("PS193", 5), ("PS195", 8)]  # the malformed one is not provided either
    assert result.instance is not None
    remember = result.instance.tools["mcp:remember"]
    assert remember.kind == "mcp" and remember.server_tool == "remember"


def test_lint_never_imports_mcp_or_litellm(tmp_path: Path) -> None:
    code = textwrap.dedent(f"""
        import json, sys
        from prose.check import lint_text
        found = lint_text({PATTERN!r}, "notes.prose.md")
        print(json.dumps(sorted(m for m in ("mcp", "litellm") if m in sys.modules)))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert json.loads(done.stdout) == []
