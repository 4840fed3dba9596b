"""An external tool bound `separate` by the instance: a server per slot, so no channel.

`A never sees B` is PH620 when B can write through an external tool A reads, unless the
instance binds the tool to separate servers (`separate: true` under `mcp:NAME`: prose
starts one server process per slot). `prose lint INSTANCE.yaml` and `prose run`'s lint
gate judge the channel as the instance binds it; the run starts a process per slot and
the audit reads the binding from `run_start.tools`. The real CLI, the real MCP server of
the tests (tests/mcp_notes_server.py), real files.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from prose.check import lint_text
from prose.lang.flows import Label
from prose.lang.tools import declared_uses, refused_call, shared_channels
from prose.spec.instance_loader import load_instance
from tests.conftest import ROOT, run_prose
from tests.test_leaks import LEAK_FIXTURES, load_leak_fixture

pytest.importorskip("mcp")

SERVER = str(ROOT / "tests" / "mcp_notes_server.py")

PATTERN = """---
name: notes-channel
kind: pattern
version: 0.1.0
---
# Notes channel

### Parameters

- `task_brief`: string -- what the proposer answers

### Slots

- `proposer` (primary)
  - requires: task_brief
  - ensures: proposal text answering the brief
  - tools: mcp:notes
- `adversary`
  - requires: proposal
  - ensures: attack listing flaws in the proposal
  - tools: mcp:notes (writes)

### Invariants

- `proposer` never sees `adversary`

### Delegation

```prose
let proposal = call proposer
  task_brief: task_brief
let attack = call adversary
  proposal: proposal
return { proposal: proposal, attack: attack }
```
"""
SCRIPT = {"slots": {
    "proposer": [{"tool": "mcp:notes", "args": {"text": "the proposal's draft"}}, "a proposal"],
    "adversary": [{"tool": "mcp:notes", "args": {"text": "the verdict"}}, "an attack"],
}}


def write_files(tmp_path: Path, separate: bool) -> Path:
    (tmp_path / "channel.prose.md").write_text(PATTERN, encoding="utf-8")
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    apart = ", separate: true" if separate else ""
    instance = tmp_path / ("separate.yaml" if separate else "shared.yaml")
    instance.write_text(textwrap.dedent(f"""\
        pattern: channel.prose.md
        with: {{proposer: fast, adversary: strong}}
        inputs: {{task_brief: the brief}}
        tools:
          mcp:notes: {{server: [python, {SERVER}], tool: remember{apart}}}
        """), encoding="utf-8")
    return instance


def test_lint_of_an_instance_judges_the_channel_as_it_binds_the_tool(tmp_path: Path) -> None:
    shared = run_prose("lint", str(write_files(tmp_path, separate=False)))
    assert shared.code == 1, shared.output
    assert "channel.prose.md:17:12: PH620" in shared.output
    separate = run_prose("lint", str(write_files(tmp_path, separate=True)))
    assert separate.code == 0, separate.output
    assert "PH620" not in separate.output
    # the pattern alone still says it: only an instance can separate the servers
    alone = run_prose("lint", str(tmp_path / "channel.prose.md"))
    assert alone.code == 1 and "PH620" in alone.output


def test_run_of_an_instance_with_separate_servers(tmp_path: Path) -> None:
    shared = run_prose("run", str(write_files(tmp_path, separate=False)), "--script",
                       str(tmp_path / "script.json"), "--trace", str(tmp_path / "shared.jsonl"),
                       cwd=tmp_path)
    assert shared.code == 1 and "PH620" in shared.stderr, shared.output  # the lint gate
    assert not (tmp_path / "shared.jsonl").exists()  # nothing ran
    trace = tmp_path / "separate.jsonl"
    done = run_prose("run", str(write_files(tmp_path, separate=True)), "--script",
                     str(tmp_path / "script.json"), "--trace", str(trace), cwd=tmp_path)
    assert done.code == 0, done.output
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    [start] = [e for e in events if e["type"] == "run_start"]
    assert {(t["slot"], t.get("separate")) for t in start["tools"]} == {
        ("proposer", True), ("adversary", True)}
    # each slot's note is the first its own server keeps: two processes, two stores
    tools = {e["slot"]: e for e in events if e["type"] == "tool"}
    assert tools["proposer"]["output"] == "1 note(s) kept", tools["proposer"]
    assert tools["adversary"]["output"] == "1 note(s) kept", tools["adversary"]
    calls = {e["slot"]: e for e in events if e["type"] == "call"}
    assert calls["adversary"]["agent"]["tools"][0]["mcp"]["separate"] is True
    audit = run_prose("audit", str(trace), cwd=tmp_path)
    assert audit.code == 0, audit.output


def test_one_shared_server_is_one_store(tmp_path: Path) -> None:
    """The same two calls with no `separate` and no invariant: one process, so the second
    note is the store's second (what made the shared binding a channel)."""
    pattern = PATTERN.replace("- `proposer` never sees `adversary`", "- None.")
    (tmp_path / "channel.prose.md").write_text(pattern, encoding="utf-8")
    instance = write_files(tmp_path, separate=False)
    (tmp_path / "channel.prose.md").write_text(pattern, encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    done = run_prose("run", str(instance), "--script", str(tmp_path / "script.json"),
                     "--trace", str(trace), cwd=tmp_path)
    assert done.code == 0, done.output
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    outputs = [e["output"] for e in events if e["type"] == "tool"]
    assert outputs == ["1 note(s) kept", "2 note(s) kept"]


@pytest.mark.parametrize(("tool", "why"), [
    ("{url: 'http://127.0.0.1:9/mcp', separate: true}", "a `url:` is one server"),
    ("{python: 'tests.tool_notes:note', separate: true}", "a Python tool shares the run"),
    ("{server: [python, s.py], separate: yes please}", "is true (a server per slot) or false"),
])
def test_separate_needs_a_server_prose_starts(tmp_path: Path, tool: str, why: str) -> None:
    (tmp_path / "channel.prose.md").write_text(PATTERN, encoding="utf-8")
    text = (f"pattern: channel.prose.md\nwith: {{proposer: fast, adversary: fast}}\n"
            f"inputs: {{task_brief: t}}\ntools:\n  mcp:notes: {tool}\n")
    result = load_instance(text, str(tmp_path / "i.yaml"))
    found = [(d.code, d.span.line) for d in result.diagnostics if d.code == "PS195"]
    assert found == [("PS195", 5)], result.diagnostics
    assert why in next(d.message for d in result.diagnostics if d.code == "PS195")


def test_the_rule_a_separate_tool_is_no_channel_and_no_reader() -> None:
    declarations = [("a", "mcp:notes", True), ("b", "mcp:notes", False)]
    hidden = {"b": frozenset({"a"})}
    carried = Label(frozenset({"a"}), frozenset())
    shared = declared_uses(declarations)
    assert [(c.writer, c.reader) for c in shared_channels(shared)] == [("a", "b")]
    assert refused_call("mcp:notes", "a", True, carried, shared, hidden) == ("b", "a")
    apart = declared_uses(declarations, separate={"mcp:notes"})
    assert shared_channels(apart) == []
    assert refused_call("mcp:notes", "a", True, carried, apart, hidden) is None


def test_ph621_is_lifted_by_separate_servers_too() -> None:
    """The shared tool of the PH621 fixture (an input carrying a hidden slot's output, which
    the agent could send to a tool the hidden slot's reader uses): no finding when the
    instance gives each slot its own server."""
    leak = load_leak_fixture(LEAK_FIXTURES / "tool-argument-shared.yaml")[0]
    text = leak.build().text
    codes: Any = [d.code for d in lint_text(text, "leak.prose.md").diagnostics]
    assert "PH621" in codes
    apart = lint_text(text, "leak.prose.md", separate_tools=frozenset({"mcp:notes"}))
    assert "PH621" not in [d.code for d in apart.diagnostics]
