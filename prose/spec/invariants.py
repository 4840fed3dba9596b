"""The checkable invariant forms of LANGUAGE.md section 5, and their parser.

Parsing is tolerant of case, repeated spaces, a trailing period and `and`
versus `,` between names, and strict about backticks: a name that is not in
backticks never makes a bullet checkable.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Form(BaseModel):
    model_config = ConfigDict(frozen=True)

    def slot_names(self) -> tuple[str, ...]:
        """The names in this form that must be slots."""
        return ()


class SeesOnly(_Form):
    """`` `A` sees only `x`, `y` ``: every call to A passes only these inputs."""

    kind: Literal["sees_only"] = "sees_only"
    slot: str
    inputs: list[str]

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


class NeverSees(_Form):
    """`` `A` never sees `B` `` (`indirectly`: ``, even indirectly`` was added)."""

    kind: Literal["never_sees"] = "never_sees"
    slot: str
    other: str
    indirectly: bool = False

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot, self.other)


class UnawareOf(_Form):
    """`` `A` is unaware of `B` ``: never sees B, and no literal text names B."""

    kind: Literal["unaware_of"] = "unaware_of"
    slot: str
    other: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot, self.other)


class Independent(_Form):
    """`` `A` and `B` are independent ``: neither sees the other."""

    kind: Literal["independent"] = "independent"
    a: str
    b: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.a, self.b)


class DistinctModels(_Form):
    """`` `A` and `B` are independently configured ``: they must not share a model.

    A configuration claim, not a visibility one (a critic must read what the
    proponent wrote): `prose run --require-distinct-models` fails when both
    route to the same model.
    """

    kind: Literal["distinct_models"] = "distinct_models"
    a: str
    b: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.a, self.b)


class OwnChain(_Form):
    """`` each `A` sees only its own chain ``: a call of A receives A's outputs only from
    its own chain of calls: the same parallel branch (or a branch it runs inside), never
    a sibling branch's, nor anything collected at a join."""

    kind: Literal["own_chain"] = "own_chain"
    slot: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


class Predecessor(_Form):
    """`` each of `S` sees only its predecessor's output ``: a call of `S[i]` (a list-valued
    slot) receives the output of `S[i-1]` and no other output of `S` (`S[0]` none)."""

    kind: Literal["predecessor"] = "predecessor"
    slot: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.slot,)


class LoopsBoundedBy(_Form):
    """`` every loop is bounded by `max_rounds` ``: a config key bounds every loop."""

    kind: Literal["loops_bounded_by"] = "loops_bounded_by"
    config_key: str


class OnlyGrows(_Form):
    """`` `history` only grows ``: the list is only recorded/appended to."""

    kind: Literal["only_grows"] = "only_grows"
    name: str


class ReturnsUnmerged(_Form):
    """`` the result returns `A` and `B` unmerged ``."""

    kind: Literal["returns_unmerged"] = "returns_unmerged"
    a: str
    b: str

    def slot_names(self) -> tuple[str, ...]:
        return (self.a, self.b)


InvariantForm = Annotated[
    SeesOnly
    | NeverSees
    | UnawareOf
    | Independent
    | DistinctModels
    | OwnChain
    | Predecessor
    | LoopsBoundedBy
    | OnlyGrows
    | ReturnsUnmerged,
    Field(discriminator="kind"),
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
        return SeesOnly(slot=match.group(1), inputs=_ANY_NAME.findall(match.group(2)))
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
