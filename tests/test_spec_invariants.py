"""The checkable invariant forms of LANGUAGE.md section 5."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from prose.spec import (
    Independent,
    InvariantForm,
    LoopsBoundedBy,
    NeverSees,
    OnlyGrows,
    ReturnsUnmerged,
    SeesOnly,
    UnawareOf,
    parse_invariant_form,
)


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("`critic` sees only `draft`, `criteria`", SeesOnly(slot="critic", inputs=["draft", "criteria"])),
        ("`critic` sees only `draft` and `criteria`.", SeesOnly(slot="critic", inputs=["draft", "criteria"])),
        ("`critic` sees only `a`, `b`, and `c`", SeesOnly(slot="critic", inputs=["a", "b", "c"])),
        ("`critic` sees only `draft`", SeesOnly(slot="critic", inputs=["draft"])),
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
        ("`history` only grows", OnlyGrows(name="history")),
        ("  `history`   only grows . ", OnlyGrows(name="history")),
        ("the result returns `proposer` and `adversary` unmerged", ReturnsUnmerged(a="proposer", b="adversary")),
        ("The result returns `a`, `b` unmerged.", ReturnsUnmerged(a="a", b="b")),
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
        "",
    ],
)
def test_other_bullets_are_natural_language(text: str) -> None:
    assert parse_invariant_form(text) is None


def test_forms_round_trip_through_the_discriminated_union() -> None:
    adapter: TypeAdapter[InvariantForm] = TypeAdapter(InvariantForm)
    for form in (
        SeesOnly(slot="a", inputs=["x"]),
        NeverSees(slot="a", other="b", indirectly=True),
        UnawareOf(slot="a", other="b"),
        Independent(a="a", b="b"),
        LoopsBoundedBy(config_key="n"),
        OnlyGrows(name="h"),
        ReturnsUnmerged(a="a", b="b"),
    ):
        assert adapter.validate_python(form.model_dump()) == form


def test_slot_names_lists_the_names_that_must_be_slots() -> None:
    assert SeesOnly(slot="a", inputs=["x"]).slot_names() == ("a",)
    assert NeverSees(slot="a", other="b").slot_names() == ("a", "b")
    assert Independent(a="a", b="b").slot_names() == ("a", "b")
    assert LoopsBoundedBy(config_key="n").slot_names() == ()
    assert OnlyGrows(name="h").slot_names() == ()
