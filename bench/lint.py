"""Lint speed: cold `prose lint patterns/`, a 40,000-line file, and the analysis alone.

Run: python bench/lint.py   (writes the `lint` section of docs/benchmarks.md)
Targets: cold lint of patterns/ < 0.3 s wall (median of 5); a 40,000-line
file < 5 s; the provenance analysis of every file in patterns/ < 0.1 s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import program
from bench.report import ROOT, best_of, median_command, stamp, write_section

HEADER = """---
name: bench
kind: pattern
version: 0.1.0
---

# Bench

A generated pattern for timing the linter.

### Slots

- `worker`
  - requires: task, feedback (if revising), attempt
  - ensures: draft text
- `critic`
  - requires: draft
  - ensures: verdict object with `accepted` (boolean), `notes` (string)
- `reviewer`
  - requires: item, position
  - ensures: review text

### Config

- `rounds` (integer, default: 2): rounds per unit

### Parameters

- `task_brief`: string -- the task

### Delegation

```prose
"""


def big_pattern(lines: int) -> str:
    body = program(lines).replace("task: task_brief", "task: task_brief")
    return HEADER + body + "return { result: history }\n```\n"


def main() -> None:
    from prose.check import lint_text
    from prose.check.flow import analyse

    python = sys.executable
    command = [python, "-c", "from prose.cli.main import main; main()", "lint", "patterns/"]
    cold = median_command(command, repeat=5)
    text = big_pattern(40_000)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.prose.md"
        path.write_text(text, encoding="utf-8")
        start = time.perf_counter()
        median_command([python, "-c", "from prose.cli.main import main; main()", "lint",
                        "--format", "concise", str(path)], repeat=1)
        big = time.perf_counter() - start
    files = sorted((ROOT / "patterns").glob("*.prose.md"))
    results = [lint_text(path.read_text(encoding="utf-8"), str(path)) for path in files]

    def analyse_all() -> None:
        for result in results:
            assert result.context is not None and result.program is not None
            analyse(result.context.decl, result.program)

    analysis = best_of(analyse_all)
    in_process = best_of(lambda: [lint_text(p.read_text(encoding="utf-8"), str(p)) for p in files])
    body = f"""## Lint

{stamp()}

| measure | value | target |
|---|---|---|
| cold `prose lint patterns/` ({len(files)} files), median of 5 | {cold:.3f} s | < 0.3 s |
| cold `prose lint` of a {text.count(chr(10)):,}-line pattern | {big:.2f} s | < 5 s |
| provenance analysis of every file in `patterns/` | {analysis * 1000:.1f} ms | < 100 ms |
| full lint of `patterns/` in process (warm) | {in_process * 1000:.1f} ms | |

Cold runs start a new Python process each time (imports included); the
analysis row times `prose.check.flow.analyse` alone, best of 5.
"""
    write_section("lint", body)
    print(body)


if __name__ == "__main__":
    main()
