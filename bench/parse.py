"""Parse throughput: a generated 10,000-line program, and every file in patterns/.

Run: python bench/parse.py   (writes the `parse` section of docs/benchmarks.md)
Target: >= 20,000 lines/s including positions and AST building.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import program
from bench.report import ROOT, best_of, stamp, write_section
from prose.syntax import parse, parse_program


def main() -> None:
    source = program(10_000)
    lines = source.count("\n")
    parse_program(source, "bench.prose")  # build the parser and warm the cache
    seconds = best_of(lambda: parse_program(source, "bench.prose"))
    files = sorted((ROOT / "patterns").glob("*.prose.md"))
    texts = [(str(path), path.read_text(encoding="utf-8")) for path in files]
    library = best_of(lambda: [parse(text, name) for name, text in texts])
    body = f"""## Parse

{stamp()}

| measure | value | target |
|---|---|---|
| generated program | {lines:,} lines | |
| parse + AST with positions | {seconds * 1000:.0f} ms | |
| throughput | {lines / seconds:,.0f} lines/s | >= 20,000 lines/s |
| every file in `patterns/` ({len(files)} files) | {library * 1000:.1f} ms | |

Best of 5 runs, in process, after one warm-up parse (the Lark grammar analysis
is cached on disk by Lark, so a cold process pays only for loading it).
"""
    write_section("parse", body)
    print(body)


if __name__ == "__main__":
    main()
