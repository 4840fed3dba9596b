"""Words of names and phrases: `requires:` matching (LANGUAGE.md 1.1) and whole-word search."""

from __future__ import annotations

import re
from functools import lru_cache

# Words after which the rest of a `requires:` entry is excluded, not required:
# "summary of the attack, but never the raw attack" requires `summary`, not `attack`.
NEGATIONS = frozenset({"never", "not", "no", "without", "except", "excluding"})


def words(text: str) -> list[str]:
    """Lower-case words of a name or phrase (split on `_`, `-` and non-letters)."""
    return [word for word in re.split(r"[^a-z0-9]+", text.lower()) if word]


def entry_words(entry: str) -> list[str]:
    """The words of a `requires:` entry that an input name may match.

    Text in parentheses (a condition) is not part of them, nor anything from
    a negation on ("but never the raw attack").
    """
    found = words(re.sub(r"\([^)]*\)", " ", entry))
    for position, word in enumerate(found):
        if word in NEGATIONS:
            return found[:position]
    return found


@lru_cache(maxsize=4096)
def requirement_matches(entry: str, input_name: str) -> bool:
    """LANGUAGE.md 1.1: the input name's words occur consecutively in the entry's words.

    Cached: the run-time check asks it for every input of every call, and a pattern's
    entries and input names are few."""
    name_words = words(input_name)
    candidates = entry_words(entry)
    if not name_words:
        return False
    width = len(name_words)
    return any(
        candidates[start : start + width] == name_words
        for start in range(len(candidates) - width + 1)
    )


# Not a letter or digit on either side, as `[A-Za-z0-9]` means under `re.IGNORECASE`: the
# ASCII ones and the 4 others that case-fold to them (`İ`, `ı`, `ſ`, the Kelvin sign; the
# `re` docs list them). Spelled out so that only the word is compiled ignoring case: the
# case-blind character class cost 1.5 ms a word to compile, a tenth of a cold lint's regexes.
_FOLDING_LETTERS = "\u0130\u0131\u017f\u212a"
_NOTHING_BEFORE = "(?<![A-Za-z0-9])" + "".join(f"(?<!{letter})" for letter in _FOLDING_LETTERS)
_NOTHING_AFTER = "(?![A-Za-z0-9])" + "".join(f"(?!{letter})" for letter in _FOLDING_LETTERS)


@lru_cache(maxsize=512)
def whole_word(word: str) -> re.Pattern[str]:
    """`word` as a whole word, ignoring case; `_` and `-` separate words (LANGUAGE.md 1.1)."""
    return re.compile(f"{_NOTHING_BEFORE}(?i:{re.escape(word)}){_NOTHING_AFTER}")


@lru_cache(maxsize=4096)
def names_word(text: str, word: str) -> bool:
    """Whether `text` contains `word` as a whole word, ignoring case.

    Cached: the run-time check asks it of every literal text of every call, and a
    pattern's literal texts and forbidden words are few."""
    return whole_word(word).search(text) is not None
