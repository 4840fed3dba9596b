"""`prose lint`, `prose rules` and `prose explain`: output, formats and exit codes.

The first test runs `prose lint` in a new process, as a user does; the others call
the same command in this process (`run_prose_in_process`).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.conftest import ROOT, run_prose, run_prose_in_process

LEAKY = """---
name: leaky
kind: pattern
version: 0.1.0
---

# Leaky

A proposer that is shown the attack.

### Slots

- `proposer`
  - requires: task_brief
  - ensures: proposal text
- `adversary`
  - requires: proposal, task_brief
  - ensures: attack on the proposal

### Invariants

- `proposer` is unaware of `adversary`

### Parameters

- `task_brief`: string -- the brief

### Returns

- `result`: both outputs

### Delegation

```prose
let proposal = call proposer
  task_brief: task_brief

let attack = call adversary
  task_brief: task_brief
  proposal: proposal

let revised = call proposer
  task_brief: "{task_brief} -- answer this: {attack}"

return { result: { proposal: revised, attack: attack } }
```
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_library_lints_clean_with_invariant_coverage() -> None:
    result = run_prose("lint", "patterns/")
    assert result.code == 0, result.output
    assert "[error]" not in result.stdout and "[warning]" not in result.stdout
    assert "invariants: " in result.stdout and " checked, " in result.stdout


def test_leak_is_an_error_with_the_path(tmp_path: Path) -> None:
    path = write(tmp_path, "leaky.prose.md", LEAKY)
    result = run_prose_in_process("lint", str(path))
    assert result.code == 1
    assert f"{path}:43:3: PH604 [error] `proposer` receives output of `adversary` through `task_brief`" in result.stdout
    assert "output of `adversary` produced here" in result.stdout
    concise = run_prose_in_process("lint", "--format", "concise", str(path))
    assert f"{path}:43:3: PH604 `proposer` receives output of `adversary`" in concise.stdout


def test_json_format(tmp_path: Path) -> None:
    path = write(tmp_path, "leaky.prose.md", LEAKY)
    result = run_prose_in_process("lint", "--format", "json", str(path))
    assert result.code == 1
    data = json.loads(result.stdout)
    first = data["diagnostics"][0]
    assert set(first) >= {"path", "line", "column", "end_line", "end_column", "code", "severity",
                          "category", "message"}
    assert data["summary"]["errors"] >= 1 and data["summary"]["files"] == 1
    assert {d["category"] for d in data["diagnostics"]} <= {
        "syntax", "spec", "names", "flow", "termination", "conditions", "contract",
        "information-hiding", "style"}


def test_sarif_validates_against_the_schema(tmp_path: Path) -> None:
    path = write(tmp_path, "leaky.prose.md", LEAKY)
    result = run_prose_in_process("lint", "--format", "sarif", str(path), "patterns/")
    log = json.loads(result.stdout)
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    assert log["runs"][0]["results"][0]["ruleId"].startswith("P")


def test_github_format(tmp_path: Path) -> None:
    path = write(tmp_path, "leaky.prose.md", LEAKY)
    result = run_prose_in_process("lint", "--format", "github", str(path))
    assert f"::error file={path},line=43,col=3" in result.stdout


def test_select_and_ignore(tmp_path: Path) -> None:
    path = write(tmp_path, "leaky.prose.md", LEAKY)
    assert run_prose_in_process("lint", "--ignore", "PH", str(path)).code == 0
    selected = run_prose_in_process("lint", "--format", "concise", "--select", "PH604", str(path))
    assert selected.code == 1 and "PH606" not in selected.stdout


def test_inline_suppression(tmp_path: Path) -> None:
    text = LEAKY.replace('  task_brief: "{task_brief} -- answer this: {attack}"',
                         '  task_brief: "{task_brief} -- answer this: {attack}"  # prose: ignore[PH604]')
    path = write(tmp_path, "leaky.prose.md", text)
    result = run_prose_in_process("lint", "--format", "concise", "--select", "PH604", str(path))
    assert result.code == 0, result.stdout


def test_input_errors(tmp_path: Path) -> None:
    assert run_prose_in_process("lint", str(tmp_path / "missing.prose.md")).code == 2
    empty = write(tmp_path, "empty.prose.md", "")
    result = run_prose_in_process("lint", "--format", "concise", str(empty))
    assert result.code == 1 and f"{empty}:1:1" in result.stdout
    broken = write(tmp_path, "broken.prose.md", LEAKY.replace("let attack = call adversary", "let attack = = call"))
    result = run_prose_in_process("lint", "--format", "concise", str(broken))
    assert result.code == 1 and f"{broken}:38:14: PS001" in result.stdout
    no_block = write(tmp_path, "noblock.prose.md", LEAKY.split("### Delegation")[0])
    result = run_prose_in_process("lint", "--format", "concise", str(no_block))
    assert result.code == 1 and "PS111" in result.stdout


def test_strict_profile_escalates_compat_rules(tmp_path: Path) -> None:
    seed = ROOT / "tests" / "fixtures" / "seeds" / "dialectic.prose.md"
    assert run_prose_in_process("lint", str(seed)).code == 0
    strict = run_prose_in_process("lint", "--profile", "strict", "--format", "concise", str(seed))
    assert strict.code == 1 and "PN104" in strict.stdout


def test_rules_listing_and_documentation() -> None:
    listing = run_prose_in_process("rules")
    assert listing.code == 0
    assert "PH604" in listing.stdout and "PS001" in listing.stdout
    doc = run_prose_in_process("rules", "PH604")
    assert doc.code == 0 and "## What it does" in doc.stdout and "## Use instead" in doc.stdout
    assert run_prose_in_process("rules", "NOPE").code == 2


def test_explain_shows_who_sees_what() -> None:
    result = run_prose_in_process("explain", "patterns/proposer-adversary.prose.md")
    assert result.code == 0
    lines = result.stdout.splitlines()
    proposer = lines.index(next(line for line in lines if "call `proposer`" in line))
    assert lines[proposer + 1].split() == ["task_brief", "carries", "no", "slot", "output"]
    assert "call `proposer`" not in lines[proposer + 2]
    assert "[checked, holds] `proposer` is unaware of `adversary`" in result.stdout
    data = json.loads(run_prose_in_process("explain", "--format", "json", "patterns/dialectic.prose.md").stdout)
    thesis = next(call for call in data["calls"] if call["slot"] == "thesis")
    assert {entry["name"] for entry in thesis["inputs"]} == {"task_brief", "prior_antithesis", "prompt"}
    assert all(inv["status"] in ("holds", "prose-only") for inv in data["invariants"])
    chart = run_prose_in_process("explain", "--mermaid", "patterns/dialectic.prose.md").stdout
    assert chart.startswith("flowchart LR") and "slot_thesis -->|prior_thesis| slot_antithesis" in chart


def test_explain_reports_violations(tmp_path: Path) -> None:
    path = write(tmp_path, "leaky.prose.md", LEAKY)
    result = run_prose_in_process("explain", str(path))
    assert "[checked, VIOLATED] `proposer` is unaware of `adversary`" in result.stdout
