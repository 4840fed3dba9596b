"""A made-up but well-formed trace of the two-reviewer gate, of any size (benchmarks and tests).

Rounds of one `worker` call followed by `reviewer_a` and `reviewer_b` in
parallel, as the library's `two-reviewer-gate.prose.md` runs them, written
through the runtime's own `Trace` (so the hash chain and the seal are real)
with the policy compiled from that pattern, so `prose audit` finds it
clean. Every 40th call fails once and is retried; every 25th round has a
judge decision. Times are made up: each call starts when the one it needs
has finished.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from prose.lang.gates import digest
from prose.runtime.trace import CallEvent, JudgeEvent, RunEnd, RunStart, Trace, Usage, sha256_text

SITES = {"worker": (82, 15), "reviewer_a": (88, 18), "reviewer_b": (105, 20)}
LOOP = "/repeat@81:1"
BEGIN = 1_800_000_000.0
TASK = "Write `median(xs)` for a list of numbers, with tests."


def pattern_path() -> Path:
    from prose.resources import patterns_dir

    return patterns_dir() / "two-reviewer-gate.prose.md"


def write_synthetic_trace(path: str | Path, calls: int, seed: int = 7) -> Path:
    """Write a sealed trace of about `calls` call attempts to `path`; returns `path`."""
    from prose.files import read_text
    from prose.ledger.call_sites import pattern_source
    from prose.pattern_file import read_pattern

    pattern = pattern_path()
    source = pattern_source(read_pattern(pattern))
    assert source is not None, "the library's two-reviewer gate must load"
    # Every review fails, so the run ends blocked at its ceiling of versions: a dry pass (the
    # same seed, no file) counts them, and the run records that ceiling as `max_versions`
    # (the pattern's `the result satisfies` holds of the recorded result).
    versions = _rounds(Trace(None, "synthetic-count"), random.Random(seed), calls)[2]
    trace = Trace(path, "synthetic-run")
    trace.emit(RunStart(time=BEGIN, pattern=str(pattern),
                        pattern_sha256=sha256_text(read_text(str(pattern))),
                        inputs={"task_brief": TASK}, config={"max_versions": versions},
                        bindings={s: {"kind": "model", "model": f"synthetic/{s}"} for s in SITES},
                        models={"limits": {"max_calls": calls * 2, "max_tokens": None,
                                           "max_cost": 5.0, "timeout": None}},
                        policy=source.policy.to_dict()))
    clock, made, version, spent = _rounds(trace, random.Random(seed), calls)
    trace.emit(RunEnd(time=clock + 0.01, status="ok", exit_code=0,
                      # The ledger's entries are not rebuilt here: an empty list, which
                      # the pattern's every-entry invariant holds of.
                      result={"status": "blocked", "result": None, "versions": version,
                              "ledger": []},
                      totals={"calls": made, "prompt_tokens": spent[0],
                              "completion_tokens": spent[1],
                              "total_tokens": spent[0] + spent[1], "cost_usd": spent[2],
                              "seconds": round(clock - BEGIN, 3)}))
    trace.close()
    return Path(path)


def _rounds(trace: Trace, rng: random.Random, calls: int) -> tuple[float, int, int, list[Any]]:
    """The rounds of about `calls` call attempts: when the last ended, the calls made, the
    versions, and the tokens and cost spent."""
    clock, made, version = BEGIN, 0, 0
    spent: list[Any] = [0, 0, 0.0]
    while made < calls:
        version += 1
        loop = f"{LOOP}#{version - 1}"
        clock, made = _call(trace, rng, "worker", loop, clock, made, spent, version)
        ends = []
        for slot in ("reviewer_a", "reviewer_b"):  # side by side
            end, made = _call(trace, rng, slot, loop, clock, made, spent, version)
            ends.append(end)
        clock = max(ends)
        if version % 25 == 0:
            trace.emit(JudgeEvent(time=clock, id=trace.next_id("j"), kind="condition",
                                  text="both reviewers found nothing new", line=120,
                                  path=loop, model="synthetic/judge", decision=False,
                                  reason="reviewer_b still has findings", latency_ms=120.0))
            clock += 0.12
    return clock, made, version, spent


def _call(trace: Trace, rng: random.Random, slot: str, loop: str, clock: float, made: int,
          spent: list[Any], version: int) -> tuple[float, int]:
    """One call (and its retry when it fails); returns when it ended and the calls made."""
    line, column = SITES[slot]
    attempt = 1
    while True:
        made += 1
        latency = rng.uniform(200, 2500)
        failed = made % 40 == 0 and attempt == 1
        prompt, completion = rng.randint(300, 900), 0 if failed else rng.randint(40, 400)
        cost = (prompt + completion) * 2e-7
        names: tuple[str, ...]
        if slot == "worker":
            names = ("task_brief", "previous_candidate", "findings")
            output: Any = f"def median(xs):  # version {version}\n    ..."
            carried = ["reviewer_a", "reviewer_b"] if version > 1 else []
        else:
            names = ("task_brief", "candidate")
            output = {"verdict": "FAIL", "findings": [f"{slot} finding {made} on version {version}"]}
            carried = ["worker"]
        # What the run time records for the pattern's control-flow invariants: reviewer B
        # runs only if A passed (`a_passed`), on the candidate A was given.
        gates: dict[str, Any] | None = None
        if slot != "worker":
            gates = {"given": {"candidate": digest(f"candidate of version {version}")}}
            if slot == "reviewer_b":
                gates["conditions"] = {"a_passed": True}
        body = "\n\n".join(f"## {name}\n{TASK if name == 'task_brief' else '...'}" for name in names)
        event = CallEvent(
            time=clock, id=trace.next_id(), slot=slot, service=f"model:synthetic/{slot}",
            model=f"synthetic/{slot}", file=str(pattern_path()), line=line, column=column,
            path=loop, attempt=attempt,
            messages=[{"role": "system", "content": f"You are {slot}."},
                      {"role": "user", "content": body}],
            output=None if failed else output,
            error={"kind": "rate-limit", "message": "slow down"} if failed else None,
            provenance=carried, transitive=carried,
            usage=Usage(prompt_tokens=prompt, completion_tokens=completion,
                        total_tokens=prompt + completion),
            cost_usd=cost, latency_ms=latency, requests=1, gates=gates)
        if not failed:
            from prose.runtime.integrity import output_sha256

            event.sha256 = output_sha256(output)
        trace.emit(event)
        spent[0] += prompt
        spent[1] += completion
        spent[2] += cost
        clock += latency / 1000
        if not failed:
            return clock, made
        attempt += 1
