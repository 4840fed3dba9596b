"""Issue 14.7: an empty model reply fails the call instead of becoming "" in the run.

`prose run`'s path (run_pattern -> RouterClient -> LiteLLM -> the loopback
server of `llm_server.py`): a mapper whose reply is empty used to give an ok
call with output "" that the reducer merged, and exit 0.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import FakeLLMServer, Raw, Reply

from prose.llm import LLMConfig
from prose.runtime import RunOptions, RunResult, run_pattern

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

PATTERN = """---
name: map-reduce
kind: pattern
version: 0.1.0
---

# Map reduce

Map each item, then reduce.

### Slots

- `mapper`
  - ensures: a summary
- `reducer`
  - ensures: the merged summary

### Config

- None.

### Invariants

- none

### Parameters

- `items`: list -- the items

### Returns

- `result`: the merged summary

### Delegation

```prose
let parts = for item in items:
  call mapper{retry}
    item: item
let merged = call reducer
  parts: parts
return {{ result: merged }}
```
"""

NULL_CONTENT = Raw(
    json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None},
                    "finish_reason": "stop",
                }
            ],
        }
    ).encode()
)


@pytest.fixture(scope="module")
def module_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


@pytest.fixture
def server(module_server: FakeLLMServer) -> FakeLLMServer:
    module_server.reset()
    return module_server


def run(tmp_path: Path, server: FakeLLMServer, retry: str = "") -> RunResult:
    path = tmp_path / "map-reduce.prose.md"
    path.write_text(PATTERN.format(retry=retry))
    params = {"api_base": server.base_url, "api_key": "sk-test"}
    config = LLMConfig(
        model_list=[{"model_name": "m", "litellm_params": {"model": "openai/fake", **params}}],
        default_model="m",
        retries=0,
    )
    options = RunOptions(inputs={"items": ["a", "b"]}, llm_config=config, write_trace=False)
    return asyncio.run(run_pattern(path, options))


def test_an_empty_mapper_reply_fails_the_run_before_the_reducer(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    server.enqueue("fake", Reply("summary of a"), NULL_CONTENT, Reply("merged"))
    result = run(tmp_path, server)
    assert result.exit_code == 4
    assert result.error is not None and result.error.kind == "empty-reply"
    assert "the call to `mapper` failed: no answer: the reply's content is null" in str(
        result.error.format()
    )
    assert len(server.requests) == 2  # the reducer was not called


def test_retry_gives_an_empty_reply_another_attempt(tmp_path: Path, server: FakeLLMServer) -> None:
    server.enqueue(
        "fake", Reply("summary of a"), NULL_CONTENT, Reply("summary of b"), Reply("merged")
    )
    result = run(tmp_path, server, retry="\n    retry: 1")
    assert result.exit_code == 0, result.error and result.error.format()
    assert result.value == {"result": "merged"}
    assert server.requests[-1].body["messages"][-1]["content"].count("summary of") == 2
