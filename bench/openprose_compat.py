"""How much of an OpenProse tree prose reads: the numbers of issue 15's acceptance.

    .venv/bin/python bench/openprose_compat.py /work/ref/openprose [--list] [--run]

Walks PATH for `*.prose.md` files and prints, per kind: how many files, how
many lint with no error, and the error codes that remain (with `--list`, every
file with an error and its first errors). With `--run`, it also runs every
`kind: function` program under skills/open-prose/examples with a scripted
model that answers every call with an object of the callee's Returns keys
(nothing in the tree is edited; a discretion condition the script does not
answer is answered false) and prints which ran and which did not, and why.
The ProseScript numbers (prosescript.md's examples) are
bench/openprose_prosescript.py's.

Not part of the test suite: it reads a checkout of another repository.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import tempfile
from pathlib import Path
from typing import Any


def lint_tree(root: Path, show: bool) -> None:
    from prose.check import lint_pattern
    from prose.diagnostics.model import Severity
    from prose.pattern_file import read_pattern

    files = sorted(root.rglob("*.prose.md"))
    per_kind: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    codes: collections.Counter[str] = collections.Counter()
    failing: list[tuple[str, list[str]]] = []
    for path in files:
        kind = "?"
        try:
            pattern = read_pattern(path)
            kind = (pattern.spec.kind if pattern.spec else None) or "?"
            errors = [
                f"{d.span.line}:{d.span.column} {d.code} {d.message}"
                for d in lint_pattern(pattern).diagnostics
                if d.severity is Severity.ERROR
            ]
        except Exception as error:  # a crash is a finding too
            errors = [f"crash {type(error).__name__}: {str(error)[:160]}"]
        per_kind[kind][0] += 1
        if errors:
            failing.append((str(path.relative_to(root)), errors))
            codes.update(item.split()[1] for item in errors)
        else:
            per_kind[kind][1] += 1
    total = len(files)
    clean = sum(ok for _, ok in per_kind.values())
    print(f"lint: {clean}/{total} files with no error ({100 * clean / max(total, 1):.1f}%)")
    for kind, (count, ok) in sorted(per_kind.items()):
        print(f"  {kind:15} {ok:4}/{count:<4} clean")
    print("  error codes: " + ", ".join(f"{code} {n}" for code, n in codes.most_common()))
    if show:
        for name, errors in failing:
            print(f"  {name}")
            for item in errors[:3]:
                print(f"      {item}")


def run_examples(root: Path) -> None:
    """Run every function under skills/open-prose/examples with a scripted model."""
    from click.testing import CliRunner

    from prose.cli.main import cli
    from prose.pattern_file import read_pattern

    examples = sorted((root / "skills/open-prose/examples").rglob("*.prose.md"))
    ran: list[str] = []
    failed: list[str] = []
    runner = CliRunner()
    for path in examples:
        pattern = read_pattern(path)
        spec = pattern.spec
        if spec is None or spec.kind != "function":
            continue
        script, inputs = _script_for(pattern)
        conditions: list[str] = []
        for _ in range(8):  # a discretion condition the script does not answer: answer false
            result = _run_one(runner, cli, path, script, conditions, inputs)
            asked = re.search(r"no condition answer left for `(.*?)`", result.output or "")
            if result.exit_code == 0 or asked is None or asked.group(1) in conditions:
                break
            conditions.append(asked.group(1))
        name = str(path.relative_to(root / "skills/open-prose/examples"))
        if result.exit_code == 0:
            ran.append(name)
        else:
            why = (result.stderr or result.output or repr(result.exception)).strip().splitlines()
            failed.append(f"{name}: exit {result.exit_code}: {why[-1] if why else ''}"[:240])
    print(f"examples: {len(ran)} functions run with a scripted model, {len(failed)} do not")
    for name in ran:
        print(f"  ran  {name}")
    for item in failed:
        print(f"  FAIL {item}")


def _run_one(runner: Any, cli: Any, path: Path, script: str, conditions: list[str],
             inputs: list[str]) -> Any:
    import json

    with tempfile.TemporaryDirectory() as folder:
        script_path = Path(folder) / "script.yaml"
        extra = "".join(f"  {json.dumps(text)}: [false, false, false]\n" for text in conditions)
        script_path.write_text(script + ("conditions:\n" + extra if extra else ""),
                               encoding="utf-8")
        args = ["run", str(path), "--script", str(script_path), "--json", "-q",
                "--trace", str(Path(folder) / "trace.jsonl")]
        for name in inputs:
            args += ["--input", f"{name}=sample {name}"]
        return runner.invoke(cli, args, catch_exceptions=True)


def _script_for(pattern: Any) -> tuple[str, list[str]]:
    """A script answering every slot (callees included) with its Returns keys, 5 times each."""
    import json

    from prose.contracts import callee_spec

    spec = pattern.spec
    lines = ["slots:"]
    for slot in spec.slots:
        callee = callee_spec(spec, slot.name)
        keys = [key.name for key in callee.returns] if callee is not None else []
        reply: Any = {key: f"scripted {key}" for key in keys} or f"scripted {slot.name}"
        lines.append(f"  {json.dumps(slot.name)}:")
        lines += [f"    - {json.dumps(reply)}"] * 5
    inputs = [p.name for p in spec.parameters if not p.optional]
    return "\n".join(lines) + "\n", inputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--list", action="store_true", help="list every file with an error")
    parser.add_argument("--run", action="store_true", help="run the examples' functions")
    options = parser.parse_args()
    lint_tree(options.path, options.list)
    if options.run:
        run_examples(options.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
