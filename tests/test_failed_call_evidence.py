"""Issue 19: a failed call keeps its evidence, and a reply cut at the token cap is said to be.

The real model path (run_pattern -> RouterClient -> LiteLLM -> the loopback server of
`llm_server.py`): a reply that fails its schema twice used to be recorded with output null,
usage 0 and nothing of what the model said; a reply stopped by `max_tokens` passed silently.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import FakeLLMServer, Reply

from prose.llm import LLMConfig
from prose.runtime import RunOptions, RunResult, run_pattern
from prose.runtime.progress import Progress
from prose.runtime.trace import read_events

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

PATTERN = """---
name: scored
kind: pattern
version: 0.1.0
---

# Scored

One call with a schema.

### Slots

- `scorer`
  - ensures: a score

### Invariants

- none

### Parameters

- `task`: string -- the task

### Returns

- `result`: the score

### Delegation

```prose
let s = call scorer
  task: task
  schema: { score: "number" }
return { result: s }
```
"""


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


def run(tmp_path: Path, server: FakeLLMServer, progress: Progress | None = None) -> RunResult:
    pattern = tmp_path / "scored.prose.md"
    pattern.write_text(PATTERN)
    config = LLMConfig(
        model_list=[{"model_name": "m", "litellm_params": {
            "model": "openai/fake", "api_base": server.base_url, "api_key": "sk-test-0000"}}],
        default_model="m", retries=0)
    return asyncio.run(run_pattern(pattern, RunOptions(
        inputs={"task": "score it"}, llm_config=config, default_model="m",
        trace_path=tmp_path / "trace.jsonl", project_dir=tmp_path, progress=progress)))


def test_a_schema_failure_keeps_the_reply_the_tokens_and_the_latency(
        tmp_path: Path, server: FakeLLMServer) -> None:
    server.enqueue("fake", Reply("not json at all", 30, 7), Reply("still not json", 40, 9))
    result = run(tmp_path, server)
    assert result.exit_code == 4
    [call] = [e for e in read_events(tmp_path / "trace.jsonl") if e["type"] == "call"]
    assert call["error"]["kind"] == "schema"
    assert call["output"] is None
    assert call["reply"] == "still not json"  # the last reply, as the model gave it
    assert call["usage"] == {"prompt_tokens": 70, "completion_tokens": 16, "total_tokens": 86}
    assert call["latency_ms"] > 0
    assert call["requests"] == 2
    assert result.totals["prompt_tokens"] == 70  # the budget counts what was billed


def test_a_reply_cut_at_the_token_cap_is_recorded_and_warned(
        tmp_path: Path, server: FakeLLMServer) -> None:
    server.enqueue("fake", Reply('{"score": 3}', finish_reason="length"))
    stream = io.StringIO()
    result = run(tmp_path, server, Progress(stream=stream, live=False))
    assert result.exit_code == 0
    [call] = [e for e in read_events(tmp_path / "trace.jsonl") if e["type"] == "call"]
    assert call["finish_reason"] == "length"
    assert "stopped at the token cap" in stream.getvalue()


def test_a_plain_stop_records_no_finish_reason(tmp_path: Path, server: FakeLLMServer) -> None:
    server.enqueue("fake", Reply('{"score": 3}'))
    result = run(tmp_path, server)
    assert result.exit_code == 0
    [call] = [e for e in read_events(tmp_path / "trace.jsonl") if e["type"] == "call"]
    assert call["finish_reason"] is None and call["reply"] is None
