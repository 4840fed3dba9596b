"""Attacks on an agent's workspace and commands, with bubblewrap and without it.

Each tool call runs for real (`prose.runtime.toolbox.run_tool`) in a real workspace;
`bwrap` is the real bubblewrap (skipped where the machine has none: CI installs it),
`context-only` the confinement by folder alone. Every attack is refused or bounded, and
the tool result says why; nothing outside the workspace is read or changed where the
mode promises it.
"""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from prose.runtime.sandbox import Isolation, isolation_mode
from prose.runtime.toolbox import CommandSpec, Tool
from prose.runtime.workspace import Workspace
from tests.sandbox_fixtures import call


def command(*argv: str, params: dict[str, str] | None = None, timeout: float = 60,
            max_output: int = 65536) -> Tool:
    spec = CommandSpec(tuple(argv), params or {}, timeout, max_output)
    return Tool("cli:test", "command", True, spec)


READ = Tool("read", "workspace", False)


def test_reading_up_and_out_is_refused(workspace: Workspace, mode: Isolation) -> None:
    for path in ("../../etc/passwd", "/etc/passwd", "files/../../../etc/passwd"):
        outcome = call(READ, {"path": path}, workspace, mode)
        assert outcome.error is not None and "root:" not in outcome.text()
        assert "workspace" in outcome.error


def test_a_symlink_out_is_not_followed(workspace: Workspace, mode: Isolation) -> None:
    link = command("ln", "-s", "/etc/passwd", "link")
    made = call(link, {}, workspace, mode)
    assert made.exit_code == 0, made.text()
    outcome = call(READ, {"path": "link"}, workspace, mode)
    assert outcome.error is not None and "symbolic link" in outcome.error
    listed = call(Tool("list", "workspace", False), {}, workspace, mode)
    assert "link" not in listed.output.split()  # a link out is no file of the workspace
    grep = call(Tool("grep", "workspace", False), {"pattern": "root"}, workspace, mode)
    assert "root:" not in grep.output


@pytest.mark.parametrize("args", [
    {"path": "--collect-only"},
    {"path": "/etc"},
    {"path": "files/../../etc"},
    {"path": "files", "extra": "-x"},
    {},
])
def test_a_declared_command_takes_only_the_arguments_allowed(
        workspace: Workspace, mode: Isolation, args: dict[str, object]) -> None:
    tool = command("ls", "{path}")
    outcome = call(tool, args, workspace, mode)
    assert outcome.error is not None, outcome.text()
    assert outcome.exit_code is None  # nothing ran


def test_a_declared_command_runs_with_an_allowed_argument(workspace: Workspace,
                                                          mode: Isolation) -> None:
    outcome = call(command("ls", "{path}"), {"path": "files"}, workspace, mode)
    assert outcome.error is None and outcome.exit_code == 0
    assert outcome.output.split() == ["exit", "code:", "0", "a.py"]
    assert outcome.isolation == mode


def test_huge_output_is_cut_with_a_note(workspace: Workspace, mode: Isolation) -> None:
    flood = command("python", "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)",
                    max_output=4096)
    outcome = call(flood, {}, workspace, mode)
    assert "[output cut at the cap; the command was stopped]" in outcome.output
    assert outcome.output.split("\n")[1] == "x" * 4096
    assert outcome.exit_code is None


def test_a_hanging_command_stops_at_its_timeout(workspace: Workspace, mode: Isolation) -> None:
    outcome = call(command("python", "-c", "import time; time.sleep(120)", timeout=1),
                   {}, workspace, mode)
    assert outcome.error is not None and "timeout" in outcome.error
    assert outcome.exit_code is None


def test_writing_outside_the_workspace_fails_in_the_sandbox(workspace: Workspace,
                                                            tmp_path: Path) -> None:
    if isolation_mode() != "bwrap":
        pytest.skip("bubblewrap is not usable on this machine")
    target = tmp_path / "escaped.txt"
    code = f"open({str(target)!r}, 'w').write('out')"
    outcome = call(command("python", "-c", code), {}, workspace, "bwrap")
    assert outcome.exit_code != 0
    assert not target.exists()
    home = command("python", "-c", "open('/usr/escaped', 'w')")
    assert call(home, {}, workspace, "bwrap").exit_code != 0
    assert not Path("/usr/escaped").exists()
    inside = call(command("python", "-c", "open('made.txt', 'w').write('in')"), {},
                  workspace, "bwrap")
    assert inside.exit_code == 0 and (workspace.root / "made.txt").read_text() == "in"
    assert workspace.changes()["added"] == ["made.txt"]


def test_the_sandbox_has_no_network(workspace: Workspace) -> None:
    if isolation_mode() != "bwrap":
        pytest.skip("bubblewrap is not usable on this machine")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        code = (f"import socket; s = socket.create_connection(('127.0.0.1', {port}), 2); "
                "print('connected')")
        outcome = call(command("python", "-c", code), {}, workspace, "bwrap")
        assert outcome.exit_code != 0 and "connected" not in outcome.output.split("\n")
        outside = call(command("python", "-c", code), {}, workspace, "context-only")
        assert outside.exit_code == 0  # context-only confines by folder only (docs/agents.md)
    finally:
        server.shutdown()
        server.server_close()


def test_the_sandbox_sees_no_other_folder(workspace: Workspace) -> None:
    if isolation_mode() != "bwrap":
        pytest.skip("bubblewrap is not usable on this machine")
    here = str(Path(__file__).resolve())
    code = f"import os; print(os.path.exists({here!r}), os.getcwd())"
    outcome = call(command("python", "-c", code), {}, workspace, "bwrap")
    assert outcome.output.split("\n")[1] == "False /workspace", outcome.output
