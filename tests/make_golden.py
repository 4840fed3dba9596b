"""Regenerates the golden AST files. Run: python tests/make_golden.py

Golden files are never edited by hand: change the parser or the fixture, run
this, and review the diff.
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
    relative = source.relative_to(ROOT).as_posix()
    program = parse(source.read_text(encoding="utf-8"), relative)
    return json.dumps(dump(program), indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for source in inputs():
        target = golden_path(source)
        wanted.add(target)
        target.write_text(render(source), encoding="utf-8")
    for stale in GOLDEN.glob("*.json"):
        if stale not in wanted:
            stale.unlink()
    print(f"wrote {len(wanted)} golden files to {GOLDEN.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
