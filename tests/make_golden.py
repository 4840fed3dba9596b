"""Regenerates the golden AST files. Run: python tests/make_golden.py [--check]

Golden files are never edited by hand: change the parser or the fixture, run
this, and review the diff. The goldens of the library (`patterns--*.json`) hold
the markdown line of every node of a `patterns/*.prose.md` file, so editing a
library pattern changes its golden too: run this after such an edit as well.
Each golden says so in its first key, `generated`. `--check` writes nothing,
lists the goldens that differ from what this would write, and exits 1 if any do.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from prose.syntax import parse  # noqa: E402
from prose.syntax.dump import dump  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "syntax"
COMMAND = "python tests/make_golden.py"


def inputs() -> list[Path]:
    """Every file with a golden AST."""
    fixtures = ROOT / "tests" / "fixtures"
    return sorted(
        [
            *(fixtures / "syntax").glob("*.prose"),
            *(fixtures / "seeds").glob("*.prose.md"),
            *(ROOT / "patterns").glob("*.prose.md"),
        ]
    )


def golden_path(source: Path) -> Path:
    group = source.parent.name
    return GOLDEN / f"{group}--{source.name}.json"


def render(source: Path) -> str:
    """The golden of `source`: its AST as JSON, under a note of where it comes from."""
    relative = source.relative_to(ROOT).as_posix()
    program = parse(source.read_text(encoding="utf-8"), relative)
    note = f"by `{COMMAND}` from {relative}; regenerate it after editing that file, never by hand"
    return json.dumps({"generated": note, **dump(program)}, indent=1, ensure_ascii=False) + "\n"


def stale() -> list[Path]:
    """The goldens that are missing, differ from `render`, or have no source any more."""
    wanted = {golden_path(source): source for source in inputs()}
    found = [target for target, source in wanted.items()
             if not target.is_file() or target.read_text(encoding="utf-8") != render(source)]
    return found + sorted(set(GOLDEN.glob("*.json")) - set(wanted))


def main() -> None:
    if sys.argv[1:] == ["--check"]:
        found = stale()
        for path in found:
            print(f"stale: {path.relative_to(ROOT)}")
        if found:
            raise SystemExit(f"{len(found)} golden file(s) out of date: run `{COMMAND}`")
        print("every golden file is current")
        return
    GOLDEN.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for source in inputs():
        target = golden_path(source)
        wanted.add(target)
        target.write_text(render(source), encoding="utf-8")
    for old in GOLDEN.glob("*.json"):
        if old not in wanted:
            old.unlink()
    print(f"wrote {len(wanted)} golden files to {GOLDEN.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
