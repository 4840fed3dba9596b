"""Information hiding: the flow analysis, normal and strict, and the run-time check per call.

Run: python bench/hiding.py   (writes the `hiding` section of docs/benchmarks.md)
Targets (issue 12): the run-time check per call under 5% of
`Router.acompletion`'s own CPU per call, measured in the same run.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.lint import big_pattern
from bench.report import ROOT, best_of, stamp, write_section
from bench.runtime import direct_calls, stub_config
from bench.stub import StubServer

CALLS = 200


def _contexts(strict: bool) -> list[object]:
    from prose.check import lint_text

    files = sorted((ROOT / "patterns").glob("*.prose.md"))
    return [lint_text(path.read_text(encoding="utf-8"), str(path), strict_flow=strict).context
            for path in files]


def analysis_time(texts: list[tuple[str, str]], strict: bool) -> float:
    from prose.check.declarations import from_spec
    from prose.check.flow import analyse
    from prose.spec import load_spec
    from prose.syntax import parse

    loaded = [(from_spec(load_spec(text, path).spec), parse(text, path)) for path, text in texts]

    def run() -> None:
        for decl, program in loaded:
            analyse(decl, program, strict=strict)

    return best_of(run, repeat=5)


def check_per_call() -> float:
    """CPU seconds of the run-time check of one call: channels, then `Policy.violations`."""
    from prose.lang.channels import call_channels
    from prose.lang.flows import Label
    from prose.lang.policy import compile_policy
    from prose.runtime.values import labelled
    from prose.spec import load_spec_file

    spec = load_spec_file(ROOT / "patterns" / "proposer-adversary.prose.md").spec
    policy = compile_policy(spec)
    inputs = {"task_brief": labelled("Design a rate limiter for a public API.",
                                     Label(literal=frozenset({"Design"})))}
    prompt = labelled("Write a proposal that answers the brief.", Label(literal=frozenset({"Write"})))
    ensures = spec.slots[0].ensures if spec and spec.slots else None
    rounds = 20_000
    start = time.process_time()
    for _ in range(rounds):
        channels = call_channels(inputs, prompt=prompt, ensures=ensures, role="You are an engineer.")
        policy.violations("proposer", channels)
    return (time.process_time() - start) / rounds


async def router_cpu_per_call() -> float:
    with StubServer() as stub:
        config = stub_config(f"http://127.0.0.1:{stub.port}/v1")
        messages = [[{"role": "user", "content": f"question {i}"}] for i in range(CALLS)]
        await direct_calls(config, messages[:20])  # warm up
        start = time.process_time()
        await direct_calls(config, messages)
        return (time.process_time() - start) / CALLS


def main() -> None:
    import os

    load_before = os.getloadavg()[0]
    patterns = [(str(p), p.read_text(encoding="utf-8"))
                for p in sorted((ROOT / "patterns").glob("*.prose.md"))]
    big = [("big.prose.md", big_pattern(10_000))]
    rows = []
    for label, texts in (("patterns/ (19 files)", patterns), ("a 10,000-line program", big)):
        normal = analysis_time(texts, strict=False)
        strict = analysis_time(texts, strict=True)
        rows.append(f"| {label} | {normal * 1000:.1f} | {strict * 1000:.1f} | {strict / normal:.2f}x |")
    check = check_per_call()
    router = asyncio.run(router_cpu_per_call())
    load_after = os.getloadavg()[0]
    body = f"""## Information hiding

{stamp()}
Load average {load_before:.2f} before, {load_after:.2f} after.

The provenance analysis alone (`prose.check.flow.analyse`, best of 5, spec
loading and parsing excluded), normal mode and strict mode (implicit flows):

| program | normal ms | strict ms | strict / normal |
|---|---|---|---|
{chr(10).join(rows)}

The run-time check of one call (building its channels and asking
`Policy.violations`, on the proposer-adversary policy with an input, a
prompt, the slot's `ensures` and a role prompt), against the CPU one
`Router.acompletion` costs on the loopback stub ({CALLS} sequential calls),
both measured in this run:

| | CPU us/call | share of Router.acompletion |
|---|---|---|
| run-time check | {check * 1e6:.1f} | {check / router * 100:.2f}% |
| Router.acompletion | {router * 1e6:.0f} | 100% |

Target: under 5% ({'met' if check / router < 0.05 else 'NOT met'}).
"""
    write_section("hiding", body)
    print(body)


if __name__ == "__main__":
    main()
