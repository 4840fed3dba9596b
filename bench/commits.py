"""prose at two commits, side by side on the map-reduce: what a change saves or costs per call.

Run: python bench/commits.py BASE [ROUNDS]   (BASE: a commit, tag or branch; 30 rounds by default)

The working tree as it is (uncommitted changes included) against BASE, checked out in
a temporary `git worktree`. One Python process cannot import two versions of prose, so
each side is a process of its own running the map-reduce of bench/pdl_compare.py (200
mapper calls and a reducer, `prose run` with its trace, on prose's event loop) against
one loopback stub; the two take turns, alternating which goes first. Both are started
with the same hash seed and, where `setarch` exists, without address-space
randomisation: two processes of the same code otherwise differ by more than the changes
this is for (an A/A of one tree against itself, 30 rounds: +0.08 ms a call, cheaper in
7 of 30, without them; +0.03 ms and 13 of 30 with them).

It prints each side's median CPU per call, the median over rounds of the working tree's
CPU per call minus BASE's in the same round, and in how many rounds the working tree
was cheaper. It writes no section of docs/benchmarks.md: the result is about a change.
`python bench/commits.py HEAD` on a clean tree is the A/A, the noise to beat.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 30
READY = "ready"


def child(root: str, base_url: str) -> None:
    """One side: run the map-reduce each time a line comes in; print wall and CPU seconds."""
    import asyncio
    import gc
    import time

    sys.path.insert(0, root)
    from bench import langgraph_compare as lg
    from bench.runtime import as_prose_runs, prose_run, stub_config
    from prose.llm.loader import load_litellm

    load_litellm()
    config = stub_config(base_url, concurrency=lg.CAP)
    items = lg.chunks()
    folder = Path(tempfile.mkdtemp(prefix="prose-commits-"))

    async def mapreduce() -> None:
        await prose_run(lg.PATTERN, config, folder, inputs={"task_brief": lg.BRIEF, "chunks": items})

    side = as_prose_runs(mapreduce)

    async def serve() -> None:
        await side()  # warm: imports, the stub's connections
        print(READY, flush=True)
        for _ in sys.stdin:
            gc.collect()
            wall, cpu = time.perf_counter(), time.process_time()
            await side()
            print(f"{time.perf_counter() - wall} {time.process_time() - cpu}", flush=True)

    try:
        asyncio.run(serve())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _fixed_layout() -> list[str]:
    """The command prefix that turns address-space randomisation off, where it works."""
    prefix = ["setarch", os.uname().machine, "-R"]
    if shutil.which("setarch") is None:
        return []
    works = subprocess.run([*prefix, "true"], capture_output=True, check=False)
    return prefix if works.returncode == 0 else []


def _start(root: Path, base_url: str) -> subprocess.Popen[str]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(root), base_url]
    command = [*_fixed_layout(), *command]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, env=env)
    assert process.stdout is not None
    if process.stdout.readline().strip() != READY:
        process.kill()
        raise SystemExit(f"bench/commits.py: the side at {root} did not start (see above)")
    return process


def _run_once(process: subprocess.Popen[str]) -> float:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("go\n")
    process.stdin.flush()
    line = process.stdout.readline()
    if not line:
        raise SystemExit("bench/commits.py: a side stopped (see above)")
    return float(line.split()[1])


def compare(base_root: Path, rounds: int) -> dict[str, list[float]]:
    """CPU seconds per run of each side, `rounds` each, taking turns."""
    sys.path.insert(0, str(ROOT))
    from bench import langgraph_compare as lg
    from bench.stub import StubServer

    cpu: dict[str, list[float]] = {"base": [], "tree": []}
    with StubServer() as stub:
        base_url = stub.base_url(latency_ms=lg.LATENCY_MS, words=lg.WORDS)
        sides = {"base": _start(base_root, base_url), "tree": _start(ROOT, base_url)}
        try:
            for number in range(rounds):
                order = ["base", "tree"] if number % 2 == 0 else ["tree", "base"]
                for name in order:
                    cpu[name].append(_run_once(sides[name]))
                print(f"round {number + 1}/{rounds}", file=sys.stderr, flush=True)
        finally:
            for process in sides.values():
                if process.stdin is not None:
                    process.stdin.close()
                process.wait()
    return cpu


def main() -> None:
    arguments = sys.argv[1:]
    if not arguments or {"-h", "--help"} & set(arguments):
        print(__doc__)
        return
    base = arguments[0]
    rounds = int(arguments[1]) if len(arguments) > 1 else ROUNDS
    sys.path.insert(0, str(ROOT))
    from bench import langgraph_compare as lg

    calls = lg.ITEMS + 1
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{base}^{{commit}}"],
                           capture_output=True, text=True, check=False)
    if found.returncode != 0:
        raise SystemExit(f"bench/commits.py: `{base}` is not a commit of this repository")
    commit = found.stdout.strip()
    with tempfile.TemporaryDirectory(prefix="prose-base-") as folder:
        tree = Path(folder) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree),
                        commit], check=True)
        try:
            cpu = compare(tree, rounds)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=False)
    differences = [(tree_s - base_s) / calls * 1000
                   for base_s, tree_s in zip(cpu["base"], cpu["tree"], strict=True)]
    cheaper = sum(difference < 0 for difference in differences)
    print(f"base {base} ({commit[:7]}): {statistics.median(cpu['base']) / calls * 1000:.3f} ms "
          "of CPU per call (median)")
    print(f"working tree:    {statistics.median(cpu['tree']) / calls * 1000:.3f} ms")
    print(f"working tree - base, paired by round: {statistics.median(differences):+.3f} ms a "
          f"call (median of {rounds}); the working tree was cheaper in {cheaper} of {rounds}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
