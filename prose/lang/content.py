"""The content check: what counts as a hidden output's *novel* text, and how a message is
searched for it (docs/language.md, "The content check").

Labels decide who may receive what. The content check is defence in depth behind them:
before a request is sent, the run time looks in the rendered messages for text that a
slot the receiver must never see was the first to write. If it finds some, the labels
missed a flow, and the call is stopped (R010) all the same.

The rule, in terms of *shingles* (every run of `SHINGLE` characters of a text after
`normalise`):

- the novel text of a call's output is its shingles that are in none of: the messages
  that call was sent, the pattern file's own text, the run's inputs;
- a shingle of a message to `S` counts against `S` when it is novel text of an output
  of a slot `S` must never see (any form of `never sees`, `is unaware of`, `are
  independent`) and no other slot's output holds it (text that another call wrote too
  crossed a call boundary, as `never sees` allows, or is common to both);
- a message is probed at every `STRIDE`-th position, so any novel run of at least
  `GUARANTEED` characters copied into a message is found; shorter runs may be.

Bounded cost: an output's first `MAX_INDEXED` characters are indexed (a set of integer
hashes), a message's probes are `len / STRIDE` set lookups, and both are skipped when no
slot of the pattern is hidden from another.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

SHINGLE = 12
STRIDE = 4
GUARANTEED = SHINGLE + STRIDE - 1
MAX_INDEXED = 65_536
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Case and runs of white space do not make text new (`A  B` is `a b`)."""
    return _SPACE.sub(" ", text).casefold()


def shingles(text: str) -> set[int]:
    """Every shingle of `text` (normalised), as hashes."""
    return _hashes(normalise(text[:MAX_INDEXED]), 1)


def probes(text: str) -> set[int]:
    """The shingles of `text` at every `STRIDE`-th position: enough to meet any run of
    `GUARANTEED` characters that some indexed text holds."""
    return _hashes(normalise(text), STRIDE)


def _hashes(flat: str, step: int) -> set[int]:
    """The hashes of `flat`'s shingles starting at every `step`-th position. Built from
    `map` over slices so that no Python bytecode runs per position (this is on every
    model call's path)."""
    starts = max(len(flat) - SHINGLE + 1, 0)
    cuts = map(slice, range(0, starts, step), range(SHINGLE, starts + SHINGLE, step))
    return set(map(hash, map(flat.__getitem__, cuts)))


def novel(output: Iterable[str], known: set[int]) -> set[int]:
    """The shingles of an output's texts that `known` (what the call was given, the
    pattern's text, the run's inputs) does not hold."""
    found: set[int] = set()
    for text in output:
        found |= shingles(text)
    return found - known
