"""The embedded model eval's own rules (bench/embedded_eval.py), which need no model."""

from __future__ import annotations

from bench.embedded_eval import is_copy, stance


def test_a_negated_should_reads_as_against() -> None:
    # Until 2026-12-02 "should not" counted once for and once against: a tie, "unclear".
    assert stance("A small team should not write its own test framework.") == "against"
    assert stance("Teams shouldn't freeze deploys on Fridays.") == "against"
    assert stance("A small team should write its own test framework.") == "for"
    assert stance("It should, not least because it helps the team.") == "for"
    assert stance("Here is an example of a debate.") == "unclear"


def test_only_the_first_sentence_decides_the_stance() -> None:
    assert stance("Remote work is better. But it has risks, drawbacks and downsides.") == "for"


def test_a_counter_that_repeats_the_argument_is_a_copy() -> None:
    argument = "Remote work is better because people focus at home."
    assert is_copy(argument, "Remote work is better because people focus at home!")
    assert not is_copy(argument, "Offices build trust that video calls cannot.")
