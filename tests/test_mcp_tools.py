"""Agents' external tools served by an MCP server (the official `mcp` SDK, over stdio).

A FastMCP-style server of the tests' own (tests/mcp_notes_server.py) is started by the
run on first use, listed (the model is offered its tools' own schemas) and called from
scripted turns; notes kept by one call are read by the next (one process a run); a
server that dies mid-run gives a clear tool result and a sealed trace. `prose lint`
never imports `mcp`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from prose.runtime.mcp_client import McpToolSpec
from prose.spec.instance_loader import load_instance
from tests.mcp_notes import (
    CRASH_MIDRUN,
    KEEP_TWO,
    PATTERN,
    SERVER,
    check_crash_midrun,
    check_kept_two,
    described,
    notes_tools,
    run_notes,
)

pytest.importorskip("mcp")

def test_a_stdio_server_is_listed_and_called(tmp_path: Path) -> None:
    offered = check_kept_two(tmp_path, run_notes(tmp_path, notes_tools(), KEEP_TWO))
    assert offered["mcp:remember"]["mcp"]["tool"] == "remember"


def test_the_model_is_offered_the_servers_own_schemas() -> None:
    description, schema = described(McpToolSpec(SERVER, "remember"))
    assert description == "Keep a note; say how many are kept."
    assert schema is not None and schema["required"] == ["text"]


def test_a_server_that_dies_midrun_is_a_clear_tool_result(tmp_path: Path) -> None:
    result = run_notes(tmp_path, notes_tools(), CRASH_MIDRUN)
    check_crash_midrun(tmp_path, result, "stopped")


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
