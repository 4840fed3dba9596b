"""Where the CPU of the 1,000-item `parallel for` goes: py-spy samples, top 10, before and after.

Run: python bench/profile_parallel.py [BEFORE_COMMIT]   (writes the `profile` section of
docs/benchmarks.md; needs py-spy, `pip install py-spy`)

`bench/fixtures/parallel.prose.md` over 1,000 items against the loopback stub (50 ms a
call, cap 64), three runs in one child process, sampled by py-spy at 250 Hz with its
threads (LiteLLM's logging worker included). The child runs the code of this checkout
("after") and, when BEFORE_COMMIT is given, the same script on that commit's code checked
out in a temporary git worktree ("before"), one after the other against the same stub.
A function's share is its self time (the samples whose innermost frame it is) over all
samples; "prose, all" is the inclusive share of prose's own code outside the model client's
send (`RouterClient._send`), the orchestration cost.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import ROOT, load_average, stamp, write_section
from bench.stub import StubServer

ITEMS = 1000
RUNS = 3
RATE = 250
TOP = 10
CHILD = """
import asyncio, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
from bench.runtime import FIXTURES, prose_run, stub_config
from prose.llm.loader import load_litellm
load_litellm()
config = stub_config(sys.argv[3], concurrency=64)
items = [f"item {{i}}" for i in range({items})]
with tempfile.TemporaryDirectory() as folder:
    def once():
        asyncio.run(prose_run(FIXTURES / "parallel.prose.md", config, Path(folder),
                              inputs={{"items": items}}, concurrency=64))
    once()  # imports and first-use costs stay out of the samples
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range({runs}):
        once()
"""
FRAME = re.compile(r"(?P<name>.*) \((?P<file>.*?)(?::\d+)?\)$")


def profile(code: Path, api_base: str, out: Path) -> None:
    """py-spy's raw samples of the child running the parallel for on `code`'s prose, from
    after its warm-up run (LiteLLM's import and first-use costs are not sampled)."""
    sample([sys.executable, "-c", CHILD.format(items=ITEMS, runs=RUNS), str(code), str(ROOT),
            api_base], out)


def sample(argv: list[str], out: Path, rate: int = RATE) -> None:
    """py-spy's raw samples (all threads, `rate` Hz) of the child `argv`, from the moment it
    prints `ready` after its warm-up until it exits; the child waits for a line on stdin."""
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    if child.stdout.readline().strip() != "ready":
        child.kill()
        raise SystemExit("the profiled child did not start")
    spy = Path(sys.executable).with_name("py-spy")
    sampler = subprocess.Popen(
        [str(spy), "record", "-r", str(rate), "-f", "raw", "--threads", "-o", str(out),
         "--pid", str(child.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # let py-spy attach
    child.stdin.write("go\n")
    child.stdin.flush()
    if child.wait() != 0 or sampler.wait() != 0:
        raise SystemExit("the profiled run or py-spy failed")


def short(file: str) -> str:
    for marker in ("site-packages/", "/prose/", "python3.11/"):
        if marker in file:
            head = "prose/" if marker == "/prose/" else ""
            return head + file.split(marker, 1)[1]
    return file


def frames(stack: str) -> list[tuple[str, str]]:
    found = []
    for part in stack.split(";"):
        match = FRAME.match(part)
        if match:
            found.append((match["name"], short(match["file"])))
    return found


def summary(raw: Path) -> tuple[list[tuple[str, float]], float, int]:
    """The top self-time functions (share of samples), prose's inclusive share, samples."""
    total = 0
    own: collections.Counter[str] = collections.Counter()
    prose_samples = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        samples = int(count)
        total += samples
        stack_frames = frames(stack)
        if not stack_frames:
            continue
        name, file = stack_frames[-1]
        if name == "_worker" and file.endswith("concurrent/futures/thread.py"):
            continue  # an idle pool thread waiting for work, not CPU
        own[f"{name} ({file})"] += samples
        in_send = any(n == "RouterClient._send" for n, _ in stack_frames)
        if not in_send and any(f.startswith("prose/") for _, f in stack_frames):
            prose_samples += samples
    busy = sum(own.values())
    top = [(name, count / busy) for name, count in own.most_common(TOP)]
    return top, prose_samples / busy if busy else 0.0, busy


def table(label: str, top: list[tuple[str, float]], prose_share: float, samples: int) -> str:
    rows = "\n".join(f"| {i} | `{name}` | {share:.1%} |" for i, (name, share) in
                     enumerate(top, start=1))
    return (f"**{label}** ({samples:,} busy samples; prose's own code outside the send, "
            f"inclusive: {prose_share:.1%})\n\n| # | function (self time) | share |\n"
            f"|---|---|---|\n{rows}\n")


def main() -> None:
    before_commit = sys.argv[1] if len(sys.argv) > 1 else None
    load_before = load_average()
    sections = []
    with StubServer() as stub, tempfile.TemporaryDirectory() as tmp:
        api_base = stub.base_url(latency_ms=50, words=5)
        sides: list[tuple[str, Path]] = []
        if before_commit:
            worktree = Path(tmp) / "before"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree),
                            before_commit], check=True, capture_output=True)
            sides.append((f"before ({before_commit[:7]})", worktree))
        sides.append(("after (this checkout)", ROOT))
        try:
            for label, code in sides:
                raw = Path(tmp) / f"{len(sections)}.raw"
                profile(code, api_base, raw)
                sections.append(table(label, *summary(raw)))
        finally:
            if before_commit:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(Path(tmp) / "before")], check=False, capture_output=True)
    body = f"""
## Profile of the 1,000-item `parallel for`

{stamp()}
Load average {load_before:.2f} before, {load_average():.2f} after.

`python bench/profile_parallel.py {before_commit or ""}`: py-spy at {RATE} Hz over {RUNS} runs
of `bench/fixtures/parallel.prose.md` ({ITEMS:,} items, stub at 50 ms, cap 64), all threads,
after one warm-up run (LiteLLM's import is not sampled); idle pool threads are left out. The benchmark's own stub (the bare router side and the
harness) is the same on both sides; the difference is prose's code.

{chr(10).join(sections)}
"""
    write_section("profile", body)
    print(body)


if __name__ == "__main__":
    main()
