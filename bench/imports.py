"""Import cost: what a new process pays for `prose.llm` and `prose.spec`, against LiteLLM.

Run: python bench/imports.py   (writes the `imports` section of docs/benchmarks.md)
Target: importing `prose.llm` and building a `RouterClient` and a scripted client
takes well under 2 s (LiteLLM is not imported until the first call), the bound a
unit test asserted until it moved here, where a busy machine cannot fail the suite.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import ROOT, load_average, stamp, write_section

REPEAT = 5
TARGET_S = 2.0
# Each snippet prints how long its own work took, measured inside the new process.
SNIPPETS = {
    "`import prose.llm`, build a `RouterClient` and a scripted client": """
        from prose.llm import (
            ChatRequest, LLMConfig, Message, RouterClient, Script, scripted_client, script_model,
        )
        config = LLMConfig(model_list=[{"model_name": "m", "litellm_params": {"model": "openai/x"}}])
        RouterClient(config)
        scripted_client(Script.from_yaml("slots: {p: [hi]}"))
        ChatRequest(script_model("slot:p"), [Message.user("hi")])
        assert "litellm" not in sys.modules
    """,
    "`import prose.spec` and load a spec": f"""
        from prose.spec import load_spec_file
        load_spec_file({str(ROOT / "tests" / "fixtures" / "spec" / "review-board.prose.md")!r})
    """,
    "`import prose.runtime`": """
        import prose.runtime
    """,
    "`import litellm` (for contrast)": """
        import litellm
    """,
}


def _program(body: str) -> str:
    return (
        "import json, sys, time\nstarted = time.perf_counter()\n"
        + textwrap.dedent(body).strip()
        + "\nprint(json.dumps(time.perf_counter() - started))\n"
    )


def main() -> None:
    load_before = load_average()
    # As prose imports LiteLLM: without these the import tries to download a price list.
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "true", "LITELLM_OFFLINE_MODE": "true"}
    seconds: dict[str, list[float]] = {label: [] for label in SNIPPETS}
    for _ in range(REPEAT):  # the snippets take turns, so a change of load touches each alike
        for label, body in SNIPPETS.items():
            done = subprocess.run([sys.executable, "-c", _program(body)], cwd=ROOT, env=env,
                                  capture_output=True, text=True, check=True)
            seconds[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
    rows = []
    for number, (label, found) in enumerate(seconds.items()):
        median = statistics.median(found)
        target = f"< {TARGET_S:g} s ({'meets' if median < TARGET_S else 'misses'})" if number == 0 else ""
        each = ", ".join(f"{value:.3f}" for value in found)
        rows.append(f"| {label} | {median:.3f} | {each} | {target} |")
    body = f"""## Import cost

{stamp()}
Load average {load_before:.2f} before, {load_average():.2f} after.

Each row is a new Python process ({REPEAT} of each, taking turns); the time is
measured inside the process, from before its first import to the end of the
row's work, so the interpreter's own start-up is not in it.

| work in a new process | median s | each run, s | target |
|---|---|---|---|
{chr(10).join(rows)}
"""
    write_section("imports", body)
    print(body)


if __name__ == "__main__":
    main()
