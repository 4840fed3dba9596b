"""The checkable invariant forms of LANGUAGE.md section 5."""

from __future__ import annotations

import dataclasses

import pytest

from prose.lang.invariants import (
    AtMostOne,
    BlindTo,
    PairwiseIndependent,
    RunsOnlyAfter,
    RunsOnlyIf,
    SameInput,
)
from prose.spec import (
    Independent,
    LoopsBoundedBy,
    NeverSees,
    OnlyGrows,
    ReturnsUnmerged,
    SeesOnly,
    UnawareOf,
    load_spec,
    parse_invariant_form,
)


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("`critic` sees only `draft`, `criteria`", SeesOnly(slot="critic", inputs=("draft", "criteria"))),
        ("`critic` sees only `draft` and `criteria`.", SeesOnly(slot="critic", inputs=("draft", "criteria"))),
        ("`critic` sees only `a`, `b`, and `c`", SeesOnly(slot="critic", inputs=("a", "b", "c"))),
        ("`critic` sees only `draft`", SeesOnly(slot="critic", inputs=("draft",))),
        ("`worker` never sees `critic`", NeverSees(slot="worker", other="critic")),
        ("`worker` Never Sees `critic`.", NeverSees(slot="worker", other="critic")),
        (
            "`worker` never sees `critic`, even indirectly",
            NeverSees(slot="worker", other="critic", indirectly=True),
        ),
        (
            "`worker` never sees `critic` even indirectly.",
            NeverSees(slot="worker", other="critic", indirectly=True),
        ),
        ("`proposer` is unaware of `adversary`", UnawareOf(slot="proposer", other="adversary")),
        ("`thesis` and `antithesis` are independent", Independent(a="thesis", b="antithesis")),
        ("`thesis`, `antithesis` are independent.", Independent(a="thesis", b="antithesis")),
        ("every loop is bounded by `max_rounds`", LoopsBoundedBy(config_key="max_rounds")),
        ("Every loop is bounded by `max_rounds`.", LoopsBoundedBy(config_key="max_rounds")),
        (
            "every loop is bounded by `depth`, `k` or `beam`",
            LoopsBoundedBy(config_key="depth", others=("k", "beam")),
        ),
        ("`history` only grows", OnlyGrows(name="history")),
        ("  `history`   only grows . ", OnlyGrows(name="history")),
        ("the result returns `proposer` and `adversary` unmerged", ReturnsUnmerged(a="proposer", b="adversary")),
        ("The result returns `a`, `b` unmerged.", ReturnsUnmerged(a="a", b="b")),
        ("`a`, `b`, `c` are pairwise independent", PairwiseIndependent(slots=("a", "b", "c"))),
        ("`a`, `b` and `c` are all pairwise independent.", PairwiseIndependent(slots=("a", "b", "c"))),
        ("`judge` is blind to the source of `samplers`", BlindTo(slot="judge", sources="samplers")),
        ("`writer` runs only if `gate.ok`", RunsOnlyIf(slot="writer", condition=("gate", "ok"))),
        ("`writer` runs only when `ready`.", RunsOnlyIf(slot="writer", condition=("ready",))),
        (
            "`executor` runs only after `approver` returns `approved` == true",
            RunsOnlyAfter(slot="executor", approver="approver", field="approved", value=True),
        ),
        (
            "`executor` runs only after `approver` returns `approved == true`",
            RunsOnlyAfter(slot="executor", approver="approver", field="approved", value=True),
        ),
        (
            '`ship` runs only after `qa` returns `status` == "pass"',
            RunsOnlyAfter(slot="ship", approver="qa", field="status", value="pass"),
        ),
        (
            "`executor` gets the same `proposal` `approver` got",
            SameInput(slot="executor", input="proposal", approver="approver"),
        ),
        (
            "at most one of `billing`, `technical`, `general` runs",
            AtMostOne(slots=("billing", "technical", "general")),
        ),
        (
            "At most one of `billing` and `general` runs per iteration.",
            AtMostOne(slots=("billing", "general"), per_iteration=True),
        ),
    ],
)  # fmt: skip
def test_each_checkable_form_is_parsed(text: str, form: object) -> None:
    assert parse_invariant_form(text) == form


@pytest.mark.parametrize(
    "text",
    [
        "critic never sees worker",  # names must be in backticks
        "`critic` never sees worker",
        "critic sees only `draft`",
        "`critic` sees only",
        "`critic` never sees `worker` on Tuesdays",
        "The retry loop is bounded by `max_retries`",  # not the `every loop` form
        "Neither service knows it is part of a dialectic",
        "`a` and `b` and `c` are independent",
        "`writer` runs only if the gate passed",  # the condition must be a backticked path
        "at most one of `billing` runs",  # one name is no set
        "exactly one of `billing`, `general` runs",
        "",
    ],
)
def test_other_bullets_are_natural_language(text: str) -> None:
    assert parse_invariant_form(text) is None


def test_every_form_class_is_in_the_union_and_compiles() -> None:
    """The forms are `prose.lang.invariants`' frozen dataclasses; `compile_policy` matches
    every one of them (its `match` ends in `assert_never`, so a form it does not handle is a
    type error and, here, an AssertionError)."""
    import typing

    from prose.lang import invariants
    from prose.lang.policy import compile_policy

    assert set(typing.get_args(invariants.InvariantForm)) == set(invariants.FORMS)
    bullets = [
        "`a` sees only `x`", "`a` never sees `b`, even indirectly", "`a` is unaware of `b`",
        "`a` and `b` are independent", "`a` and `b` are independently configured",
        "each `a` sees only its own chain", "each of `a` sees only its predecessor's output",
        "every loop is bounded by `n`", "`h` only grows", "the result returns `a` and `b` unmerged",
        "`a`, `b`, `c` are pairwise independent", "`a` runs only if `g.ok`",
        "`a` runs only after `b` returns `approved` == true", "`a` gets the same `p` `b` got",
        "at most one of `a`, `b` runs", "`a` is blind to the source of `b`",
        "each `a` never sees its own round", "no call receives `a`", "`a` is never told `w`",
        "`a` returns `x` as one of \"y\", \"z\"", "the result satisfies `result is not null`",
        "`a` never runs after `b` returns", "`a` run one at a time in binding order",
        "`a` only reads", "no model chooses `k`",
        "the returned `result` carries only `a`",
        "`h` grows only after `b` returns `ok` == true",
        "each chain of `a` gets the same sequence of `m`",
        "each of `a` gets its item of `xs` as `x`",
        "the returned `result` holds the outputs of `a` in binding order",
    ]
    parsed = [parse_invariant_form(text) for text in bullets]
    assert {type(form) for form in parsed} == set(invariants.FORMS)
    for form in parsed:
        assert form is not None and dataclasses.is_dataclass(form)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(form, dataclasses.fields(form)[0].name, "z")
    spec = load_spec(SPEC.format(bullets="\n".join(f"- {text}" for text in bullets)), "p.prose.md").spec
    assert spec is not None and [type(i.form) for i in spec.invariants] == list(map(type, parsed))
    policy = compile_policy(spec)
    assert policy.only_grows == ("h",) and [(u.a, u.b) for u in policy.unmerged] == [("a", "b")]
    assert [rule.expression for rule in policy.results] == ["result is not null"]


SPEC = """---
name: p
kind: pattern
version: 0.1.0
---

# P

A test pattern.

### Slots

- `a`
- `b`

### Config

- `n` (integer, default: 2): rounds

### Invariants

{bullets}

### Parameters

- None.

### Returns

- `result`: anything

### Delegation

```prose
return {{ result: 1 }}
```
"""


def test_slot_names_lists_the_names_that_must_be_slots() -> None:
    assert SeesOnly(slot="a", inputs=("x",)).slot_names() == ("a",)
    assert NeverSees(slot="a", other="b").slot_names() == ("a", "b")
    assert Independent(a="a", b="b").slot_names() == ("a", "b")
    assert LoopsBoundedBy(config_key="n").slot_names() == ()
    assert OnlyGrows(name="h").slot_names() == ()
