"""Did-you-mean: the known word closest to a misspelt one.

One rule for every place that names an unknown word (a keyword, a variable,
an instance key, a script key, a slot): a candidate is offered when it is
close by `difflib`'s ratio (0.6 or more, its default cutoff) or differs by one
edit of two adjacent letters swapped (`lopo` for `loop`), the closest first.
No dependencies, so every layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterable

CUTOFF = 0.6


def _swapped(word: str, candidate: str) -> bool:
    """`word` is `candidate` with two adjacent letters swapped."""
    if len(word) != len(candidate) or word == candidate:
        return False
    diffs = [i for i, (a, b) in enumerate(zip(word, candidate, strict=True)) if a != b]
    return (
        len(diffs) == 2
        and diffs[1] == diffs[0] + 1
        and word[diffs[0]] == candidate[diffs[1]]
        and word[diffs[1]] == candidate[diffs[0]]
    )


def closest(word: str, candidates: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The candidate most like `word` (not `word` itself), or None when none is close."""
    pool = sorted({c for c in candidates if c and c != word})
    for candidate in pool:
        if _swapped(word, candidate):
            return candidate
    folded = {c.lower().replace("-", "_"): c for c in pool}
    key = word.lower().replace("-", "_")
    if key in folded:  # `Red-Team` for `red_team`
        return folded[key]
    import difflib  # here: a clean file never asks, and its import was ~3 ms of a cold lint

    found = difflib.get_close_matches(key, list(folded), n=1, cutoff=cutoff)
    return folded[found[0]] if found else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`"; did you mean `x`?"` for the closest candidate, or "" when none is close."""
    found = closest(word, candidates)
    return f"; did you mean `{found}`?" if found else ""
