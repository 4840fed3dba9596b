"""The parser of LANGUAGE.md section 5's checkable invariant forms (the forms themselves
are `prose.lang.invariants`' dataclasses).

Parsing is tolerant of case, repeated spaces, a trailing period and `and`
versus `,` between names, and strict about backticks: a name that is not in
backticks never makes a bullet checkable.
"""

from __future__ import annotations

import re

from prose.lang.invariants import (
    DistinctModels,
    Independent,
    InvariantForm,
    LoopsBoundedBy,
    NeverSees,
    OnlyGrows,
    OwnChain,
    Predecessor,
    ReturnsUnmerged,
    SeesOnly,
    UnawareOf,
)

__all__ = [
    "DistinctModels", "Independent", "InvariantForm", "LoopsBoundedBy", "NeverSees",
    "OnlyGrows", "OwnChain", "Predecessor", "ReturnsUnmerged", "SeesOnly", "UnawareOf",
    "backticked_names", "parse_invariant_form",
]


_NAME = r"`([A-Za-z_][\w-]*)`"
_NAME_PLAIN = r"`[A-Za-z_][\w-]*`"
_SEP = r"\s*(?:,\s*and\b|,|\band\b)\s*"

_SEES_ONLY = re.compile(rf"^{_NAME}\s+sees\s+only\s+({_NAME_PLAIN}(?:{_SEP}{_NAME_PLAIN})*)$", re.I)
_NEVER_SEES = re.compile(rf"^{_NAME}\s+never\s+sees\s+{_NAME}(\s*,?\s*even\s+indirectly)?$", re.I)
_UNAWARE = re.compile(rf"^{_NAME}\s+is\s+unaware\s+of\s+{_NAME}$", re.I)
_INDEPENDENT = re.compile(rf"^{_NAME}{_SEP}{_NAME}\s+are\s+independent$", re.I)
_DISTINCT = re.compile(
    rf"^{_NAME}{_SEP}{_NAME}\s+(?:are\s+independently\s+configured|run\s+on\s+distinct\s+models)$",
    re.I,
)
_OWN_CHAIN = re.compile(rf"^(?:each\s+)?{_NAME}\s+sees\s+only\s+its\s+own\s+(?:chain|branch)$", re.I)
_PREDECESSOR = re.compile(
    rf"^each\s+(?:of\s+)?{_NAME}\s+sees\s+only\s+its\s+predecessor'?s?(?:\s+output)?$", re.I
)
_BOUNDED = re.compile(rf"^every\s+loop\s+is\s+bounded\s+by\s+{_NAME}$", re.I)
_GROWS = re.compile(rf"^{_NAME}\s+only\s+grows$", re.I)
_UNMERGED = re.compile(rf"^the\s+result\s+returns\s+{_NAME}{_SEP}{_NAME}\s+unmerged$", re.I)
_ANY_NAME = re.compile(_NAME)


def _normalise(text: str) -> str:
    text = " ".join(text.split())
    return text.rstrip(" .;!").strip()


def parse_invariant_form(text: str) -> InvariantForm | None:
    """The checkable form `text` is written in, or None for natural language."""
    text = _normalise(text)
    if "`" not in text:
        return None
    if match := _SEES_ONLY.match(text):
        return SeesOnly(slot=match.group(1), inputs=tuple(_ANY_NAME.findall(match.group(2))))
    if match := _NEVER_SEES.match(text):
        return NeverSees(slot=match.group(1), other=match.group(2), indirectly=bool(match.group(3)))
    if match := _UNAWARE.match(text):
        return UnawareOf(slot=match.group(1), other=match.group(2))
    if match := _INDEPENDENT.match(text):
        return Independent(a=match.group(1), b=match.group(2))
    if match := _DISTINCT.match(text):
        return DistinctModels(a=match.group(1), b=match.group(2))
    if match := _OWN_CHAIN.match(text):
        return OwnChain(slot=match.group(1))
    if match := _PREDECESSOR.match(text):
        return Predecessor(slot=match.group(1))
    if match := _BOUNDED.match(text):
        return LoopsBoundedBy(config_key=match.group(1))
    if match := _GROWS.match(text):
        return OnlyGrows(name=match.group(1))
    if match := _UNMERGED.match(text):
        return ReturnsUnmerged(a=match.group(1), b=match.group(2))
    return None


def backticked_names(text: str) -> list[tuple[str, int]]:
    """Every backticked identifier in `text` with the offset of its first character."""
    return [(match.group(1), match.start(1)) for match in _ANY_NAME.finditer(text)]
