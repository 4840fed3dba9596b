"""The compiled run-time Policy: compilation, JSON round-trip, violations, matching.

The last tests compare the policy with the linter on every leak fixture: the
calls the run-time policy would stop (given the provenance the static
analysis computes) are exactly the calls the linter reports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from prose.check.policy import (
    InputFlow,
    Policy,
    SlotPolicy,
    Violation,
    compile_policy,
    requirement_matches,
)

from prose.check import lint_text
from prose.check.invariant_checks import literal_texts
from prose.spec import PatternSpec, load_spec, load_spec_file
from tests.conftest import ROOT
from tests.test_leaks import Twin, leak_paths, load_leak_fixture
from tests.test_rules import build_pattern

PATTERNS = ROOT / "patterns"


def _spec(path: Path) -> PatternSpec:
    result = load_spec_file(path)
    assert result.spec is not None
    return result.spec


def _policy_of(invariants: str, slots: str | None = None, name: str = "duel") -> Policy:
    sections = {"invariants": invariants}
    if slots is not None:
        sections["slots"] = slots
    pattern = build_pattern("return { result: brief }", sections, name)
    loaded = load_spec(pattern.text, "policy.prose.md")
    assert loaded.spec is not None
    return compile_policy(loaded.spec)


FLOW_NONE = InputFlow()


def flow(*direct: str, via: tuple[str, ...] = ()) -> InputFlow:
    """An input's provenance: `direct` slots, plus `via` slots reached only through calls."""
    return InputFlow(frozenset(direct), frozenset(direct) | frozenset(via))


# --- compiling the shipped patterns --------------------------------------------------


def test_compile_proposer_adversary() -> None:
    policy = compile_policy(_spec(PATTERNS / "proposer-adversary.prose.md"))
    assert policy.pattern == "proposer-adversary"
    assert policy.independent == ()
    assert policy.slots["proposer"] == SlotPolicy(
        slot="proposer",
        requires=("task_brief",),
        sees_only=("task_brief",),
        never_sees=("adversary",),
        never_sees_indirectly=(),
        forbidden_words=("adversary", "attack", "proposer-adversary"),
    )
    assert policy.slots["adversary"] == SlotPolicy(
        slot="adversary",
        requires=("proposal", "original task_brief"),
        sees_only=("proposal", "task_brief"),
    )


def test_compile_dialectic() -> None:
    policy = compile_policy(_spec(PATTERNS / "dialectic.prose.md"))
    assert policy.pattern == "dialectic"
    assert set(policy.slots) == {"thesis", "antithesis"}
    thesis, antithesis = policy.slots["thesis"], policy.slots["antithesis"]
    assert thesis.sees_only == ("prior_antithesis", "task_brief")
    assert antithesis.sees_only == ("prior_thesis", "task_brief")
    assert thesis.requires is not None and len(thesis.requires) == 2
    assert thesis.requires[0] == "task_brief"
    assert requirement_matches(thesis.requires[1], "prior_antithesis")
    assert (thesis.never_sees, thesis.never_sees_indirectly, thesis.forbidden_words) == ((), (), ())
    # The dialectic's own calls pass the policy: each side sees the other's latest argument.
    assert policy.violations("thesis", {"task_brief": FLOW_NONE,
                                        "prior_antithesis": flow("antithesis"),
                                        "prompt": FLOW_NONE}) == []
    assert policy.violations("antithesis", {"task_brief": FLOW_NONE,
                                            "prior_thesis": flow("thesis")}) == []


@pytest.mark.parametrize("name", ["proposer-adversary", "dialectic"])
def test_json_round_trip(name: str) -> None:
    policy = compile_policy(_spec(PATTERNS / f"{name}.prose.md"))
    text = json.dumps(policy.to_dict(), sort_keys=True)
    again = Policy.from_dict(json.loads(text))
    assert again == policy
    assert json.dumps(again.to_dict(), sort_keys=True) == text


def test_json_round_trip_of_every_field() -> None:
    policy = _policy_of(
        "- `writer` sees only `brief`\n"
        "- `writer` never sees `critic`, even indirectly\n"
        "- `critic` is unaware of `writer`\n"
        "- `writer` and `critic` are independent"
    )
    data = json.loads(json.dumps(policy.to_dict()))
    assert data["independent"] == [["writer", "critic"]]
    assert data["slots"]["writer"]["never_sees_indirectly"] == ["critic"]
    assert Policy.from_dict(data) == policy
    # A slot without `requires:` keeps None (any input), not an empty list (no input).
    free = _policy_of("- `writer` sees only `brief`",
                      slots="- `writer`\n  - ensures: draft\n- `critic`\n  - ensures: verdict")
    assert free.slots["writer"].requires is None
    assert Policy.from_dict(json.loads(json.dumps(free.to_dict()))).slots["writer"].requires is None


# --- compiling every invariant form ----------------------------------------------------


def test_compile_every_invariant_form() -> None:
    policy = _policy_of(
        "- `writer` sees only `brief`, `notes`\n"
        "- `writer` sees only `brief`\n"
        "- `writer` never sees `critic`, even indirectly\n"
        "- `critic` is unaware of `writer`\n"
        "- `writer` and `critic` are independent\n"
        "- every loop is bounded by `rounds`\n"
        "- The critic is kind"
    )
    writer, critic = policy.slots["writer"], policy.slots["critic"]
    assert writer.sees_only == ("brief",)  # two `sees only` bullets: the intersection
    assert writer.never_sees_indirectly == ("critic",)
    assert writer.never_sees == ("critic",)  # from the independence
    assert critic.never_sees == ("writer",)  # unaware-of and independence, not twice
    # B's name, B's role (first noun of its `ensures`) and the pattern's name.
    assert critic.forbidden_words == ("writer", "draft", "duel")
    assert policy.independent == (("writer", "critic"),)


def test_forms_naming_non_slots_are_skipped() -> None:
    pattern = build_pattern("return { result: brief }",
                            {"invariants": "- `writer` never sees `ghost`\n- `ghost` sees only `brief`"})
    loaded = load_spec(pattern.text, "policy.prose.md")
    assert loaded.spec is not None
    assert {d.code for d in loaded.diagnostics} == {"PS150"}
    policy = compile_policy(loaded.spec)
    assert set(policy.slots) == {"writer", "critic"}
    assert policy.slots["writer"].never_sees == ()
    assert all(rules.sees_only is None for rules in policy.slots.values())


# --- violations, one rule kind at a time -------------------------------------------------


@pytest.fixture(scope="module")
def proposer_adversary() -> Policy:
    return compile_policy(_spec(PATTERNS / "proposer-adversary.prose.md"))


def _rules(found: list[Violation]) -> list[tuple[str, str | None]]:
    return sorted((violation.rule, violation.input) for violation in found)


def test_a_legal_call_has_no_violation(proposer_adversary: Policy) -> None:
    assert proposer_adversary.violations("proposer", {"task_brief": FLOW_NONE}) == []
    assert proposer_adversary.violations(
        "adversary", {"task_brief": FLOW_NONE, "proposal": flow("proposer")}
    ) == []
    assert proposer_adversary.violations("unknown-slot", {"anything": flow("adversary")}) == []


def test_requires_and_sees_only(proposer_adversary: Policy) -> None:
    found = proposer_adversary.violations("proposer", {"task_brief": FLOW_NONE, "history": FLOW_NONE})
    assert _rules(found) == [("requires", "history"), ("sees-only", "history")]
    messages = {violation.rule: violation.message for violation in found}
    assert messages["requires"] == "`proposer` does not require `history`"
    assert messages["sees-only"] == "`proposer` sees only `task_brief`, not `history`"
    assert all(violation.slot == "proposer" for violation in found)


def test_sees_only_without_requires() -> None:
    policy = _policy_of("- `writer` sees only `brief`",
                        slots="- `writer`\n  - ensures: draft\n- `critic`\n  - ensures: verdict")
    assert _rules(policy.violations("writer", {"brief": FLOW_NONE, "tone": FLOW_NONE})) == [
        ("sees-only", "tone")
    ]
    assert policy.violations("critic", {"anything": FLOW_NONE}) == []


def test_reserved_properties_are_not_inputs_but_carry_provenance(proposer_adversary: Policy) -> None:
    reserved = {name: FLOW_NONE for name in ("prompt", "model", "retry", "backoff", "schema")}
    assert proposer_adversary.violations("proposer", {"task_brief": FLOW_NONE, **reserved}) == []
    found = proposer_adversary.violations("proposer", {"task_brief": FLOW_NONE,
                                                       "prompt": flow("adversary")})
    assert _rules(found) == [("never-sees", "prompt")]


def test_never_sees(proposer_adversary: Policy) -> None:
    found = proposer_adversary.violations("proposer", {"task_brief": flow("adversary")})
    assert _rules(found) == [("never-sees", "task_brief")]
    assert found[0].message == (
        "`task_brief` carries output of `adversary`, which `proposer` must never see"
    )
    # Direct provenance only: a value the adversary merely influenced is not its output.
    assert proposer_adversary.violations(
        "proposer", {"task_brief": flow(via=("adversary",))}
    ) == []


def test_never_sees_indirectly() -> None:
    policy = _policy_of("- `writer` never sees `critic`, even indirectly")
    found = policy.violations("writer", {"brief": flow("summariser", via=("critic",))})
    assert _rules(found) == [("never-sees-indirectly", "brief")]
    assert "even indirectly" in found[0].message
    assert _rules(policy.violations("writer", {"brief": flow("critic")})) == [
        ("never-sees-indirectly", "brief")
    ]
    assert policy.violations("writer", {"brief": flow("writer")}) == []


def test_never_sees_and_even_indirectly_together() -> None:
    policy = _policy_of(
        "- `writer` is unaware of `critic`\n- `writer` never sees `critic`, even indirectly"
    )
    found = policy.violations("writer", {"brief": flow("summariser", via=("critic",))})
    assert _rules(found) == [("never-sees-indirectly", "brief")]


def test_unaware_of_literal_text(proposer_adversary: Policy) -> None:
    found = proposer_adversary.violations(
        "proposer", {"task_brief": FLOW_NONE}, ["Answer the brief.", "Expect an ATTACK on it."]
    )
    assert _rules(found) == [("unaware-of", None)]
    assert found[0].message == "literal text sent to `proposer` names `attack`"
    # Whole words only, case-insensitive; a dash separates words.
    assert proposer_adversary.violations(
        "proposer", {}, ["be adversarial", "attacker", "counterattack"]
    ) == []
    found = proposer_adversary.violations("proposer", {}, ["a Proposer-Adversary run"])
    assert sorted(violation.message for violation in found) == [
        "literal text sent to `proposer` names `adversary`",
        "literal text sent to `proposer` names `proposer-adversary`",
    ]
    # Each forbidden word is one violation, however many texts contain it.
    found = proposer_adversary.violations("proposer", {}, ["adversary", "the adversary", "attack"])
    assert sorted(violation.message.rsplit(" ", 1)[1] for violation in found) == [
        "`adversary`", "`attack`"
    ]
    # The adversary may be told anything.
    assert proposer_adversary.violations("adversary", {"proposal": FLOW_NONE,
                                                       "task_brief": FLOW_NONE},
                                         ["you attack the proposer"]) == []


def test_independence_in_both_directions() -> None:
    policy = _policy_of("- `writer` and `critic` are independent")
    assert _rules(policy.violations("writer", {"brief": flow("critic")})) == [("never-sees", "brief")]
    assert _rules(policy.violations("critic", {"draft": flow("writer")})) == [("never-sees", "draft")]
    assert policy.violations("critic", {"draft": flow(via=("writer",))}) == []


# --- requirement matching (LANGUAGE.md 1.1) ---------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "name", "matches"),
    [
        ("original task_brief", "task_brief", True),
        ("prior antithesis argument (if not first round)", "prior_antithesis", True),
        ("prior antithesis argument (if not first round)", "antithesis_argument", True),
        ("prior antithesis argument (if not first round)", "prior-antithesis-argument", True),
        ("prior antithesis argument (if not first round)", "Prior_Antithesis", True),
        ("original task_brief", "brief", True),  # consecutive words: a suffix matches
        ("task_brief", "task_brief", True),
        ("prior antithesis argument (if not first round)", "antithesis_prior", False),
        ("prior antithesis argument (if not first round)", "prior_argument", False),
        ("prior antithesis argument (if not first round)", "first_round", False),
        ("original task_brief", "task", True),
        ("original task_brief", "task_briefs", False),
        ("proposal", "proposals", False),
        ("proposal", "", False),
        ("proposal", "__", False),
    ],
)
def test_requirement_matching(entry: str, name: str, matches: bool) -> None:
    assert requirement_matches(entry, name) is matches


def test_requires_uses_the_same_matching(proposer_adversary: Policy) -> None:
    inputs = {"original_task_brief": FLOW_NONE, "proposal": FLOW_NONE}
    assert [v.rule for v in proposer_adversary.violations("adversary", inputs)] == ["sees-only"]


# --- the policy agrees with the linter on every leak fixture ----------------------------------

_LINT_CODES = {"PH601", "PH603", "PH604", "PH605", "PH606", "PH607"}


def _twins() -> list[Any]:
    params = []
    for path in leak_paths():
        for twin in load_leak_fixture(path):
            params.append(pytest.param(twin, id=f"{twin.channel}:{twin.kind}"))
    return params


@pytest.mark.parametrize("twin", _twins())
def test_policy_stops_exactly_the_calls_the_linter_reports(twin: Twin) -> None:
    pattern = twin.build()
    result = lint_text(pattern.text, "leak.prose.md")
    assert result.spec is not None and result.context is not None
    policy = compile_policy(result.spec)
    analysis = result.context.flow
    stopped: set[int] = set()
    reported: set[int] = set()
    diagnostics = [d for d in result.diagnostics if d.code in _LINT_CODES]
    for site in analysis.calls.values():
        if site.slot is None:
            continue
        inputs = {
            name: InputFlow(analysis.provenance(entry.value), analysis.transitive(entry.value))
            for name, entry in site.inputs.items()
        }
        literal = [text for text, _ in literal_texts(site.call)]
        if policy.violations(site.slot, inputs, literal):
            stopped.add(site.call.span.line)
        first = site.call.span.line
        last = max([first, *(prop.span.end_line for prop in site.call.properties)])
        if any(first <= d.span.line <= last for d in diagnostics):
            reported.add(first)
    assert stopped == reported
    if twin.kind == "clean":
        assert stopped == set()
    else:
        assert stopped
