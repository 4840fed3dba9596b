"""How much of OpenProse's ProseScript prose reads (issue 15, the ProseScript half).

    .venv/bin/python bench/openprose_prosescript.py /work/ref/openprose [--list]

Prints:

1. the ```prose examples of skills/open-prose/prosescript.md: how many parse as
   programs, and how many of the others are fragments that parse in their
   context (a run of headers such as `if C:` or `parallel ("first"):` shown
   without bodies: each with a one-statement body; a run of `name: value`
   lines: as the properties of a `session`). A fragment is counted apart,
   never as a program;
2. every ```prose block of every markdown file under PATH: how many parse,
   with the first error of each one that does not (`--list` prints them all);
3. of the blocks that parse: how many `prose fmt` writes back to the same
   program (the AST of the formatted text equals the original's).

Not part of the test suite: it reads a checkout of another repository.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

BLOCK = re.compile(r"^```prose\n(.*?)^```", re.M | re.S)
HEADER_START = re.compile(r"(if|elif|else|parallel|loop|for|repeat|choice|try|catch|finally)\b")
PROPERTY = re.compile(r"^\s*[A-Za-z_][\w-]*\s*:\s*\S")


def fragment_programs(block: str) -> list[str] | None:
    """The programs a fragment stands for, or None when the block is no fragment."""
    lines = [line for line in block.splitlines() if line.strip()]
    if not lines:
        return None
    if all(PROPERTY.match(line) for line in lines):
        return ['session "a fragment"\n' + "".join(f"  {line.strip()}\n" for line in lines)]
    # Headers shown without bodies; a `***` condition may run over several lines.
    chunks: list[list[str]] = []
    for line in lines:
        if line[0].isspace() or line.startswith("***"):
            if not chunks:
                return None
            chunks[-1].append(line)
        else:
            chunks.append([line])
    if not all(HEADER_START.match(chunk[0]) and chunk[-1].rstrip().endswith(":")
               for chunk in chunks):
        return None
    return ["\n".join(chunk) + "\n  continue\n" for chunk in chunks]


def parses(source: str, name: str) -> str | None:
    """None if `source` parses, else the first problem."""
    from prose.errors import ProseSyntaxError
    from prose.syntax.parser import parse_program

    try:
        parse_program(source, name)
    except ProseSyntaxError as error:
        return error.problems[0].message
    except Exception as error:  # a crash is a finding too
        return f"crash {type(error).__name__}: {error}"
    return None


def reference_examples(root: Path) -> None:
    reference = root / "skills" / "open-prose" / "prosescript.md"
    if not reference.is_file():
        print("no skills/open-prose/prosescript.md under", root)
        return
    blocks = BLOCK.findall(reference.read_text(encoding="utf-8"))
    programs = fragments = 0
    bad: list[str] = []
    for index, block in enumerate(blocks, 1):
        problem = parses(block, f"example {index}")
        if problem is None:
            programs += 1
            continue
        parts = fragment_programs(block)
        if parts is not None and all(parses(part, f"example {index}") is None for part in parts):
            fragments += 1
            continue
        bad.append(f"example {index}: {problem}")
    print(f"prosescript.md: {len(blocks)} examples: {programs} parse as programs, "
          f"{fragments} are fragments that parse in context, {len(bad)} do not parse")
    for item in bad:
        print("  " + item)


def every_block(root: Path, show: bool) -> None:
    from prose.syntax.format import format_program
    from prose.syntax.parser import parse_program

    total = ok = same = 0
    bad: list[str] = []
    changed: list[str] = []
    for path in sorted(root.rglob("*.md")):
        if "node_modules" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in BLOCK.finditer(text):
            total += 1
            where = f"{path.relative_to(root)}:{text[: match.start()].count(chr(10)) + 2}"
            block = match.group(1)
            problem = parses(block, where)
            if problem is not None:
                parts = fragment_programs(block)
                if parts is None or any(parses(part, where) for part in parts):
                    bad.append(f"{where}: {problem}")
                continue
            ok += 1
            program = parse_program(block, where)
            again = parse_program(format_program(program), where)
            if again.body == program.body:
                same += 1
            else:
                changed.append(where)
    print(f"every ```prose block under {root}: {total} blocks, {ok} parse, "
          f"{total - ok - len(bad)} fragments parse in context, {len(bad)} do not parse")
    for item in bad if show else bad[:20]:
        print("  " + item)
    if not show and len(bad) > 20:
        print(f"  ... {len(bad) - 20} more (--list)")
    print(f"prose fmt keeps the program of {same} of the {ok} that parse")
    for item in changed:
        print("  changed: " + item)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="a checkout of github.com/openprose/prose")
    parser.add_argument("--list", action="store_true", help="every block that does not parse")
    args = parser.parse_args(argv)
    if not args.path.is_dir():
        print(f"{args.path}: not a folder", file=sys.stderr)
        return 2
    reference_examples(args.path)
    every_block(args.path, args.list)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
