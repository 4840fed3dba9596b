"""`prose batch` over a pattern whose slots have tools (docs/agents.md, docs/batch.md).

The instance file's `tools:` go to every row: each row's agent asks (through a loopback
OpenAI-compatible server and LiteLLM) for the declared command, which runs for real in
that row's own workspace, then answers. A mismatch between declared and provided tools,
and `--require-sandbox` without a sandbox, stop the batch before any row runs.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from prose.cli.main import cli
from prose.runtime.sandbox import NO_SANDBOX_ENV, isolation_mode
from prose.runtime.trace import read_events
from tests.llm_server import FakeLLMServer, Reply

PATTERN = """---
name: count-lines
kind: pattern
version: 0.1.0
---

# Count lines

An agent counts the lines of a text with a declared command.

### Slots

- `counter` (primary)
  - requires: text
  - ensures: count object with `lines` (integer)
  - tools: read, cli:wc

### Parameters

- `text`: string -- the text

### Delegation

```prose
let counted = call counter
  text: text
return counted
```
"""


def project(tmp_path: Path, server: FakeLLMServer, tools: str) -> Path:
    (tmp_path / "count.prose.md").write_text(PATTERN, encoding="utf-8")
    (tmp_path / "count.yaml").write_text(
        f"pattern: count.prose.md\nwith:\n  counter: stub\n{tools}", encoding="utf-8")
    (tmp_path / "prose.yaml").write_text(textwrap.dedent(f"""
        model_list:
          - model_name: stub
            litellm_params: {{model: openai/stub, api_base: "{server.base_url}", api_key: sk-t}}
        default_model: stub
        retries: 0
        timeout_s: 60
        """), encoding="utf-8")
    with (tmp_path / "rows.jsonl").open("w", encoding="utf-8") as handle:
        for text in ("one\ntwo\n", "a\nb\nc\nd\n"):
            handle.write(json.dumps({"text": text}) + "\n")
    return tmp_path


WC = "tools:\n  cli:wc:\n    command: [wc, -l, text.txt]\n"


def batch(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return CliRunner().invoke(cli, ["batch", "count.yaml", "--inputs", "rows.jsonl",
                                        "--out", "out.jsonl", "--concurrency", "1", *args],
                                  env=env)
    finally:
        os.chdir(cwd)


def test_each_row_s_agent_runs_the_declared_command_in_its_own_workspace(
        tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        project(tmp_path, server, WC)
        server.enqueue("stub",
                       Reply(None, tool_calls=(("cli__wc", "{}"),)), Reply('{"lines": 2}'),
                       Reply(None, tool_calls=(("cli__wc", "{}"),)), Reply('{"lines": 4}'))
        done = batch(tmp_path, "--json")
        bodies = [request.body for request in server.requests]
    assert done.exit_code == 0, done.output
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [line["status"] for line in lines] == ["ok", "ok"]
    # Rows run side by side and take the stub's replies in arrival order, so which row
    # asks for the tool twice is not fixed; but each tool call counts its own row's text,
    # in its own workspace, and its result goes back to that row's model.
    assert sorted(line["result"]["lines"] for line in lines) == [2, 4]
    assert all(b["tools"][1]["function"]["name"] == "cli__wc" for b in bodies)
    expected = {0: "2", 1: "4"}
    tools = []
    for line in lines:
        events = read_events(tmp_path / line["trace"])
        for tool in (e for e in events if e["type"] == "tool"):
            assert tool["isolation"] == isolation_mode() and tool["error"] is None
            assert tool["output"].split()[3] == expected[line["row"]], tool["output"]
            tools.append(tool)
    assert len(tools) == 2
    sent = "".join(json.dumps(b["messages"]) for b in bodies)
    assert sum(sent.count(f"{n} text.txt") for n in ("2", "4")) >= 2


def test_a_tool_the_instance_does_not_give_stops_the_batch_before_any_row(
        tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        project(tmp_path, server, "")
        done = batch(tmp_path)
        assert server.requests == []
    assert done.exit_code == 1
    assert "PS193 slot `counter` declares the tool `cli:wc`" in done.output
    assert not (tmp_path / "out.jsonl").exists()


def test_a_pattern_with_tools_and_no_instance_stops_the_batch_with_r030(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        project(tmp_path, server, WC)
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            done = CliRunner().invoke(cli, ["batch", "count.prose.md", "--inputs", "rows.jsonl",
                                            "--out", "out.jsonl"])
        finally:
            os.chdir(cwd)
        assert server.requests == []
    assert done.exit_code == 1, done.output
    assert "R030" in done.output and "count.prose.md:16:18" in done.output
    assert "declares the tool `cli:wc`" in done.output


def test_require_sandbox_without_one_stops_the_batch_with_exit_2(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        project(tmp_path, server, WC)
        done = batch(tmp_path, "--require-sandbox", env={NO_SANDBOX_ENV: "1"})
        assert server.requests == []
    assert done.exit_code == 2, done.output
    assert "--require-sandbox" in done.output and not (tmp_path / "out.jsonl").exists()
