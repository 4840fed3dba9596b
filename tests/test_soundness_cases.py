"""Fixed programs for the soundness property (tests/test_soundness.py): counterexamples it
found, kept as they were minimised, and the cases of issue 40's `runs only after`,
`grows only after` and `gets the same ... got` against a later call of the approver
(lint must flag what the run time stops, and stay quiet on the clean twins)."""

from __future__ import annotations

import pytest

from tests.soundness_programs import (
    AGENT_DEFINITION,
    GeneratedPattern,
    Invariant,
    script_for,
)
from tests.test_soundness import FAILURES, GATE_CODES, Outcome, coded_at, evaluate

# Found by this test (issue 40): the call in the `map` passes the one name bound once, but
# an earlier call passed another `text`, so the run time stops it; PH632 flagged only the
# earlier calls until it learnt that such a call may be the one stopped.
SAME_AFTER_ANOTHER = """\
let r1 = call summariser
let r2 = session: scout
r1 = call summariser
  text: top([], 1, by: "n")
let ys1 = r2.flaws
  | map:
    let r5 = call summariser
      text: r2
return { result: task_brief }"""


def test_a_call_stopped_after_one_given_another_value_is_flagged() -> None:
    program = "\n".join([*AGENT_DEFINITION, SAME_AFTER_ANOTHER])
    pattern = GeneratedPattern("", "", (Invariant("same_every", "summariser"),),
                               script_for([True], {}), 0, frozenset()).rebuild(program)
    outcome = evaluate(pattern)
    assert outcome.result.exit_code == 5, outcome.report()
    assert outcome.failure is None, f"{FAILURES[outcome.failure]}\n{outcome.report()}"


# A growth after a later refusal: `r` was approved, then the approver refused (its latest
# call returned `ok` == false), so the run time stops the growth (R060); PH643 must see that
# the later call made the test of `r.ok` stale (issue 40: it used not to).
LATER_REFUSAL = """\
let progress = []
let r = call proposer
if r.ok:
  call proposer
  record "a" in progress
return { result: progress }"""

RUNS_AFTER = Invariant("runs_after", "adversary", "proposer")
GROWS = Invariant("grows", "proposer")
SAME_GOT = Invariant("same_got", "adversary", "proposer")

# Programs whose gated statement (the line holding `# gated`) the run time stops because
# a later call of the approver (`proposer`, replying `ok` true, then false) replaced the
# result that was tested, or the input it was given: lint must flag that line.
STALE: dict[str, tuple[Invariant, str]] = {
    "growth after a later refusal": (GROWS, LATER_REFUSAL.replace('progress\nreturn',
                                                                  'progress # gated\nreturn')),
    "call after a later refusal": (RUNS_AFTER, """\
let r = call proposer
if r.ok:
  call proposer
  call adversary # gated
return { result: task_brief }"""),
    "the approver called again between the binding and the test": (RUNS_AFTER, """\
let r = call proposer
let s1 = "between"
call proposer
if r.ok == true:
  call adversary # gated
return { result: task_brief }"""),
    "the approver called in a loop before the gated call": (RUNS_AFTER, """\
let r = call proposer
if r.ok:
  repeat 2:
    call adversary # gated
    call proposer
return { result: task_brief }"""),
    "a growth in a loop that calls the approver": (GROWS, """\
let progress = []
let r = call proposer
if r.ok:
  for x in ["a", "b"]:
    record x in progress # gated
    let r2 = call proposer
return { result: progress }"""),
    "the approver called through a block": (RUNS_AFTER, """\
block ask(p):
  call p
let r = call proposer
if r.ok:
  do ask(proposer)
  call adversary # gated
return { result: task_brief }"""),
    "the approver called through a service value": (RUNS_AFTER, """\
let w = proposer
let r = call proposer
if r.ok:
  call w
  call adversary # gated
return { result: task_brief }"""),
    "the approver given another text since": (SAME_GOT, """\
call proposer
  text: task_brief
call proposer
  text: "something else"
call adversary # gated
  text: task_brief
return { result: task_brief }"""),
}

# Their clean twins: the approver is called again, and its *new* result is what is tested
# (or what the gated call is given): lint reports nothing and the run ends normally. The
# tests compare with `true`: these slots declare no output type, so a bare `if r.ok:` does
# not prove `ok == true` (`prose.lang.gates.bare_test_approves`; a reply's `"yes"` is
# truthy and not `true`).
FRESH: dict[str, tuple[Invariant, str]] = {
    "the new result tested": (RUNS_AFTER, """\
let r = call proposer
call proposer
r = call proposer
if r.ok == true:
  call adversary
return { result: task_brief }"""),
    "the new result tested in each iteration": (RUNS_AFTER, """\
repeat 3:
  let r = call proposer
  if r.ok == true:
    call adversary
return { result: task_brief }"""),
    "a growth after the new result": (GROWS, """\
let progress = []
let r = call proposer
repeat 2:
  r = call proposer
  if r.ok != true:
    continue
  record "a" in progress
return { result: progress }"""),
    "a block that calls another slot": (RUNS_AFTER, """\
block ask(p):
  call p
let r = call proposer
if r.ok == true:
  do ask(summariser)
  call adversary
return { result: task_brief }"""),
    "the approver given the same text last": (SAME_GOT, """\
call proposer
  text: "something else"
call proposer
  text: task_brief
call adversary
  text: task_brief
return { result: task_brief }"""),
}
GATED_CODES = {"runs_after": "PH631", "grows": "PH643", "same_got": "PH632"}


def _gated(program: str, invariant: Invariant) -> Outcome:
    """`program` under one gate invariant, `proposer` replying `ok` true, false, true..."""
    pattern = GeneratedPattern("", "", (Invariant("never", "summariser", "adversary"),
                                        invariant), script_for([True, False], {}), 0,
                               frozenset()).rebuild("\n".join([*AGENT_DEFINITION, program]))
    return evaluate(pattern)


@pytest.mark.parametrize("name", sorted(STALE))
def test_a_stale_approval_is_flagged(name: str) -> None:
    invariant, program = STALE[name]
    outcome = _gated(program, invariant)
    gated = next(number for number, line in enumerate(outcome.pattern.program.splitlines(),
                                                      start=outcome.pattern.program_start)
                 if "# gated" in line)
    assert outcome.result.exit_code == 5, outcome.report()  # the run time stopped it
    assert outcome.result.error is not None and outcome.result.error.span is not None
    assert outcome.result.error.span.line == gated, outcome.report()
    assert coded_at(outcome.errors, GATED_CODES[invariant.form], gated), outcome.report()
    assert outcome.failure is None, f"{FAILURES[outcome.failure]}\n{outcome.report()}"


@pytest.mark.parametrize("name", sorted(FRESH))
def test_a_fresh_approval_stays_clean(name: str) -> None:
    invariant, program = FRESH[name]
    outcome = _gated(program, invariant)
    gates = [d for d in outcome.errors if d.code in GATE_CODES]
    assert not gates, outcome.report()
    assert outcome.result.exit_code == 0, outcome.report()


# Found by this test (issue 40, the `blind` form): in strict mode the body of a loop over
# the services of a list-valued slot depends on the list, which is their names; so the
# outputs it collects name their services even shuffled, and the run time stopped the
# judge where the linter (which left the services' names out of the loop's dependence)
# reported nothing. In normal mode the shuffled outputs are clean for both.
SHUFFLED_IN_A_SERVICE_LOOP = """\
let answers = for s in samplers:
  call s
    text: task_brief
call summariser
  text: shuffle(answers).items
return { result: task_brief }"""


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "normal"])
def test_outputs_of_a_loop_over_services_in_strict_mode(strict: bool) -> None:
    pattern = GeneratedPattern("", "", (Invariant("blind", "summariser"),),
                               script_for([True], {}), 0, frozenset(), strict=strict
                               ).rebuild("\n".join([*AGENT_DEFINITION,
                                                    SHUFFLED_IN_A_SERVICE_LOOP]))
    outcome = evaluate(pattern)
    assert outcome.failure is None, f"{FAILURES[outcome.failure]}\n{outcome.report()}"
    assert outcome.result.exit_code == (5 if strict else 0), outcome.report()
    assert any(d.code == "PH634" for d in outcome.errors) == strict, outcome.report()
