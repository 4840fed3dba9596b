"""`prose new`: scaffold a pattern file with an example instance, script and test.

The default skeleton is a worker/critic loop whose invariants are all in
checkable form, so it lints with no warnings, and whose example test passes
as written: edit from something that works. `--from` copies a library
pattern (and its examples, when the library has them) under a new name.
Nothing is ever overwritten: every target is checked before anything is
written.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from prose.errors import ProseError

NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
SUFFIX = ".prose.md"


class ScaffoldError(ProseError):
    """The scaffold cannot be written; `exit_code` 1 (would overwrite) or 2 (usage)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class Plan:
    """The files to write (path -> text), in order, and what could not be scaffolded."""

    files: dict[Path, str]
    notes: tuple[str, ...] = ()


def title_of(name: str) -> str:
    return " ".join(word.capitalize() for word in re.split(r"[-_]", name))


def default_dir(cwd: Path | None = None) -> Path:
    """`patterns/` under the working folder if it exists, else the working folder."""
    base = cwd or Path()
    return base / "patterns" if (base / "patterns").is_dir() else base


def examples_dir_for(pattern_dir: Path) -> Path:
    """`examples/` next to a `patterns/` folder, else inside the pattern folder."""
    if pattern_dir.resolve().name == "patterns":
        return Path(os.path.normpath(pattern_dir / ".." / "examples"))
    return pattern_dir / "examples"


def plan_new(name: str, directory: Path, examples: Path, source: str | None = None) -> Plan:
    """What `prose new NAME` writes; raises ScaffoldError for a bad name or source."""
    if not NAME.match(name):
        raise ScaffoldError(f"`{name}` is not a pattern name: use lower-case words joined by "
                            "`-` or `_`, e.g. `code-review`", exit_code=2)
    pattern_file = directory / f"{name}{SUFFIX}"
    relative = Path(os.path.relpath(pattern_file, examples)).as_posix()
    targets = {kind: examples / f"{name}{kind}" for kind in (".yaml", ".script.yaml", ".test.yaml")}
    if source is None:
        return Plan({
            pattern_file: SKELETON.replace("{name}", name).replace("{title}", title_of(name)),
            targets[".yaml"]: INSTANCE.replace("{pattern}", relative),
            targets[".script.yaml"]: SCRIPT,
            targets[".test.yaml"]: TEST.replace("{name}", name),
        })
    return _plan_copy(name, pattern_file, relative, targets, _source_file(source))


def _source_file(source: str) -> Path:
    path = Path(source)
    if path.is_file():
        return path
    from prose.resources import patterns_dir

    try:
        candidate = patterns_dir() / (source if source.endswith(SUFFIX) else f"{source}{SUFFIX}")
    except FileNotFoundError:
        candidate = None
    if candidate is None or not candidate.is_file():
        raise ScaffoldError(f"no pattern `{source}`: give a file or a library name "
                            "(`prose list` shows the library)", exit_code=2)
    return candidate


def _plan_copy(name: str, pattern_file: Path, relative: str, targets: dict[str, Path],
               source: Path) -> Plan:
    old = source.name.removesuffix(SUFFIX)
    text = source.read_text(encoding="utf-8")
    text = re.sub(r"^name:[ \t]*.*$", f"name: {name}", text, count=1, flags=re.M)
    text = re.sub(r"^# .*$", f"# {title_of(name)}", text, count=1, flags=re.M)
    files = {pattern_file: text}
    found = {kind: source.parent.parent / "examples" / f"{old}{kind}" for kind in targets}
    if all(path.is_file() for path in found.values()):
        instance = found[".yaml"].read_text(encoding="utf-8")
        files[targets[".yaml"]] = re.sub(r"^pattern:[ \t]*.*$", f"pattern: {relative}", instance,
                                         count=1, flags=re.M)
        files[targets[".script.yaml"]] = found[".script.yaml"].read_text(encoding="utf-8")
        test = found[".test.yaml"].read_text(encoding="utf-8")
        for kind in (".script.yaml", ".yaml"):
            test = re.sub(rf"(?<![\w.-]){re.escape(old + kind)}", name + kind, test)
        files[targets[".test.yaml"]] = test
        return Plan(files)
    files[targets[".yaml"]] = _generic_instance(source, relative)
    return Plan(files, (f"the library has no example script and test for `{old}`: wrote an "
                        "instance to fill in; add a script and a test (docs/testing.md)",))


def _generic_instance(source: Path, relative: str) -> str:
    """An instance binding every slot to a placeholder model, with every parameter listed."""
    from prose.spec import load_spec

    spec = load_spec(source.read_text(encoding="utf-8"), str(source)).spec
    lines = [f"pattern: {relative}", "with:"]
    slots = spec.slots if spec is not None else []
    lines += [f"  {slot.name}: {{ model: fast }}  # a router alias or LiteLLM model name"
              for slot in slots] or ["  {}"]
    parameters = spec.parameters if spec is not None else []
    if not parameters:
        lines.append("inputs: {}")
    else:
        lines.append("inputs:")
        lines += [f"  {p.name}: \"\"  # {p.description or p.type or ''}".rstrip() for p in parameters]
    return "\n".join(lines) + "\n"


def write_plan(plan: Plan) -> list[Path]:
    """Write every file of `plan`; refuses (ScaffoldError, nothing written) if any exists."""
    existing = [path for path in plan.files if path.exists()]
    if existing:
        shown = ", ".join(os.path.normpath(path) for path in existing)
        them = "it" if len(existing) == 1 else "them"
        raise ScaffoldError(f"refusing to overwrite {shown}: remove {them} or choose another name")
    for path, text in plan.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(plan.files)


SKELETON = '''---
name: {name}
kind: pattern
version: 0.1.0
---

# {title}

A worker drafts an answer and a critic reviews it, round by round, until the critic finds no issues or the rounds run out.

### Description

The worker answers the brief; the critic checks the draft against the same
brief and returns a structured verdict. From the second round on the worker
also receives the critic's issues and revises. The loop stops at the first
verdict with no issues, or after `max_rounds` drafts; every round is recorded.

### Slots

- `worker` (primary)
  - requires: task_brief, critique (if not first round)
  - ensures: draft answering the brief
- `critic`
  - requires: task_brief, draft
  - ensures: verdict object with `issues` (string[]) and `no_issues_found` (boolean)

### Config

- `max_rounds` (integer, default: 3): the most drafts the worker may write

### Invariants

- `worker` sees only `task_brief`, `critique`
- `critic` sees only `task_brief`, `draft`
- every loop is bounded by `max_rounds`
- `history` only grows

### Shape

- `self`: alternate worker and critic, record every round, stop on a clean verdict
- `delegates`:
  - `worker`: write or revise the draft
  - `critic`: find what is wrong with the draft
- `prohibited`: editing the draft itself, or judging it without the critic

### Parameters

- `task_brief`: string -- what the worker should produce

### Returns

- `result`: the last draft
- `verdict`: the critic's last verdict
- `history`: one `{ round, draft, verdict }` entry per round

### Delegation

```prose
let draft = null
let critique = null
let verdict = { issues: [], no_issues_found: false }
let history = []

loop until verdict.no_issues_found (max: max_rounds) as round:
  draft = call worker
    task_brief: task_brief
    critique: critique

  verdict = call critic
    task_brief: task_brief
    draft: draft

  critique = verdict.issues
  record { round: round, draft: draft, verdict: verdict } in history

return { result: draft, verdict: verdict, history: history }
```

### Notes

Bind the worker and the critic to different models in the instance file when
the review should not share the worker's blind spots.
'''

INSTANCE = '''# Run: prose run THIS_FILE --script THE_SCRIPT (or bind real models and drop --script)
pattern: {pattern}
with:
  worker: { model: fast, prompt: "You write clear, complete answers." }
  critic: { model: strong, prompt: "You review drafts strictly against the brief." }
config:
  max_rounds: 3
inputs:
  task_brief: "Write a one-paragraph summary of a 20-minute outage of a public API."
'''

SCRIPT = '''# One response per call, in order: the critic rejects the first draft and accepts the second.
slots:
  worker:
    - "The API was down for a while."
    - "From 14:02 to 14:22 UTC every request to the public API failed after a bad configuration push; the push was rolled back, and a configuration check now gates deploys."
  critic:
    - { issues: ["No times, no cause and no fix are given."], no_issues_found: false }
    - { issues: [], no_issues_found: true }
'''

TEST = '''# prose test THIS_FILE (format: docs/testing.md)
name: {name} converges in two rounds
instance: {name}.yaml
script: {name}.script.yaml
expect:
  status: ok
  result:
    verdict: { issues: [], no_issues_found: true }
    history:
      - { round: 1, draft: "The API was down for a while." }
      - { round: 2, verdict: { no_issues_found: true } }
  calls: { worker: 2, critic: 2 }
'''
