"""Writes benchmark results into docs/benchmarks.md, one marked section per benchmark."""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
HEADER = """# Benchmarks

Every section below is written by a script in `bench/` (`python bench/run_all.py`
runs them all). Each records the date and the machine it ran on; ratios are
always measured within one run.
"""


def machine() -> str:
    """A one-line description of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def versions() -> str:
    """LiteLLM's version (most of a call's CPU is its own) and the commit of prose measured."""
    from importlib import metadata

    try:
        litellm = metadata.version("litellm")
    except metadata.PackageNotFoundError:
        litellm = "not installed"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return f"LiteLLM {litellm}"
    return f"LiteLLM {litellm}, prose at {commit}{' with changes' if dirty.strip() else ''}"


def stamp() -> str:
    return f"Measured {dt.date.today().isoformat()} on {machine()}; {versions()}."


def load_average() -> float:
    """The one-minute load average (how busy the machine was while a benchmark ran)."""
    return os.getloadavg()[0]


def best_of(function: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of `repeat` wall-clock timings of `function()`, in seconds."""
    import time

    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        timings.append(time.perf_counter() - start)
    return min(timings)


def median_command(command: list[str], repeat: int = 5, cwd: Path = ROOT) -> float:
    """The median wall-clock seconds of running `command` `repeat` times."""
    import time

    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def write_section(name: str, body: str) -> None:
    """Replace (or add) the section `name` of docs/benchmarks.md."""
    DOC.parent.mkdir(parents=True, exist_ok=True)
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else HEADER
    block = f"<!-- bench:{name} -->\n{body.strip()}\n<!-- /bench:{name} -->"
    pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    DOC.write_text(text, encoding="utf-8")
