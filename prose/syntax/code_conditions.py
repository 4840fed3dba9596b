"""Conditions that read as code but do not parse: an error with the fix, never a judge.

A condition that parses as an expression is evaluated deterministically. Text
that does not parse is discretion text for a judge model only when it reads
as prose: an author asks for a judge on purpose by writing the condition
between `**` markers (`if **the draft answers the brief**:`), or in plain
words. Unmarked text with an operator character (`=`, `<`, `>`, `!`, `&`,
`|`, `+`, `*`, `/`, `%`, `[`, `]`) or a dotted name (`verdict.approve`), or
whose `is` test names no test, reads as code: `code_problem` says what is wrong
and how to write it, and the linter (PS200) and the run time (R043) refuse it.
"""

from __future__ import annotations

import re

from prose.spelling import closest

_OPERATOR_CHARS = re.compile(r"[=<>!&|+*/%\[\]]")
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_]")
_SINGLE_EQUALS = re.compile(r"(?<![=!<>])=(?!=)")
_IS_TEST = re.compile(r"\bis\s+(not\s+)?([A-Za-z_]+)")
_TEST_WORDS = ("null", "empty", "absent", "present")
_SPELLINGS = (("&&", "and"), ("||", "or"), ("===", "=="), ("!==", "!="), ("<>", "!="))
JUDGE_HINT = "for a judge's decision, write the condition between `**` markers"


def code_problem(text: str) -> str | None:
    """Why `text` (a condition that did not parse) is broken code, or None for prose."""
    for wrong, right in _SPELLINGS:
        if wrong in text:
            return f"`{wrong}` is not an operator here: write `{right}`"
    if _SINGLE_EQUALS.search(_without_strings(text)):
        fixed = _SINGLE_EQUALS.sub("==", text)
        return f"`=` assigns; to compare, write `==`: `{_squeeze(fixed)}`"
    if re.search(r"(?<![=!<>])!(?!=)", _without_strings(text)):
        return "`!` is not an operator here: write `not`"
    for match in _IS_TEST.finditer(text):
        word = match.group(2)
        if word not in _TEST_WORDS:
            guess = closest(word, _TEST_WORDS)
            if guess is not None:
                return (f"`is {match.group(1) or ''}{word}` is not a test: did you mean "
                        f"`is {match.group(1) or ''}{guess}`?")
    bare = _without_strings(text)
    if _OPERATOR_CHARS.search(bare) or _DOTTED.search(bare):
        return "it reads as code but is not an expression (an operator or a name out of place)"
    return None


def _without_strings(text: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)


def _squeeze(text: str) -> str:
    return re.sub(r"\s*==\s*", " == ", text)
