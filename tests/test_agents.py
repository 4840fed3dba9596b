"""Agents: slots with tools (docs/agents.md).

Declarations (`tools:` under a slot, PS190-PS192), their implementations in the instance
file (PS193-PS195), and runs of the function-calling loop through the real call path:
the scripted model served by LiteLLM's router gives tool calls, the tools really run in
a sealed workspace, each call is a `tool` trace event inside its call.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from prose.llm.script import Script
from prose.runtime import RunOptions, RunResult, run_pattern
from prose.runtime.sandbox import isolation_mode
from prose.runtime.toolbox import CommandSpec, Provider, PythonToolSpec
from prose.runtime.workspace import MANIFEST, PathRefused, lay_out
from prose.spec.instance_loader import load_instance
from prose.spec.loader import load_spec
from tests.conftest import run_prose

PATTERN = """---
name: agent-demo
kind: pattern
version: 0.1.0
---
# Agent demo

### Parameters

- `files`: object -- the candidate's files
- `task`: string -- the task

### Slots

- `reviewer` (primary)
  - requires: task, files
  - ensures: review object with `verdict` (string), `notes` (string)
  - tools: {tools}
  - max_turns: {turns}

### Delegation

```prose
let r = call reviewer
  task: task
  files: files
return r
```
"""

FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    "conftest.py": "",
}
PYTEST = CommandSpec(("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "{path}"),
                     {"path": r"^files(/[A-Za-z0-9_.-]+)*$"}, timeout=120)


def write(tmp_path: Path, tools: str = "list, read, grep, cli:pytest", turns: int = 6) -> Path:
    path = tmp_path / "agent.prose.md"
    path.write_text(PATTERN.replace("{tools}", tools).replace("{turns}", str(turns)),
                    encoding="utf-8")
    return path


def run(path: Path, responses: list[Any], tools: dict[str, Provider] | None = None,
        **options: Any) -> RunResult:
    script = Script.from_mapping({"slots": {"reviewer": responses}})
    opts = RunOptions(inputs={"task": "review the adder", "files": FILES}, script=script,
                      tools=tools if tools is not None else {"cli:pytest": PYTEST},
                      trace_path=path.parent / "trace.jsonl", **options)
    return asyncio.run(run_pattern(path, opts))


def events(result: RunResult, kind: str) -> list[dict[str, Any]]:
    assert result.trace_path is not None
    lines = Path(result.trace_path).read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


# --- declarations ---------------------------------------------------------------------


def test_a_slot_declares_tools_with_markers() -> None:
    spec = load_spec(PATTERN.replace("{tools}", "`list`, read, cli:pytest, mcp:memory (writes)")
                     .replace("{turns}", "4"), "p.prose.md")
    assert spec.ok, spec.diagnostics
    assert spec.spec is not None
    slot = spec.spec.slot("reviewer")
    assert slot is not None
    assert [(t.spelling, t.writes) for t in slot.tools] == [
        ("list", False), ("read", False), ("cli:pytest", False), ("mcp:memory", True)]
    assert slot.max_turns == 4
    assert (slot.tools[2].span.line, slot.tools[2].span.column) == (18, 26)


@pytest.mark.parametrize(("tools", "turns", "code", "column"), [
    ("read, shell", "4", "PS190", 18),
    ("read, mcp:memory (sometimes)", "4", "PS191", 18),
    ("read (writes)", "4", "PS191", 12),
    ("read", "many", "PS192", 16),
])
def test_bad_tool_declarations_are_errors_at_their_place(tools: str, turns: str, code: str,
                                                         column: int) -> None:
    spec = load_spec(PATTERN.replace("{tools}", tools).replace("{turns}", turns), "p.prose.md")
    found = [(d.code, d.span.line, d.span.column) for d in spec.diagnostics]
    line = 19 if code == "PS192" else 18
    assert (code, line, column) in found, found


def _instance(tmp_path: Path, tools: str, instance_tools: str) -> list[tuple[str, int, int]]:
    write(tmp_path, tools)
    text = ("pattern: agent.prose.md\nwith:\n  reviewer: fast\ninputs: {task: t, files: {}}\n"
            f"{instance_tools}")
    result = load_instance(text, str(tmp_path / "i.yaml"))
    return [(d.code, d.span.line, d.span.column) for d in result.diagnostics]


def test_instance_provides_each_declared_tool(tmp_path: Path) -> None:
    found = _instance(tmp_path, "read, cli:pytest",
                      "tools:\n  cli:pytest:\n    command: [python, -m, pytest, '{path}']\n")
    assert found == []


def test_declared_but_not_provided_is_an_error(tmp_path: Path) -> None:
    found = _instance(tmp_path, "read, cli:pytest, mcp:memory", "")
    assert ("PS193", 1, 10) in found  # at `pattern:`, naming the slot's line
    assert len([f for f in found if f[0] == "PS193"]) == 2


def test_provided_but_not_declared_is_an_error(tmp_path: Path) -> None:
    found = _instance(tmp_path, "read",
                      "tools:\n  cli:pytets:\n    command: [python, -m, pytest]\n")
    assert found == [("PS194", 6, 3)]


@pytest.mark.parametrize("body", [
    "    command: pytest -q $ARGS\n",
    "    command: [pytest, 'x{path}']\n",
    "    command: ['{prog}', -q]\n",
    "    command: [pytest, '{path}']\n    params: {other: '.*'}\n",
    "    command: [pytest]\n    shell: true\n",
])
def test_malformed_commands_are_errors(tmp_path: Path, body: str) -> None:
    found = _instance(tmp_path, "cli:pytest", "tools:\n  cli:pytest:\n" + body)
    assert any(code == "PS195" for code, _, _ in found), found


def test_a_pattern_run_without_the_tools_provided_stops_before_any_call(tmp_path: Path) -> None:
    result = run(write(tmp_path), [{"verdict": "ok", "notes": ""}], tools={})
    assert result.exit_code == 1
    assert result.error is not None and result.error.code == "R030"
    assert "cli:pytest" in result.error.message
    assert result.error.span is not None and result.error.span.line == 18


# --- the workspace --------------------------------------------------------------------


def test_the_workspace_holds_the_inputs_and_a_manifest(tmp_path: Path) -> None:
    workspace = lay_out({"files": FILES, "task": "t", "n": {"k": 1}})
    try:
        names = sorted(workspace.relative(p) for p in workspace.files())
        assert names == ["files/calc.py", "files/conftest.py", "files/test_calc.py", MANIFEST,
                         "n.json", "task.txt"]
        manifest = (workspace.root / MANIFEST).read_text(encoding="utf-8")
        assert "  files/calc.py\n" in manifest
        (workspace.root / "files" / "calc.py").write_text("changed", encoding="utf-8")
        (workspace.root / "new.txt").write_text("x", encoding="utf-8")
        assert workspace.changes() == {"added": ["new.txt"], "removed": [],
                                       "changed": ["files/calc.py"]}
        for bad in ("../x", "/etc/passwd", "files/../../x"):
            with pytest.raises(PathRefused):
                workspace.resolve(bad)
        (workspace.root / "out").symlink_to("/etc")
        with pytest.raises(PathRefused, match="symbolic link"):
            workspace.resolve("out/passwd")
    finally:
        workspace.remove()
    assert not workspace.root.exists()


# --- runs -----------------------------------------------------------------------------


def test_a_scripted_agent_lists_reads_greps_and_runs_the_tests(tmp_path: Path) -> None:
    result = run(write(tmp_path), [
        {"tool": "list", "args": {}},
        {"tool_calls": [{"tool": "read", "args": {"path": "files/calc.py"}},
                        {"tool": "grep", "args": {"pattern": "def add"}}]},
        {"tool": "cli:pytest", "args": {"path": "files"}},
        {"verdict": "FAIL", "notes": "add subtracts"},
    ])
    assert result.exit_code == 0, result.error
    assert result.value == {"verdict": "FAIL", "notes": "add subtracts"}
    tools = events(result, "tool")
    assert [(t["turn"], t["tool"]) for t in tools] == [
        (1, "list"), (2, "read"), (2, "grep"), (3, "cli:pytest")]
    assert "files/calc.py" in tools[0]["output"]
    assert "return a - b" in tools[1]["output"]
    assert "files/calc.py:1: def add(a, b):" in tools[2]["output"]
    assert "exit code: 1" in tools[3]["output"] and "assert" in tools[3]["output"]
    assert tools[3]["isolation"] == isolation_mode()
    [call] = events(result, "call")
    assert all(t["call"] == call["id"] for t in tools)
    assert call["agent"]["turns"] == 4 and call["agent"]["tool_calls"] == 4
    assert call["agent"]["changes"] == {"added": [], "removed": [], "changed": []}
    # the last turn's messages hold the whole exchange, tool results included
    roles = [m["role"] for m in call["messages"]]
    assert roles.count("tool") == 4 and roles[0] == "system"


def test_a_failing_tool_returns_its_error_to_the_model(tmp_path: Path) -> None:
    result = run(write(tmp_path), [
        {"tool": "read", "args": {"path": "../../etc/passwd"}},
        {"tool": "read", "args": {"path": "nothing.txt"}},
        {"tool": "grep", "args": {"pattern": "("}},
        {"tool": "shell", "args": {"command": "rm -rf /"}},
        {"verdict": "ok", "notes": ""},
    ])
    assert result.exit_code == 0, result.error
    errors = [t["error"] for t in events(result, "tool")]
    assert "leaves the workspace" in errors[0]
    assert "is not a file of the workspace" in errors[1]
    assert "cannot use the pattern" in errors[2]
    assert "`shell` is not a tool of `reviewer`" in errors[3]


def test_a_models_grep_pattern_cannot_make_the_search_slow(tmp_path: Path) -> None:
    """RE2, not Python's backtracking `re`: `(a+)+$` on 34 `a`s and a `!` ran for hours on
    the event loop's thread (holding the interpreter), where neither `--timeout` nor
    Ctrl-C could stop it. A real `prose run`; a regression fails at the 60 s timeout."""
    path = write(tmp_path, tools="list, read, grep")
    (tmp_path / "files.json").write_text(json.dumps({**FILES, "slow.txt": "a" * 34 + "!\n"}),
                                         encoding="utf-8")
    (tmp_path / "script.yaml").write_text(json.dumps({"slots": {"reviewer": [
        {"tool": "grep", "args": {"pattern": "(a+)+$"}}, {"verdict": "ok", "notes": ""}]}}),
        encoding="utf-8")
    done = run_prose("run", path.name, "--script", "script.yaml", "--input", "task=review",
                     "--input-file", "files=files.json", "--trace", "trace.jsonl",
                     cwd=tmp_path, timeout=60)
    assert done.code == 0, done.stderr
    lines = (tmp_path / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    [tool] = [e for e in map(json.loads, lines) if e["type"] == "tool"]
    assert tool["error"] is None and "(no match)" in tool["output"]


def test_an_agent_that_never_answers_stops_at_max_turns(tmp_path: Path) -> None:
    result = run(write(tmp_path, turns=3), [{"tool": "list", "args": {}}] * 5)
    assert result.exit_code == 4
    assert result.error is not None and result.error.code == "R031"
    assert "3 turns" in result.error.message
    assert result.error.span is not None and result.error.span.line == 24
    [call] = events(result, "call")
    assert call["error"]["kind"] == "max_turns"
    assert len(events(result, "tool")) == 3


def test_a_budget_stops_an_agent_loop_midway(tmp_path: Path) -> None:
    from prose.runtime.budget import Limits

    result = run(write(tmp_path), [{"tool": "list", "args": {}}] * 5,
                 limits=Limits(max_calls=2))
    assert result.exit_code == 3
    assert len(events(result, "tool")) == 2
    [call] = events(result, "call")  # the stopped agent's call, its two turns counted
    assert call["error"]["kind"] == "budget" and call["agent"]["turns"] == 2
    assert events(result, "run_end")
    from prose.ledger.audit import audit_trace

    assert result.trace_path is not None
    report = audit_trace(result.trace_path, pattern=tmp_path / "agent.prose.md")
    assert report.findings == [], report.findings


def test_a_python_tool_answers_an_external_tool(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def lookup(term: str) -> dict[str, Any]:
        seen.append({"term": term})
        return {"term": term, "meaning": "adds two numbers"}

    tool = PythonToolSpec("tests:lookup", lookup, "look a term up", {"term": "string"})
    result = run(write(tmp_path, "read, mcp:glossary"), [
        {"tool": "mcp:glossary", "args": {"term": "add"}},
        {"verdict": "ok", "notes": "looked up"},
    ], tools={"mcp:glossary": tool})
    assert result.exit_code == 0, result.error
    assert seen == [{"term": "add"}]
    [event] = events(result, "tool")
    assert event["kind"] == "external" and "adds two numbers" in event["output"]
    assert event["provenance"] == ["tool:mcp:glossary"]


def test_keep_workspaces_keeps_the_folder(tmp_path: Path) -> None:
    result = run(write(tmp_path), [{"verdict": "ok", "notes": ""}], keep_workspaces=True)
    [call] = events(result, "call")
    kept = Path(call["agent"]["workspace"])
    try:
        assert (kept / MANIFEST).is_file() and (kept / "files" / "calc.py").is_file()
    finally:
        import shutil

        shutil.rmtree(kept)


def test_the_cli_refuses_commands_without_a_sandbox_when_asked(tmp_path: Path) -> None:
    write(tmp_path)
    (tmp_path / "i.yaml").write_text(
        "pattern: agent.prose.md\nwith:\n  reviewer: fast\ninputs:\n  task: t\n"
        "  files: {a.py: 'x = 1'}\ntools:\n  cli:pytest:\n    command: [python, -m, pytest, "
        "'{path}']\n", encoding="utf-8")
    (tmp_path / "s.yaml").write_text("slots:\n  reviewer:\n    - {verdict: ok, notes: ''}\n",
                                     encoding="utf-8")
    done = run_prose("run", "i.yaml", "--script", "s.yaml", "--require-sandbox", "-q",
                     cwd=tmp_path, env={"PROSE_NO_SANDBOX": "1"})
    assert done.code == 2, done.output
    assert "R032" in done.output and "no OS sandbox" in done.output
    again = run_prose("run", "i.yaml", "--script", "s.yaml", "-q", "--trace", "t.jsonl",
                      cwd=tmp_path, env={"PROSE_NO_SANDBOX": "1"})
    assert again.code == 0, again.output
    call = next(json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()
                if json.loads(line)["type"] == "call")
    assert call["agent"]["isolation"] == "context-only"


def test_the_real_litellm_path_carries_tool_calls(tmp_path: Path) -> None:
    """An OpenAI-compatible server (loopback) asks for tools; LiteLLM's router carries the
    `tools=` offer, the `tool_calls` and the tool results both ways."""
    from prose.llm import LLMConfig
    from tests.llm_server import FakeLLMServer, Reply

    path = write(tmp_path, "list, read")
    with FakeLLMServer() as server:
        server.enqueue(
            "stub",
            Reply(None, tool_calls=(("read", json.dumps({"path": "files/calc.py"})),)),
            Reply(None, tool_calls=(("list", "{}"), ("read", '{"path": "task.txt"}'))),
            Reply(json.dumps({"verdict": "FAIL", "notes": "subtracts"})),
        )
        config = LLMConfig.model_validate({
            "model_list": [{"model_name": "stub", "litellm_params": {
                "model": "openai/stub", "api_base": server.base_url, "api_key": "k"}}],
            "default_model": "stub", "retries": 0})
        result = asyncio.run(run_pattern(path, RunOptions(
            inputs={"task": "review the adder", "files": FILES}, llm_config=config,
            trace_path=tmp_path / "trace.jsonl")))
        bodies = [request.body for request in server.requests]
    assert result.exit_code == 0, result.error and result.error.format()
    assert result.value == {"verdict": "FAIL", "notes": "subtracts"}
    assert len(bodies) == 3
    offered = [tool["function"]["name"] for tool in bodies[0]["tools"]]
    assert offered == ["list", "read"]
    second = bodies[1]["messages"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "read"
    assert second[-1] == {"role": "tool", "content": FILES["calc.py"],
                          "tool_call_id": "call_0"}
    third = bodies[2]["messages"]
    assert [m["role"] for m in third[-3:]] == ["assistant", "tool", "tool"]
    assert third[-1]["content"] == "review the adder"
    assert [e["tool"] for e in events(result, "tool")] == ["read", "list", "read"]


def test_resume_replays_finished_tool_results_without_running_them(tmp_path: Path) -> None:
    counted: list[str] = []

    def count(text: str = "") -> str:
        counted.append(text)
        return f"counted {len(counted)}"

    tools: dict[str, Provider] = {
        "cli:token": CommandSpec(("python", "-c", "import uuid; print(uuid.uuid4())"), {}),
        "mcp:counter": PythonToolSpec("tests:count", count, None, {"text": "string"}),
    }
    path = write(tmp_path, "read, cli:token, mcp:counter")
    asking = [{"tool": "cli:token"}, {"tool": "mcp:counter", "args": {"text": "once"}}]
    first = run(path, asking, tools=tools)
    assert first.exit_code == 1 and first.error is not None and first.error.code == "R013"
    before = events(first, "tool")
    assert counted == ["once"] and len(before) == 2
    (tmp_path / "first.jsonl").write_bytes((tmp_path / "trace.jsonl").read_bytes())
    (tmp_path / "first.jsonl.sha256").write_bytes((tmp_path / "trace.jsonl.sha256").read_bytes())
    again = run(path, [*asking, {"verdict": "ok", "notes": "resumed"}], tools=tools,
                resume_trace=tmp_path / "first.jsonl")
    assert again.exit_code == 0, again.error and again.error.format()
    assert again.value == {"verdict": "ok", "notes": "resumed"}
    after = events(again, "tool")
    assert [e["replayed"] for e in after] == [True, True]
    assert [e["output"] for e in after] == [e["output"] for e in before]  # the same token
    assert counted == ["once"]  # the Python tool was not called again
