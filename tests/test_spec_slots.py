"""Slots: requires matching (LANGUAGE.md 1.1), optional entries, output schemas, role words."""

from __future__ import annotations

import pytest

from prose.source import Span
from prose.spec import Requirement, Slot, load_spec
from prose.spec.slots import output_schema, parse_requirements, role_word

SPAN = Span("t.prose.md", 1, 1, 1, 2)


def _entry(text: str) -> Requirement:
    (entry,), declared = parse_requirements(text, 1, 1, "t.prose.md")
    assert declared
    return entry


@pytest.mark.parametrize(
    ("name", "entry"),
    [
        ("task_brief", "original task_brief"),
        ("task_brief", "task_brief"),
        ("prior_antithesis", "prior antithesis argument (if not first round)"),
        ("prior-thesis", "prior thesis argument"),
        ("Task_Brief", "ORIGINAL task brief"),
        ("proposal", "proposal"),
        ("brief", "original task_brief"),
    ],
)
def test_an_input_matches_when_its_words_occur_consecutively(name: str, entry: str) -> None:
    assert _entry(entry).matches(name)


@pytest.mark.parametrize(
    ("name", "entry"),
    [
        ("brief_task", "original task_brief"),  # the words must keep their order
        ("prior_argument", "prior antithesis argument"),  # and be consecutive
        ("round", "prior antithesis argument (if not first round)"),  # not from the condition
        ("task_briefs", "task_brief"),  # whole words only
        ("", "task_brief"),
    ],
)
def test_an_input_does_not_match_otherwise(name: str, entry: str) -> None:
    assert not _entry(entry).matches(name)


def test_a_parenthesised_condition_marks_the_entry_optional() -> None:
    entries, _ = parse_requirements(
        "task_brief, prior antithesis argument (if not first round)", 13, 15, "d.prose.md"
    )
    brief, prior = entries
    assert (brief.text, brief.name, brief.optional, brief.condition) == (
        "task_brief",
        "task_brief",
        False,
        None,
    )
    assert (prior.text, prior.name, prior.optional) == ("prior antithesis argument", None, True)
    assert prior.condition == "if not first round"
    assert prior.matches("prior_antithesis")
    assert (prior.span.line, prior.span.column) == (13, 27)


def test_the_word_optional_also_marks_an_entry_optional() -> None:
    entry = _entry("optional critique from previous attempt")
    assert entry.optional and entry.condition is None
    assert entry.matches("critique")


def test_entries_split_on_commas_outside_parentheses_and_drop_a_leading_and() -> None:
    entries, _ = parse_requirements(
        "draft, notes (if any, when present), and task_brief.", 1, 1, "f"
    )
    assert [(e.text, e.condition) for e in entries] == [
        ("draft", None),
        ("notes", "if any, when present"),
        ("task_brief", None),
    ]


def test_requires_none_declares_an_empty_list() -> None:
    entries, declared = parse_requirements("none", 1, 1, "f")
    assert entries == [] and declared


def test_slot_accepts_follows_its_requires() -> None:
    slot = Slot(
        name="adversary",
        span=SPAN,
        requires=[_entry("proposal"), _entry("original task_brief")],
        requires_declared=True,
    )
    assert slot.accepts("proposal") and slot.accepts("task_brief")
    assert not slot.accepts("proposer_notes")
    found = slot.requirement_for("task_brief")
    assert found is not None and found.text == "original task_brief"
    assert Slot(name="free", span=SPAN).accepts("anything")  # no `requires:` line
    assert not Slot(name="closed", span=SPAN, requires_declared=True).accepts("x")


@pytest.mark.parametrize(
    ("ensures", "schema"),
    [
        (
            "verdict object with `accept` (boolean), `notes` (string)",
            {"accept": "boolean", "notes": "string"},
        ),
        (
            "review object with `score` (number) and `issues` (string[]).",
            {"score": "number", "issues": "string[]"},
        ),
        (
            "an object with `a` (string), `b` (integer), and `c` (boolean)",
            {"a": "string", "b": "integer", "c": "boolean"},
        ),
        ("ruling object with `accept` (boolean)", {"accept": "boolean"}),
        (
            'review object with `verdict` ("PASS" | "FAIL"), `notes` (string?)',
            {"verdict": '"PASS" | "FAIL"', "notes": "string?"},
        ),
        (
            'plan object with `subtasks` ({ kind: "code" | "docs", instruction: string }[]) '
            "and `risk` (({ level: integer }))",
            {
                "subtasks": '{ kind: "code" | "docs", instruction: string }[]',
                "risk": "({ level: integer })",
            },
        ),
    ],
)
def test_an_ensures_of_the_object_with_form_declares_a_schema(
    ensures: str, schema: dict[str, str]
) -> None:
    assert output_schema(ensures) == (schema, False)


@pytest.mark.parametrize(
    ("ensures", "malformed"),
    [
        ("proposal text", False),
        ("an object describing the plan", False),
        ("verdict object with `accept`, notes", True),
        ("verdict object with `accept` (boolean), notes (string)", True),
        ("verdict object with `accept` (boolean", True),
        ("verdict object with `accept` (boolean) `notes` (string)", True),
    ],
)
def test_other_ensures_declare_no_schema(ensures: str, malformed: bool) -> None:
    assert output_schema(ensures) == (None, malformed)


@pytest.mark.parametrize(
    ("ensures", "word"),
    [
        ("attack identifying flaws, edge cases, and counterexamples", "attack"),
        ("proposal text", "proposal"),
        ("argument for the position", "argument"),
        ("an independent analysis of the outcome", "analysis"),
        ("structured verdict with accept/reject, reasoning", "verdict"),
        ("proposed next step", "step"),
        ("classified_assumption_map", "classified_assumption_map"),
        ("ruling object with `accept` (boolean)", "ruling"),
        ("object with `accept` (boolean)", None),
        ("{'decision': 'continue'}, adjust, or abort", "decision"),
        ("", None),
    ],
)
def test_the_role_word_is_the_first_noun_of_ensures(ensures: str, word: str | None) -> None:
    assert role_word(ensures) == word


def test_slot_markers_primary_and_list_in_any_order() -> None:
    text = (
        "---\nname: m\nkind: pattern\nversion: 1\n---\n# M\n\n### Slots\n\n"
        "- `a` (list, primary)\n  - ensures: thing\n- `b` ( List )\n  - ensures: thing\n"
        "\n### Delegation\n\n```prose\nreturn {}\n```\n"
    )
    result = load_spec(text, "m.prose.md")
    assert result.diagnostics == []
    assert result.spec is not None
    a, b = result.spec.slots
    assert (a.primary, a.list_valued, a.markers) == (True, True, ["list", "primary"])
    assert (b.primary, b.list_valued) == (False, True)
    assert a.requires == [] and not a.requires_declared


def test_a_typed_output_schema_loads_and_a_bad_type_says_why() -> None:
    from prose.spec import load_spec

    head = "---\nname: t\nkind: pattern\nversion: 0.1.0\n---\n\n# T\n\nA test.\n\n### Slots\n\n"
    tail = "\n### Delegation\n\n```prose\nlet p = call planner\n  task: task\nreturn { result: p }\n```\n"
    good = load_spec(
        head
        + "- `planner` (primary)\n  - requires: task\n"
        + '  - ensures: plan object with `subtasks` ({ kind: "code" | "docs", instruction: string }[])\n'
        + tail,
        "t.prose.md",
    )
    assert [d.code for d in good.diagnostics if d.code.startswith("PS12")] == []
    assert good.spec is not None
    [planner] = good.spec.slots
    assert planner.output_schema == {"subtasks": '{ kind: "code" | "docs", instruction: string }[]'}
    bad = load_spec(
        head + "- `planner` (primary)\n  - requires: task\n"
        "  - ensures: plan object with `subtasks` ({ kind: \"code\", instruction: strng }[])\n" + tail,
        "t.prose.md",
    )
    [found] = [d for d in bad.diagnostics if d.code == "PS127"]
    assert "unknown type `strng`; did you mean `string`?" in found.message
