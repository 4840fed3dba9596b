"""Generates large valid prose programs for the benchmarks."""

from __future__ import annotations

UNIT = '''let draft_{i} = call worker
  task: task_brief
  attempt: {i}
  prompt: "Write draft {i} for {{task_brief}}."
# keep the critic honest
repeat rounds as round:
  let verdict_{i} = call critic
    draft: draft_{i}
    schema: {{ accepted: "boolean", notes: "string" }}
  if verdict_{i}.accepted:
    break
  elif **the critic found only cosmetic issues**:
    record {{ round: round, notes: verdict_{i}.notes }} in history
  else:
    draft_{i} = call worker
      task: task_brief
      feedback: verdict_{i}.notes
let results_{i} = parallel for item, index in items ("any", count: 2):
  call reviewer
    item: item
    position: index
'''


def program(lines: int) -> str:
    """A program of about `lines` lines made of repeated realistic units."""
    head = "let history = []\nlet items = [1, 2, 3]\n"
    unit_lines = UNIT.count("\n")
    units = max(1, (lines - 2) // unit_lines)
    return head + "".join(UNIT.format(i=i) for i in range(units))
