"""Reuse: a nested pattern's inputs renamed in its binding, and `prose lint INSTANCE.yaml`
checking an instance against its pattern (and each call of a nested pattern) as the run
would."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_prose_in_process

OUTER = """---
name: outer
kind: pattern
version: 0.1.0
---

# Outer

A writer drafts; a nested review pattern checks the draft.

### Slots

- `writer` (primary)
  - requires: brief
  - ensures: draft text
- `review`
  - requires: draft
  - ensures: verdict text

### Parameters

- `brief`: string -- what to write about

### Delegation

```prose
let draft = call writer
  brief: brief
let verdict = call review
  draft: draft
return { result: verdict }
```
"""

INNER = """---
name: inner-review
kind: pattern
version: 0.1.0
---

# Inner review

A critic reviews a text.

### Slots

- `critic` (primary)
  - requires: text
  - ensures: verdict text

### Parameters

- `text`: string -- the text to review

### Delegation

```prose
let verdict = call critic
  text: text
return { result: verdict }
```
"""


def _project(tmp_path: Path, rename: str) -> Path:
    (tmp_path / "outer.prose.md").write_text(OUTER)
    (tmp_path / "inner.prose.md").write_text(INNER)
    instance = tmp_path / "outer.yaml"
    instance.write_text(
        "pattern: outer.prose.md\n"
        "with:\n"
        "  writer: fast\n"
        f"  review: {{ pattern: inner.prose.md, with: {{ critic: fast }}{rename} }}\n"
        "inputs:\n"
        "  brief: rate limiters\n"
    )
    (tmp_path / "outer.script.yaml").write_text(
        "slots:\n  writer: [the draft]\n  review.critic: [looks fine]\n"
    )
    return instance


def test_a_call_passing_an_input_the_nested_pattern_does_not_take_lints_at_the_call(
    tmp_path: Path,
) -> None:
    instance = _project(tmp_path, "")
    result = run_prose_in_process("lint", "--format", "json", str(instance), cwd=tmp_path)
    assert result.code == 1, result.stdout + result.stderr
    found = json.loads(result.stdout)
    problems = [(d["code"], d["line"], d["message"]) for d in found["diagnostics"]]
    assert ("PS221", 30, "the call passes `draft` to the nested pattern `inner-review` of "
            "`review`, which takes no input `draft`") in problems
    assert any(code == "PS221" and "does not pass `text`" in message
               for code, _, message in problems)
    assert any("rename: {draft: text}" in d["help"] for d in found["diagnostics"])
    assert all(d["path"].endswith("outer.prose.md")
               for d in found["diagnostics"] if d["code"] == "PS221")
    # the run finds the same mismatch, only later: at the call (R012)
    ran = run_prose_in_process("run", str(instance), "--script",
                               str(tmp_path / "outer.script.yaml"), cwd=tmp_path)
    assert ran.code != 0 and "R012 input `draft` is not a parameter" in ran.stderr


def test_a_rename_in_the_binding_lints_clean_and_runs(tmp_path: Path) -> None:
    instance = _project(tmp_path, ", rename: { draft: text }")
    result = run_prose_in_process("lint", str(instance), cwd=tmp_path)
    assert result.code == 0, result.stdout + result.stderr
    ran = run_prose_in_process("run", str(instance), "--script",
                               str(tmp_path / "outer.script.yaml"), cwd=tmp_path)
    assert ran.code == 0, ran.stderr
    assert "looks fine" in ran.stdout


def test_a_rename_to_a_name_the_nested_pattern_does_not_take_is_refused(tmp_path: Path) -> None:
    instance = _project(tmp_path, ", rename: { draft: txt }")
    result = run_prose_in_process("lint", str(instance), cwd=tmp_path)
    assert result.code == 1
    assert "PS220" in result.stdout
    assert "`rename` sends `draft` to `txt`, which is not an input of pattern `inner-review`; " \
           "did you mean `text`?" in result.stdout
