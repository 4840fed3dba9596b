"""Cold lint: `prose lint patterns/` in a new process, measured so that a busy machine
spoils it least (issue 36.6).

Run: python bench/cold_lint.py [RUNS]   (writes the `cold-lint` section of docs/benchmarks.md)
     python bench/cold_lint.py --print [RUNS]   (prints the table, writes nothing)
Target: 0.3 s wall on a quiet machine.

Wall time on a loaded machine measures the other processes as much as prose, so the
section leads with the child's CPU time (user + system, from `wait4`), which a busy
machine inflates far less, and with `-X importtime`'s cumulative import times of the
modules the lint path loads (the medians of RUNS runs each). Wall time and the load
average before and after are recorded beside them. Run it from the checkout to measure
(`PYTHONPATH=OTHER python bench/cold_lint.py --print` measures another checkout).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import ROOT, load_average, stamp, write_section

# What the `prose` console script runs (pyproject.toml's [project.scripts]).
# `-P`: the checkout is not put first on the path, so `PYTHONPATH=OTHER` measures OTHER.
COMMAND = [sys.executable, "-P", "-c", "from prose.cli.entry import main; main()", "lint",
           "patterns/"]
# Modules whose cumulative import time the section shows (what the lint path pays for).
# (`lark` and `pydantic` only if something brings them back: the parser runs from
# prose/syntax/standalone_parser.py, generated from the grammar.)
MODULES = ("prose.cli.main", "prose.cli.lint_cmd", "prose.spec.loader", "prose.spec.model",
           "pydantic", "prose.syntax.parser", "prose.syntax.standalone_parser", "lark",
           "prose.check", "click", "yaml")


def one_run(importtime: bool = False) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, its stderr) of one cold `prose lint patterns/`."""
    command = [COMMAND[0], "-X", "importtime", *COMMAND[1:]] if importtime else COMMAND
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    assert process.stderr is not None
    stderr = process.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"prose lint patterns/ exited {process.returncode}:\n{stderr}")
    return wall, usage.ru_utime + usage.ru_stime, stderr


def import_times(stderr: str) -> dict[str, float]:
    """Cumulative import seconds per module, from `-X importtime` output."""
    found: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        found.setdefault(name.strip(), int(cumulative) / 1e6)
    return found


def measure(runs: int) -> dict[str, object]:
    load_before = load_average()
    # Warm the file cache, Python's bytecode and prose's compile caches (dataclass methods,
    # regexes: prose/compile_cache.py), as any run after the first finds them: cold means a
    # new process.
    one_run()
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu, _ = one_run()
        walls.append(wall)
        cpus.append(cpu)
    imports: dict[str, list[float]] = {name: [] for name in MODULES}
    for _ in range(runs):
        found = import_times(one_run(importtime=True)[2])
        for name in MODULES:
            if name in found:
                imports[name].append(found[name])
    return {
        "runs": runs, "wall": statistics.median(walls), "wall_min": min(walls),
        "cpu": statistics.median(cpus), "cpu_min": min(cpus),
        "imports": {name: statistics.median(times) for name, times in imports.items() if times},
        "load": (load_before, load_average()),
    }


def table(result: dict[str, object]) -> str:
    load_before, load_after = result["load"]  # type: ignore[misc]
    imports: dict[str, float] = result["imports"]  # type: ignore[assignment]
    rows = [
        f"| CPU time (user + system), median of {result['runs']} | {result['cpu']:.3f} s | |",
        f"| CPU time, fastest | {result['cpu_min']:.3f} s | |",
        f"| wall time, median | {result['wall']:.3f} s | 0.3 s on a quiet machine |",
        f"| wall time, fastest | {result['wall_min']:.3f} s | |",
        *(f"| import of `{name}` (cumulative, median) | {seconds * 1000:.0f} ms | |"
          for name, seconds in imports.items()),
    ]
    return "\n".join([
        "| measure | value | target |", "|---|---|---|", *rows, "",
        f"Load average {load_before:.2f} before, {load_after:.2f} after.",
    ])


def main() -> None:
    if {"-h", "--help"} & set(sys.argv[1:]):
        print(__doc__)
        return
    args = [arg for arg in sys.argv[1:] if arg != "--print"]
    runs = int(args[0]) if args else 9
    body = table(measure(runs))
    if "--print" in sys.argv:
        print(body)
        return
    write_section("cold-lint", f"""## Cold lint

{stamp()}

`prose lint patterns/` in a new process each time (`python bench/cold_lint.py`), run as
the console script runs it (`prose.cli.entry`), the file cache, Python's bytecode and
prose's compile caches (prose/compile_cache.py) warm. CPU time and import times are what
a loaded machine changes least; the wall time needs a quiet machine to mean anything (the
load average is below the table: 2 or more on this 2-core machine means it was shared).

What a cold lint pays for, and what was cut (issue 36): the cyclic garbage collector held
off while the command line loads, then everything frozen (prose/cli/collector.py: its
collections were a sixth of the CPU time); the parser loaded from tables generated from
the grammar, so Lark is not imported (prose/syntax/generate_parser.py); `hashlib` and
`difflib` imported where they are used. Left: importing click (~25 ms) and creating
prose's ~200 dataclasses (~40 ms, the methods' compiling already cached), Lark's LALR
loop over the 24 programs (~55 ms) and the lint rules with the data-flow analysis
(~80 ms).

{body}
""")


if __name__ == "__main__":
    main()
