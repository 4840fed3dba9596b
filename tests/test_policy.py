"""The compiled run-time Policy: compilation, JSON round-trip, violations, matching.

The linter asks the same `Policy.violations` about the flows it proves
possible (tests/test_leaks.py), and tests/test_soundness.py checks that the
linter's flows cover the run's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prose.lang.channels import Channel
from prose.lang.policy import (
    ForbiddenWord,
    Hidden,
    Policy,
    SlotPolicy,
    Violation,
    compile_policy,
)
from prose.lang.words import requirement_matches
from prose.spec import PatternSpec, load_spec, load_spec_file
from tests.conftest import ROOT
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


FLOW_NONE = Channel("", "input")


def flow(*direct: str, via: tuple[str, ...] = ()) -> Channel:
    """An input's provenance: `direct` slots, plus `via` slots reached only through calls."""
    return Channel("", "input", frozenset(direct), frozenset(direct) | frozenset(via))


def violations(policy: Policy, slot: str, inputs: dict[str, Channel],
               literal: list[str] | tuple[str, ...] = ()) -> list[Violation]:
    """`policy.violations` with channels named like call properties (`prompt`, `schema`,
    control properties skipped) and the pattern's literal text as one more channel."""
    channels = []
    for name, given in inputs.items():
        if name in ("model", "retry", "backoff"):
            continue
        kind = name if name in ("prompt", "schema") else "input"
        label = (name,) if kind == "input" else ()
        channels.append(Channel(name, kind, given.provenance, given.transitive, label))  # type: ignore[arg-type]
    if literal:
        channels.append(Channel("text", "prompt", literal=tuple(literal)))
    return policy.violations(slot, channels)


# --- compiling the shipped patterns --------------------------------------------------


def test_compile_proposer_adversary() -> None:
    policy = compile_policy(_spec(PATTERNS / "proposer-adversary.prose.md"))
    assert policy.pattern == "proposer-adversary"
    assert policy.independent == ()
    proposer = policy.slots["proposer"]
    assert (proposer.requires, proposer.sees_only) == (("task_brief",), ("task_brief",))
    assert [(h.other, h.form) for h in proposer.hidden] == [("adversary", "unaware-of")]
    assert proposer.never_sees == ("adversary",)
    assert [w.word for w in proposer.forbidden_words] == ["adversary", "attack", "proposer-adversary"]
    assert all(isinstance(w, ForbiddenWord) and w.other == "adversary" and w.line > 0
               for w in proposer.forbidden_words)
    adversary = policy.slots["adversary"]
    assert adversary.requires == ("proposal", "original task_brief")
    assert adversary.sees_only == ("task_brief", "proposal")
    assert (adversary.hidden, adversary.forbidden_words) == ((), ())


def test_compile_dialectic() -> None:
    policy = compile_policy(_spec(PATTERNS / "dialectic.prose.md"))
    assert policy.pattern == "dialectic"
    assert set(policy.slots) == {"thesis", "antithesis"}
    thesis, antithesis = policy.slots["thesis"], policy.slots["antithesis"]
    assert thesis.sees_only == ("task_brief", "prior_antithesis")
    assert antithesis.sees_only == ("task_brief", "prior_thesis")
    assert thesis.requires is not None and len(thesis.requires) == 2
    assert thesis.requires[0] == "task_brief"
    assert requirement_matches(thesis.requires[1], "prior_antithesis")
    # `thesis` and `antithesis` are never told `dialectic`: a word only, nobody hidden.
    assert thesis.hidden == () and [w.word for w in thesis.forbidden_words] == ["dialectic"]
    assert [w.word for w in antithesis.forbidden_words] == ["dialectic"]
    # The dialectic's own calls pass the policy: each side sees the other's latest argument.
    assert violations(policy, "thesis", {"task_brief": FLOW_NONE,
                                        "prior_antithesis": flow("antithesis"),
                                        "prompt": FLOW_NONE}) == []
    assert violations(policy, "antithesis", {"task_brief": FLOW_NONE,
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
    assert [h["other"] for h in data["slots"]["writer"]["hidden"]
            if h["form"] == "never-sees-indirectly"] == ["critic"]
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
    assert [(h.other, h.form) for h in writer.hidden] == [
        ("critic", "never-sees-indirectly"), ("critic", "independent")]
    assert writer.never_sees == ("critic",)  # from the independence
    assert critic.never_sees == ("writer",)  # unaware-of and independence, not twice
    assert [h.form for h in critic.hidden] == ["unaware-of", "independent"]
    # B's name, B's role (first noun of its `ensures`) and the pattern's name.
    assert [w.word for w in critic.forbidden_words] == ["writer", "draft", "duel"]
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
    return sorted((violation.rule, violation.channel) for violation in found)


def test_a_legal_call_has_no_violation(proposer_adversary: Policy) -> None:
    assert violations(proposer_adversary, "proposer", {"task_brief": FLOW_NONE}) == []
    assert violations(proposer_adversary,
        "adversary", {"task_brief": FLOW_NONE, "proposal": flow("proposer")}
    ) == []
    assert violations(proposer_adversary, "unknown-slot", {"anything": flow("adversary")}) == []


def test_requires_and_sees_only(proposer_adversary: Policy) -> None:
    found = violations(proposer_adversary, "proposer", {"task_brief": FLOW_NONE, "history": FLOW_NONE})
    assert _rules(found) == [("requires", "history"), ("sees-only", "history")]
    messages = {violation.rule: violation.message for violation in found}
    assert messages["requires"] == "`proposer` does not require `history`"
    assert messages["sees-only"] == "`proposer` sees only `task_brief`, not `history`"
    assert all(violation.slot == "proposer" for violation in found)


def test_sees_only_without_requires() -> None:
    policy = _policy_of("- `writer` sees only `brief`",
                        slots="- `writer`\n  - ensures: draft\n- `critic`\n  - ensures: verdict")
    assert _rules(violations(policy, "writer", {"brief": FLOW_NONE, "tone": FLOW_NONE})) == [
        ("sees-only", "tone")
    ]
    assert violations(policy, "critic", {"anything": FLOW_NONE}) == []


def test_reserved_properties_are_not_inputs_but_carry_provenance(proposer_adversary: Policy) -> None:
    reserved = {name: FLOW_NONE for name in ("prompt", "model", "retry", "backoff", "schema")}
    assert violations(proposer_adversary, "proposer", {"task_brief": FLOW_NONE, **reserved}) == []
    found = violations(proposer_adversary, "proposer", {"task_brief": FLOW_NONE,
                                                       "prompt": flow("adversary")})
    assert _rules(found) == [("never-sees", "prompt")]


def test_never_sees(proposer_adversary: Policy) -> None:
    found = violations(proposer_adversary, "proposer", {"task_brief": flow("adversary")})
    assert _rules(found) == [("never-sees", "task_brief")]
    assert found[0].message == (
        "`task_brief` carries output of `adversary`, which `proposer` must never see"
    )
    # Direct provenance only: a value the adversary merely influenced is not its output.
    assert violations(proposer_adversary,
        "proposer", {"task_brief": flow(via=("adversary",))}
    ) == []


def test_never_sees_indirectly() -> None:
    policy = _policy_of("- `writer` never sees `critic`, even indirectly")
    found = violations(policy, "writer", {"brief": flow("summariser", via=("critic",))})
    assert _rules(found) == [("never-sees-indirectly", "brief")]
    assert "even indirectly" in found[0].message
    assert _rules(violations(policy, "writer", {"brief": flow("critic")})) == [
        ("never-sees-indirectly", "brief")
    ]
    assert violations(policy, "writer", {"brief": flow("writer")}) == []


def test_never_sees_and_even_indirectly_together() -> None:
    policy = _policy_of(
        "- `writer` is unaware of `critic`\n- `writer` never sees `critic`, even indirectly"
    )
    found = violations(policy, "writer", {"brief": flow("summariser", via=("critic",))})
    assert _rules(found) == [("never-sees-indirectly", "brief")]


def test_unaware_of_literal_text(proposer_adversary: Policy) -> None:
    found = violations(proposer_adversary,
        "proposer", {"task_brief": FLOW_NONE}, ["Answer the brief.", "Expect an ATTACK on it."]
    )
    assert _rules(found) == [("unaware-of", "text")]
    assert found[0].message == "literal text sent to `proposer` names `attack` (in text)"
    # Whole words only, case-insensitive; a dash separates words.
    assert violations(proposer_adversary,
        "proposer", {}, ["be adversarial", "attacker", "counterattack"]
    ) == []
    found = violations(proposer_adversary, "proposer", {}, ["a Proposer-Adversary run"])
    assert sorted(violation.word or "" for violation in found) == ["adversary", "proposer-adversary"]
    # Each forbidden word is one violation, however many texts contain it.
    found = violations(proposer_adversary, "proposer", {}, ["adversary", "the adversary", "attack"])
    assert sorted(violation.word or "" for violation in found) == ["adversary", "attack"]
    # The adversary may be told anything.
    assert violations(proposer_adversary, "adversary", {"proposal": FLOW_NONE,
                                                       "task_brief": FLOW_NONE},
                                         ["you attack the proposer"]) == []


def test_independence_in_both_directions() -> None:
    policy = _policy_of("- `writer` and `critic` are independent")
    assert _rules(violations(policy, "writer", {"brief": flow("critic")})) == [("independent", "brief")]
    assert _rules(violations(policy, "critic", {"draft": flow("writer")})) == [("independent", "draft")]
    assert violations(policy, "critic", {"draft": flow(via=("writer",))}) == []
    # Strict mode: independence survives intermediaries (a summariser between them).
    strict = policy.with_strict(True)
    assert _rules(violations(strict, "critic", {"draft": flow(via=("writer",))})) == [
        ("independent", "draft")]


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
    assert [v.rule for v in violations(proposer_adversary, "adversary", inputs)] == ["sees-only"]


@pytest.mark.parametrize(
    ("entry", "name", "matches"),
    [
        ("summary of the attack, but never the raw attack", "summary", True),
        ("summary of the attack, but never the raw attack", "raw_attack", False),
        ("anything except the verdict", "verdict", False),
        ("the brief (not the notes)", "brief", True),
    ],
)
def test_a_negated_part_of_a_requires_entry_is_not_required(entry: str, name: str,
                                                          matches: bool) -> None:
    assert requirement_matches(entry, name) is matches


def test_unmerged_and_only_grows_are_part_of_the_policy() -> None:
    policy = _policy_of("- the result returns `writer` and `critic` unmerged\n"
                        "- `history` only grows")
    assert [(u.a, u.b) for u in policy.unmerged] == [("writer", "critic")]
    assert policy.only_grows == ("history",)
    found = violations(policy, "writer", {"a": flow("writer"), "b": flow("critic")})
    assert [v for v in _rules(found) if v[0] == "unmerged"] == [("unmerged", None)]
    assert Policy.from_dict(json.loads(json.dumps(policy.to_dict()))) == policy


def test_every_channel_counts_for_unaware_of(proposer_adversary: Policy) -> None:
    for kind in ("prompt", "schema", "ensures", "role"):
        channel = Channel(kind, kind, literal=("watch out for the adversary",))  # type: ignore[arg-type]
        found = proposer_adversary.violations("proposer", [channel])
        assert [(v.rule, v.channel) for v in found] == [("unaware-of", kind)], kind


def test_old_traces_policies_still_load() -> None:
    old = {"pattern": "p", "slots": {"a": {"slot": "a", "never_sees": ["b"],
                                           "never_sees_indirectly": ["c"],
                                           "forbidden_words": ["b"]}}}
    policy = Policy.from_dict(old)
    assert policy.slots["a"].hidden == (Hidden("b", "never-sees"),
                                        Hidden("c", "never-sees-indirectly"))
    assert [w.word for w in policy.slots["a"].forbidden_words] == ["b"]
    assert SlotPolicy("a").never_sees == ()
