"""Agents' external tools served by an MCP server over streamable HTTP (the official SDK).

The tests' own server (tests/mcp_notes_server.py `--http PORT`) listens on loopback; the
instance names it by its address (`url:`), the run opens one session on first use, lists
the server's tools and calls them from scripted turns; a server that dies mid-run makes
its calls clear tool results, and the trace is sealed.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prose.runtime.mcp_client import McpToolSpec
from prose.spec.instance_loader import load_instance
from tests.conftest import ROOT, run_prose_in_process
from tests.mcp_notes import (
    CRASH_MIDRUN,
    KEEP_TWO,
    PATTERN,
    check_crash_midrun,
    check_kept_two,
    described,
    events,
    notes_tools,
    run_notes,
)

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


def test_a_streamable_http_server_is_listed_and_called(tmp_path: Path, server: str) -> None:
    offered = check_kept_two(tmp_path, run_notes(tmp_path, notes_tools(url=server), KEEP_TWO))
    assert offered["mcp:remember"]["mcp"] == {"url": server, "tool": "remember"}


def test_the_model_is_offered_the_http_servers_own_schemas(server: str) -> None:
    description, schema = described(McpToolSpec((), "remember", url=server))
    assert description == "Keep a note; say how many are kept."
    assert schema is not None and schema["required"] == ["text"]


def test_a_http_server_that_dies_midrun_is_a_clear_tool_result(tmp_path: Path,
                                                               server: str) -> None:
    result = run_notes(tmp_path, notes_tools(url=server), CRASH_MIDRUN)
    check_crash_midrun(tmp_path, result, "mcp:recall")
    audited = run_prose_in_process("audit", str(tmp_path / "trace.jsonl"))
    assert audited.code == 0, audited.output


def test_a_server_nobody_listens_at_is_a_clear_tool_result(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    result = run_notes(tmp_path, notes_tools(url=url), [{"tool": "mcp:recall"}, {"notes": []}])
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
