"""People in `prose batch` (docs/people.md): rows that wait, answered, then resumed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_people import _events, prose

GATE = """---
name: review-gate
kind: pattern
version: 0.1.0
---

# Review gate

A person reviews the rows that need it.

### Slots

- `reviewer`
  - ensures: verdict object with `ok` (boolean)

### Parameters

- `task_brief`: string -- the change
- `needs_review`: boolean -- whether a person must look

### Returns

- `result`: whether the change may go

### Delegation

```prose
if needs_review:
  let verdict = call reviewer
    task_brief: task_brief
  return { result: verdict.ok }
return { result: true }
```
"""


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_rows_that_wait_are_answered_and_resumed_in_input_order(tmp_path: Path) -> None:
    (tmp_path / "gate.prose.md").write_text(GATE)
    (tmp_path / "gate.yaml").write_text(
        "pattern: gate.prose.md\nwith:\n  reviewer: { person: { name: review desk, "
        "may_answer: [kim] } }\n")
    (tmp_path / "rows.jsonl").write_text("".join(
        json.dumps({"task_brief": f"change {i}", "needs_review": i in (1, 3)}) + "\n"
        for i in range(5)))
    first = prose(tmp_path, "batch", "gate.yaml", "--inputs", "rows.jsonl", "--out", "out.jsonl")
    assert first.returncode == 6, first.stderr
    assert "3 ok, 0 failed, 0 stopped by a budget, 2 waiting for a person" in first.stderr
    rows = _rows(tmp_path / "out.jsonl")
    assert [r["status"] for r in rows] == ["ok", "waiting", "ok", "waiting", "ok"]

    listed = prose(tmp_path, "pending", "out.traces")
    assert listed.stdout.count("reviewer (review desk; may answer: kim): waiting") == 2
    traces = [str(r["trace"]) for r in rows if r["status"] == "waiting"]
    for trace in traces:
        assert f"answer: prose answer {trace} CALL" in listed.stdout
    refused = prose(tmp_path, "answer", traces[0], "reviewer", "--as", "kim",
                    "--value", '{"ok": "yes"}')
    assert refused.returncode == 1 and "$.ok: expected boolean" in refused.stderr
    for trace, verdict in zip(traces, (False, True), strict=True):
        done = prose(tmp_path, "answer", trace, "reviewer", "--as", "kim",
                     "--value", json.dumps({"ok": verdict}))
        assert done.returncode == 0, done.stderr

    resumed = prose(tmp_path, "batch", "gate.yaml", "--inputs", "rows.jsonl", "--out",
                    "out.jsonl", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    rows = _rows(tmp_path / "out.jsonl")
    assert [r["row"] for r in rows] == [0, 1, 2, 3, 4]
    assert [r["status"] for r in rows] == ["ok"] * 5
    assert [r["result"] for r in rows] == [{"result": v} for v in (True, False, True, True, True)]
    assert "no run is waiting" in prose(tmp_path, "pending", "out.traces").stdout
    for trace in traces:
        [answer] = [e for e in _events(tmp_path / trace) if e.get("slot") == "reviewer"
                    and not e.get("error")]
        assert answer["answered"]["by"] == "kim"  # type: ignore[index]
        assert prose(tmp_path, "audit", trace).returncode == 0
