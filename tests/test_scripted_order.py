"""Scripted responses follow program order, even for parallel calls to one slot."""

from __future__ import annotations

import asyncio
from pathlib import Path

from prose.llm.script import Script
from prose.runtime import RunOptions, run_pattern

PATTERN = Path(__file__).parent / "fixtures" / "runtime" / "parallel-map.prose.md"


def test_parallel_calls_take_responses_in_input_order(tmp_path: Path) -> None:
    items = [f"item-{i}" for i in range(24)]
    for attempt in range(3):
        script = Script({"slot:mapper": [f"m{i}" for i in range(24)]})
        options = RunOptions(inputs={"items": items}, script=script, concurrency=8,
                             trace_path=tmp_path / f"trace-{attempt}.jsonl")
        result = asyncio.run(run_pattern(PATTERN, options))
        assert result.exit_code == 0, result.error
        assert result.value == {"result": [f"m{i}" for i in range(24)]}
        # Each call received its own item: the response matches the branch.
        sent = [call.messages[-1][1] for call in script.calls]
        assert sorted(sent) == sorted(f"## item\n{item}" for item in items)
