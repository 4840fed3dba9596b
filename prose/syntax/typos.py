"""A misspelt statement keyword, named at the typo with the keyword it most resembles.

`cal writer` or `lopo until done (max: 3):` does not parse, and the parser's own
view of the failure points elsewhere (the word after it, or the block above).
When a line that failed starts with a word that is no keyword but is close to
one (`prose.spelling`), and is not the start of an assignment (`x = ...`,
`x.y = ...`, `x[0] = ...`), the error is about that word.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from prose.spelling import closest

_FIRST_WORD = re.compile(r"^(?P<indent>[ ]*)(?P<word>[A-Za-z_][A-Za-z0-9_-]*)(?P<rest>.*)$")
# What follows the first word of an assignment: `=`, `.`, `[` (after optional spaces).
_ASSIGNMENT = re.compile(r"^\s*(=|\.|\[)")


@dataclass(frozen=True, slots=True)
class KeywordTypo:
    """A word at `column` (1-based) that is probably the keyword `keyword`."""

    column: int
    word: str
    keyword: str

    @property
    def message(self) -> str:
        return f"unknown statement `{self.word}`; did you mean `{self.keyword}`?"


def keyword_typo(line: str, keywords: Collection[str]) -> KeywordTypo | None:
    """The misspelt statement keyword that starts `line`, if it plainly is one."""
    found = _FIRST_WORD.match(line)
    if found is None:
        return None
    word, rest = found["word"], found["rest"]
    if word in keywords or _ASSIGNMENT.match(rest):
        return None  # a keyword, or the start of an assignment
    keyword = closest(word, keywords, cutoff=0.75)
    if keyword is None:
        return None
    return KeywordTypo(len(found["indent"]) + 1, word, keyword)
