"""Agents' external tools served by an MCP server over streamable HTTP (the official SDK).

The tests' own server (tests/mcp_notes_server.py `--http PORT`) listens on loopback; the
instance names it by its address (`url:`), the run opens one session on first use, lists
the server's tools and calls them from scripted turns; a server that dies mid-run makes
its calls clear tool results, and the trace is sealed.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prose.llm.script import Script
from prose.runtime import RunOptions, RunResult, run_pattern
from prose.runtime.mcp_client import McpServers, McpToolSpec
from prose.runtime.toolbox import Provider
from prose.spec.instance_loader import load_instance
from tests.conftest import ROOT, run_prose_in_process
from tests.test_mcp_tools import PATTERN

pytest.importorskip("mcp")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "mcp_notes_server.py"), "--http", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        process.kill()
        pytest.fail("the MCP server did not start listening")
    yield f"http://127.0.0.1:{port}/mcp"
    process.kill()
    process.wait(timeout=10)


def tools(url: str) -> dict[str, Provider]:
    return {f"mcp:{name}": McpToolSpec((), name, timeout=30, url=url)
            for name in ("remember", "recall", "crash")}


def run(tmp_path: Path, url: str, responses: list[Any]) -> RunResult:
    path = tmp_path / "notes.prose.md"
    path.write_text(PATTERN, encoding="utf-8")
    script = Script.from_mapping({"slots": {"keeper": responses}})
    return asyncio.run(run_pattern(path, RunOptions(
        inputs={"task": "keep notes"}, script=script, tools=tools(url),
        trace_path=tmp_path / "trace.jsonl")))


def events(tmp_path: Path, kind: str) -> list[dict[str, Any]]:
    lines = (tmp_path / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def test_a_streamable_http_server_is_listed_and_called(tmp_path: Path, server: str) -> None:
    result = run(tmp_path, server, [
        {"tool": "mcp:remember", "args": {"text": "the adder subtracts"}},
        {"tool": "mcp:remember", "args": {"text": "tests fail"}},
        {"tool": "mcp:recall"},
        {"notes": ["the adder subtracts", "tests fail"]},
    ])
    assert result.exit_code == 0, result.error and result.error.format()
    called = events(tmp_path, "tool")
    assert [e["output"] for e in called[:2]] == ["1 note(s) kept", "2 note(s) kept"]
    assert "the adder subtracts" in called[2]["output"] and "tests fail" in called[2]["output"]
    assert all(e["provenance"] == [f"tool:{e['tool']}"] for e in called)
    [call] = events(tmp_path, "call")
    offered = {t["tool"]: t for t in call["agent"]["tools"]}
    assert offered["mcp:remember"]["mcp"] == {"url": server, "tool": "remember"}


def test_the_model_is_offered_the_http_servers_own_schemas(server: str) -> None:
    async def listed() -> tuple[str | None, dict[str, Any] | None]:
        servers = McpServers()
        try:
            return await servers.describe(McpToolSpec((), "remember", url=server))
        finally:
            await servers.close()

    description, schema = asyncio.run(listed())
    assert description == "Keep a note; say how many are kept."
    assert schema is not None and schema["required"] == ["text"]


def test_a_http_server_that_dies_midrun_is_a_clear_tool_result(tmp_path: Path,
                                                               server: str) -> None:
    result = run(tmp_path, server, [
        {"tool": "mcp:remember", "args": {"text": "one"}},
        {"tool": "mcp:crash"},
        {"tool": "mcp:recall"},
        {"notes": []},
    ])
    assert result.exit_code == 0, result.error and result.error.format()
    called = events(tmp_path, "tool")
    assert called[0]["error"] is None
    assert called[1]["error"] is not None and "mcp:crash" in called[1]["error"]
    assert called[2]["error"] is not None and "mcp:recall" in called[2]["error"]
    assert (tmp_path / "trace.jsonl.sha256").is_file()  # the trace is sealed
    assert events(tmp_path, "run_end")[0]["status"] == "ok"
    audited = run_prose_in_process("audit", str(tmp_path / "trace.jsonl"))
    assert audited.code == 0, audited.output


def test_a_server_nobody_listens_at_is_a_clear_tool_result(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    result = run(tmp_path, url, [{"tool": "mcp:recall"}, {"notes": []}])
    assert result.exit_code == 0, result.error and result.error.format()
    [called] = events(tmp_path, "tool")
    assert called["error"] is not None and url in called["error"]


@pytest.mark.parametrize(("entry", "message"), [
    ("{url: 'http://127.0.0.1:8000/mcp'}", None),
    ("{url: 'ftp://host/mcp'}", "`url` of `mcp:remember` is the server's http:// or https://"),
    ("{url: 'http://h/mcp', server: [python, s.py]}", "exactly one of `server`"),
    ("{tool: remember}", "is `{python: pkg.mod:func}`"),  # neither: read as a Python tool
])
def test_the_instance_names_a_server_by_address(tmp_path: Path, entry: str,
                                                message: str | None) -> None:
    (tmp_path / "notes.prose.md").write_text(PATTERN, encoding="utf-8")
    text = ("pattern: notes.prose.md\nwith:\n  keeper: fast\ninputs: {task: t}\ntools:\n"
            f"  mcp:remember: {entry}\n  mcp:recall: {{url: 'http://127.0.0.1:8000/mcp'}}\n"
            "  mcp:crash: {url: 'http://127.0.0.1:8000/mcp'}\n")
    result = load_instance(text, str(tmp_path / "i.yaml"))
    found = [d for d in result.diagnostics if d.code == "PS195"]
    if message is None:
        assert not found and result.instance is not None
        remember = result.instance.tools["mcp:remember"]
        assert remember.kind == "mcp" and remember.url == "http://127.0.0.1:8000/mcp"
    else:
        assert len(found) == 1 and message in found[0].message, found
