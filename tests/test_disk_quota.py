"""A scripted agent that fills the disk is bounded, with bubblewrap and without it.

The workspace may grow by at most the quota (`max_disk:` of a command, `DEFAULT_MAX_DISK`
for `write`): one big file stops at it (RLIMIT_FSIZE), many small files are measured
and the command stopped, bubblewrap's private `/tmp` is a tmpfs of that size, and the
built-in `write` refuses a file that would pass it. Each time the tool result says why.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from prose.lang.tools import DEFAULT_MAX_DISK
from prose.llm.script import Script
from prose.runtime import RunOptions, run_pattern
from prose.runtime.sandbox import Isolation, isolation_mode
from prose.runtime.toolbox import CommandSpec, Tool
from prose.runtime.workspace import Workspace
from prose.spec.instance_loader import load_instance
from tests.sandbox_fixtures import call

QUOTA = 2 * 1024 * 1024
# Python, so the same program runs in both modes: it writes until something stops it.
ONE_BIG_FILE = ("import sys\nwith open(sys.argv[1], 'wb') as f:\n"
                "    for _ in range(64):\n        f.write(b'x' * 1048576)\n        f.flush()\n"
                "print('wrote it all')")
MANY_FILES = ("import sys, os\nos.makedirs(sys.argv[1], exist_ok=True)\n"
              "for i in range(100000):\n"
              "    with open(os.path.join(sys.argv[1], str(i)), 'wb') as f:\n"
              "        f.write(b'x' * 65536)\nprint('wrote it all')")


def filler(program: str, target: str) -> Tool:
    spec = CommandSpec(("python", "-c", program, target), {}, timeout=60, max_disk=QUOTA)
    return Tool("cli:fill", "command", True, spec)


@pytest.mark.parametrize("program", [ONE_BIG_FILE, MANY_FILES], ids=["one-file", "many-files"])
def test_a_command_that_fills_the_workspace_is_stopped(workspace: Workspace, mode: Isolation,
                                                       program: str) -> None:
    before = workspace.size()
    outcome = call(filler(program, "fill"), {}, workspace, mode)
    assert outcome.error is not None, outcome.text()
    assert "wrote more than the workspace's disk quota (2097152 bytes)" in outcome.error
    assert "wrote it all" not in outcome.text() and outcome.exit_code is None
    assert outcome.isolation == mode
    # bounded: what a tenth of a second of writing between two measurements adds, at most
    assert workspace.size() - before < QUOTA + 64 * 1024 * 1024


def test_bubblewrap_s_tmp_is_bounded_too(workspace: Workspace) -> None:
    if isolation_mode() != "bwrap":
        pytest.skip("bubblewrap is not usable on this machine")
    outcome = call(filler(ONE_BIG_FILE, "/tmp/fill"), {}, workspace, "bwrap")
    assert outcome.exit_code != 0 and "wrote it all" not in outcome.text()
    assert "No space left on device" in outcome.text() or "File too large" in outcome.text()


def test_a_command_within_the_quota_runs(workspace: Workspace, mode: Isolation) -> None:
    small = "import sys\nopen(sys.argv[1], 'wb').write(b'x' * 1000)\nprint('wrote it all')"
    outcome = call(filler(small, "small"), {}, workspace, mode)
    assert outcome.error is None and outcome.exit_code == 0 and "wrote it all" in outcome.text()
    assert (workspace.root / "small").stat().st_size == 1000


def test_write_refuses_past_the_quota(workspace: Workspace) -> None:
    write = Tool("write", "workspace", True)
    chunk = "x" * (4 * 1024 * 1024)  # the largest file `write` takes
    for number in range(DEFAULT_MAX_DISK // len(chunk)):
        done = call(write, {"path": f"out/{number}.txt", "content": chunk}, workspace,
                    "context-only")
        assert done.error is None, done.error
    refused = call(write, {"path": "out/one-more.txt", "content": chunk}, workspace,
                   "context-only")
    assert refused.error is not None and "disk quota" in refused.error
    assert not (workspace.root / "out" / "one-more.txt").exists()
    # rewriting a file in place is measured by what it adds, not by its whole size
    again = call(write, {"path": "out/0.txt", "content": chunk}, workspace, "context-only")
    assert again.error is None, again.error


def test_max_disk_in_the_instance(tmp_path: Path) -> None:
    pattern = tmp_path / "p.prose.md"
    pattern.write_text(
        "---\nname: p\nkind: pattern\n---\n\n# P\n\n### Slots\n\n- `w`\n  - requires: task\n"
        "  - ensures: answer\n  - tools: cli:fill\n\n### Parameters\n\n- `task`: string -- t\n"
        "\n### Delegation\n\n```prose\nreturn call w\n  task: task\n```\n", encoding="utf-8")
    for disk, error in ((1024, None), (0, "`max_disk` of `cli:fill` is a number of bytes"),
                        ("big", "`max_disk` of `cli:fill` is a number of bytes")):
        text = (f"pattern: p.prose.md\nwith: {{w: fast}}\ninputs: {{task: t}}\ntools:\n"
                f"  cli:fill:\n"
                f"    command: [python, -c, 'print(1)']\n    max_disk: {disk}\n")
        found = load_instance(text, str(tmp_path / "i.yaml"))
        messages = [d.message for d in found.diagnostics if d.severity.value == "error"]
        if error is None:
            assert found.instance is not None and not messages, messages
            assert found.instance.tools["cli:fill"].max_disk == 1024  # type: ignore[union-attr]
        else:
            assert any(error in m for m in messages), messages


def test_a_scripted_agent_that_fills_the_disk_reads_why(tmp_path: Path) -> None:
    pattern = tmp_path / "p.prose.md"
    pattern.write_text(
        "---\nname: p\nkind: pattern\n---\n\n# P\n\n### Slots\n\n- `w`\n  - requires: task\n"
        "  - ensures: answer\n  - tools: cli:fill\n\n### Parameters\n\n- `task`: string -- t\n"
        "\n### Delegation\n\n```prose\nreturn call w\n  task: task\n```\n", encoding="utf-8")
    script = Script.from_mapping({"slots": {"w": [{"tool": "cli:fill"}, "the disk is full"]}})
    spec = CommandSpec(("python", "-c", MANY_FILES, "fill"), {}, timeout=60, max_disk=QUOTA)
    result = asyncio.run(run_pattern(pattern, RunOptions(
        inputs={"task": "t"}, script=script, tools={"cli:fill": spec},
        trace_path=tmp_path / "trace.jsonl")))
    assert result.exit_code == 0 and result.value == "the disk is full"
    lines = (tmp_path / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    [tool] = [e for e in map(json.loads, lines) if e["type"] == "tool"]
    assert "disk quota" in tool["error"]
    [turn] = [e for e in map(json.loads, lines) if e["type"] == "call"]
    assert "disk quota" in json.dumps(turn["messages"])  # the model read why
