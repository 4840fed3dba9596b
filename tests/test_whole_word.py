"""`whole_word` (prose/lang/words.py) finds what `[A-Za-z0-9]` boundaries under
`re.IGNORECASE` find: the pattern spells the class out so that it compiles fast."""

from __future__ import annotations

import re

import pytest

from prose.lang.words import names_word, whole_word


def _case_blind(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", re.I)


@pytest.mark.parametrize("word", ["ssn", "k", "api key", "secret_token", "ab", "i", "x-y"])
def test_every_neighbour_up_to_u3000_is_judged_as_the_case_blind_class_does(word: str) -> None:
    fast, reference = whole_word(word), _case_blind(word)
    for point in range(0x3000):
        for text in (chr(point) + word, word + chr(point), chr(point) + word.upper()):
            found, expected = fast.search(text), reference.search(text)
            assert (found and found.span()) == (expected and expected.span()), (word, hex(point))


def test_the_folding_letters_are_letters_beside_a_word() -> None:
    for letter in "\u0130\u0131\u017f\u212a":
        assert not names_word(f"{letter}ssn", "ssn")
        assert not names_word(f"ssn{letter}", "ssn")
    assert names_word("the SSN-number", "ssn")
    assert names_word("\u017fsn", "ssn")  # `ſ` is an `s` ignoring case, as `re` has it
