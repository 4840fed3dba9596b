"""The parser of LANGUAGE.md section 5's checkable invariant forms (the forms themselves
are `prose.lang.invariants`' dataclasses).

Parsing is tolerant of case, repeated spaces, a trailing period and `and`
versus `,` between names, and strict about backticks: a name that is not in
backticks never makes a bullet checkable.
"""

from __future__ import annotations

import re

from prose.lang.invariants import (
    AtMostOne,
    BlindTo,
    ChosenByCode,
    DistinctModels,
    GrowsOnlyAfter,
    InBindingOrder,
    Independent,
    InvariantForm,
    ItemInput,
    LoopsBoundedBy,
    NeverAfter,
    NeverSees,
    NeverTold,
    NoCallReceives,
    OnlyGrows,
    OnlyReads,
    OutputsInOrder,
    OwnChain,
    OwnRound,
    PairwiseIndependent,
    Predecessor,
    ResultSatisfies,
    ReturnCarries,
    ReturnsOneOf,
    ReturnsUnmerged,
    RunsOnlyAfter,
    RunsOnlyIf,
    SameInput,
    SameSequence,
    SeesOnly,
    UnawareOf,
)
from prose.lang.results import parse_result_expression, root_names

__all__ = [
    "AtMostOne",
    "BlindTo",
    "ChosenByCode",
    "DistinctModels",
    "GrowsOnlyAfter",
    "InBindingOrder",
    "Independent",
    "InvariantForm",
    "ItemInput",
    "LoopsBoundedBy",
    "NeverAfter",
    "NeverSees",
    "NeverTold",
    "NoCallReceives",
    "OnlyGrows",
    "OnlyReads",
    "OutputsInOrder",
    "OwnChain",
    "OwnRound",
    "PairwiseIndependent",
    "Predecessor",
    "ResultSatisfies",
    "ReturnCarries",
    "ReturnsOneOf",
    "ReturnsUnmerged",
    "RunsOnlyAfter",
    "RunsOnlyIf",
    "SameInput",
    "SameSequence",
    "SeesOnly",
    "UnawareOf",
    "backticked_names",
    "parse_invariant_form",
    "unchecked_reason",
]


_NAME = r"`([A-Za-z_][\w-]*)`"
_NAME_PLAIN = r"`[A-Za-z_][\w-]*`"
# Who receives (the first name of `sees only`, `never sees`, `is unaware of`): a slot, or
# an entry of a map-valued slot (`handlers.billing`).
_VIEWER = r"`([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)?)`"
_SEP = r"\s*(?:,\s*and\b|,|\band\b)\s*"

_SEES_ONLY = re.compile(rf"^{_VIEWER}\s+sees\s+only\s+({_NAME_PLAIN}(?:{_SEP}{_NAME_PLAIN})*)$", re.I)
_NEVER_SEES = re.compile(rf"^{_VIEWER}\s+never\s+sees\s+{_NAME}(\s*,?\s*even\s+indirectly)?$", re.I)
_UNAWARE = re.compile(rf"^{_VIEWER}\s+is\s+unaware\s+of\s+{_NAME}$", re.I)
_INDEPENDENT = re.compile(rf"^{_NAME}{_SEP}{_NAME}\s+are\s+independent$", re.I)
_DISTINCT = re.compile(
    rf"^{_NAME}{_SEP}{_NAME}\s+(?:are\s+independently\s+configured|run\s+on\s+distinct\s+models)$",
    re.I,
)
_OWN_CHAIN = re.compile(rf"^(?:each\s+)?{_NAME}\s+sees\s+only\s+its\s+own\s+(?:chain|branch)$", re.I)
_OWN_ROUND = re.compile(
    rf"^(?:each\s+(?:of\s+)?)?{_NAME}\s+never\s+sees\s+(?:anything\s+of\s+)?its\s+own\s+round$",
    re.I)
_PREDECESSOR = re.compile(
    rf"^each\s+(?:of\s+)?{_NAME}\s+sees\s+only\s+its\s+predecessor'?s?(?:\s+output)?$", re.I
)
_BOUNDED = re.compile(
    rf"^every\s+loop\s+is\s+bounded\s+by\s+({_NAME_PLAIN}(?:\s*(?:,\s*or\b|,|\bor\b|\band\b)\s*"
    rf"{_NAME_PLAIN})*)$", re.I)
_GROWS = re.compile(rf"^{_NAME}\s+only\s+grows$", re.I)
_UNMERGED = re.compile(rf"^the\s+result\s+returns\s+{_NAME}{_SEP}{_NAME}\s+unmerged$", re.I)
_ANY_NAME = re.compile(_NAME)
_ANY_VIEWER = re.compile(_VIEWER)
_NAMES = rf"({_NAME_PLAIN}(?:{_SEP}{_NAME_PLAIN})+)"
_PAIRWISE = re.compile(rf"^{_NAMES}\s+are\s+(?:all\s+)?pairwise\s+independent$", re.I)
_BLIND = re.compile(rf"^{_NAME}\s+is\s+blind\s+to\s+the\s+sources?\s+of\s+{_NAME}$", re.I)
_PATH = r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)`"
_RUNS_ONLY_IF = re.compile(rf"^{_NAME}\s+runs\s+only\s+(?:if|when)\s+{_PATH}(?:\s+(?:holds|is\s+true))?$", re.I)
_LITERAL = r"(true|false|null|-?\d+(?:\.\d+)?|\"[^\"]*\")"
_RUNS_ONLY_AFTER = re.compile(
    rf"^{_NAME}\s+runs\s+only\s+after\s+{_NAME}\s+returns\s+"
    rf"(?:`([A-Za-z_]\w*)\s*==\s*{_LITERAL}`|`([A-Za-z_]\w*)`\s*(?:==|=|is|as)\s*`?{_LITERAL}`?)$",
    re.I,
)
_SAME_INPUT = re.compile(
    rf"^{_NAME}\s+gets\s+the\s+same\s+{_NAME}(?:\s+as)?\s+{_NAME}\s+(?:got|was\s+given)$", re.I
)
_AT_MOST_ONE = re.compile(
    rf"^at\s+most\s+one\s+of\s+{_NAMES}\s+runs"
    r"(\s*,?\s*\(?(?:per\s+run|per\s+iteration|in\s+each\s+iteration|each\s+iteration)\)?)?$",
    re.I,
)


_ONE_OF = re.compile(
    rf"^{_NAME}\s+returns\s+{_PATH}\s+as\s+one\s+of\s+"
    rf"({_LITERAL}(?:\s*(?:,\s*or\b|,|\bor\b)\s*{_LITERAL})*)$", re.I)
_ONE_LITERAL = re.compile(_LITERAL, re.I)
_NO_CALL = re.compile(
    rf"^(?:no\s+call\s+(?:receives|is\s+given|gets)\s+(?:the\s+outputs?\s+of\s+)?{_NAME}"
    rf"|the\s+outputs?\s+of\s+{_NAME}\s+reach(?:es)?\s+no\s+call)$", re.I)
_NEVER_TOLD = re.compile(
    rf"^({_NAME_PLAIN}(?:{_SEP}{_NAME_PLAIN})*)\s+(?:is|are)\s+never\s+told\s+(?:the\s+word\s+)?"
    r"`([^`]+)`$", re.I)
_SAME_EVERY_CALL = re.compile(
    rf"^(?:every\s+call\s+of\s+{_NAME}\s+gets|{_NAME}\s+always\s+gets)\s+the\s+same\s+{_NAME}$",
    re.I)
_RUNS_ONCE = re.compile(
    rf"^{_NAME}\s+runs\s+(?:at\s+most\s+once|only\s+once|once\s+at\s+most)"
    r"(\s*,?\s*\(?(?:per\s+run|per\s+iteration|in\s+each\s+iteration|each\s+iteration)\)?)?$",
    re.I,
)


_NEVER_AFTER = re.compile(
    rf"^({_NAME_PLAIN}(?:{_SEP}{_NAME_PLAIN})*)\s+(?:never|no\s+longer)\s+runs?\s+"
    rf"(?:again\s+)?(?:after|once)\s+{_NAME}\s+(?:returns|returned|has\s+returned)"
    rf"(?:\s+(?:`([A-Za-z_]\w*)\s*==\s*{_LITERAL}`|`([A-Za-z_]\w*)`\s*(?:==|=|is|as)\s*`?{_LITERAL}`?))?$",
    re.I)
_BINDING_ORDER = re.compile(
    rf"^{_NAME}\s+(?:run|are\s+called|are\s+tried|runs)\s+one\s+at\s+a\s+time\s*,?\s*"
    r"in\s+(?:their\s+)?binding\s+order$", re.I)
_CHOSEN_BY_CODE = re.compile(
    rf"^no\s+model\s+(?:call\s+)?(?:chooses|decides|picks)\s+(?:what\s+|which\s+)?{_NAME}"
    r"(?:\s+holds)?(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)
_SAME_SEQUENCE = re.compile(
    rf"^(?:each|every)\s+chain\s+of\s+{_NAME}\s+gets\s+the\s+same\s+(?:sequence|order)\s+of\s+"
    rf"{_NAME}(?:\s+in\s+the\s+same\s+order)?(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)
_ITEM_INPUT = re.compile(
    rf"^each\s+of\s+{_NAME}\s+gets\s+its\s+(?:own\s+)?item\s+of\s+{_NAME}\s+as\s+{_NAME}"
    r"(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)
_IN_ORDER = re.compile(
    rf"^the\s+returned\s+{_NAME}\s+holds\s+the\s+outputs\s+of\s+{_NAME}\s+in\s+binding\s+order"
    r"(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)
_GROWS_AFTER = re.compile(
    rf"^{_NAME}\s+grows\s+only\s+after\s+{_NAME}\s+returns\s+"
    rf"(?:`([A-Za-z_]\w*)\s*==\s*{_LITERAL}`|`([A-Za-z_]\w*)`\s*(?:==|=|is|as)\s*`?{_LITERAL}`?)"
    r"(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)
_CARRIES = re.compile(
    rf"^the\s+returned\s+{_NAME}\s+(?:carries|holds)\s+(only|nothing\s+of|never)\s*(?:carries\s+|holds\s+)?"
    rf"(?:the\s+outputs?\s+of\s+)?({_NAME_PLAIN}(?:{_SEP}{_NAME_PLAIN})*)(?:'s(?:\s+outputs?)?)?"
    r"(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)
_CARRIES_NEVER = re.compile(
    rf"^the\s+returned\s+{_NAME}\s+never\s+(?:carries|holds)\s+(?:the\s+outputs?\s+of\s+)?"
    rf"({_NAME_PLAIN}(?:{_SEP}{_NAME_PLAIN})*)(?:'s(?:\s+outputs?)?)?"
    r"(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)
_ONLY_READS = re.compile(
    rf"^(?:{_NAME}\s+only\s+reads|{_NAME}'s\s+tools\s+only\s+read)"
    r"(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)


# `` the result satisfies `EXPR` `` and an optional gloss in parentheses after it (never a
# `(not machine-checked: ...)`, which marks a prose-only bullet).
_SATISFIES = re.compile(
    r"^the\s+(?:returned\s+)?result\s+satisfies\s+`([^`]+)`"
    r"(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)


# `` every `entry` of `ledger` satisfies `EXPR` ``: the same, for each item of a returned list.
_EVERY_SATISFIES = re.compile(
    r"^(?:every|each)\s+(?:item\s+)?`([A-Za-z_]\w*)`\s+(?:of|in)\s+(?:the\s+returned\s+)?"
    r"`([A-Za-z_]\w*)`\s+satisfies\s+`([^`]+)`(?:\s*\((?!\s*not\s+machine)[^()]*\))?$", re.I)


def _satisfies(expression: str, item: str = "", items: str = "") -> ResultSatisfies:
    expression = " ".join(expression.split())
    parsed = parse_result_expression(expression)
    if parsed.expr is None:
        return ResultSatisfies(expression, (), parsed.problem, item, items)
    if item and item == items:
        return ResultSatisfies(expression, (), f"`{item}` names both the item and the list",
                               item, items)
    names = tuple(name for name in root_names(parsed.expr) if name != item)
    if items:
        names = tuple(dict.fromkeys((items, *names)))
    return ResultSatisfies(expression, names, "", item, items)


def _literal(text: str) -> bool | int | float | str | None:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    if text.startswith('"'):
        return text[1:-1]
    return float(text) if "." in text else int(text)


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
    if match := _OWN_ROUND.match(text):
        return OwnRound(slot=match.group(1))
    if match := _PREDECESSOR.match(text):
        return Predecessor(slot=match.group(1))
    if match := _BOUNDED.match(text):
        first, *others = dict.fromkeys(_ANY_NAME.findall(match.group(1)))
        return LoopsBoundedBy(config_key=first, others=tuple(others))
    if match := _GROWS.match(text):
        return OnlyGrows(name=match.group(1))
    if match := _UNMERGED.match(text):
        return ReturnsUnmerged(a=match.group(1), b=match.group(2))
    return _parse_gate(text)


def _parse_gate(text: str) -> InvariantForm | None:
    """The control-flow forms (when a slot runs) and the pairwise shorthand."""
    if match := _PAIRWISE.match(text):
        names = tuple(dict.fromkeys(_ANY_NAME.findall(match.group(1))))
        return PairwiseIndependent(slots=names) if len(names) >= 2 else None
    if match := _BLIND.match(text):
        return BlindTo(slot=match.group(1), sources=match.group(2))
    if match := _RUNS_ONLY_IF.match(text):
        return RunsOnlyIf(slot=match.group(1), condition=tuple(match.group(2).split(".")))
    if match := _RUNS_ONLY_AFTER.match(text):
        field = match.group(3) or match.group(5)
        literal = match.group(4) if match.group(3) else match.group(6)
        return RunsOnlyAfter(slot=match.group(1), approver=match.group(2), field=field,
                             value=_literal(literal))
    if match := _SAME_INPUT.match(text):
        return SameInput(slot=match.group(1), input=match.group(2), approver=match.group(3))
    if match := _AT_MOST_ONE.match(text):
        names = tuple(dict.fromkeys(_ANY_NAME.findall(match.group(1))))
        per = (match.group(2) or "").lower()
        return AtMostOne(slots=names, per_iteration="iteration" in per) if len(names) >= 2 else None
    if match := _ONE_OF.match(text):
        found = _ONE_LITERAL.findall(match.group(3))
        return ReturnsOneOf(slot=match.group(1), path=tuple(match.group(2).split(".")),
                            values=tuple(dict.fromkeys(_literal(item) for item in found)))
    if match := _NO_CALL.match(text):
        return NoCallReceives(slot=match.group(1) or match.group(2))
    if match := _NEVER_TOLD.match(text):
        word = match.group(2).strip()
        names = tuple(dict.fromkeys(_ANY_NAME.findall(match.group(1))))
        return NeverTold(slots=names, word=word) if word else None
    if match := _SAME_EVERY_CALL.match(text):
        slot = match.group(1) or match.group(2)
        return SameInput(slot=slot, input=match.group(3), approver=slot)
    if match := _SATISFIES.match(text):
        return _satisfies(match.group(1))
    if match := _EVERY_SATISFIES.match(text):
        return _satisfies(match.group(3), match.group(1), match.group(2))
    if match := _RUNS_ONCE.match(text):
        per = (match.group(2) or "").lower()
        return AtMostOne(slots=(match.group(1),), per_iteration="iteration" in per)
    return _parse_order(text)


def _parse_order(text: str) -> InvariantForm | None:
    """The forms about the order of calls, and about a slot's tools."""
    if match := _NEVER_AFTER.match(text):
        names = tuple(dict.fromkeys(_ANY_NAME.findall(match.group(1))))
        field = match.group(3) or match.group(5)
        if field is None:
            return NeverAfter(slots=names, stopper=match.group(2))
        literal = match.group(4) if match.group(3) else match.group(6)
        return NeverAfter(slots=names, stopper=match.group(2), field=field,
                          value=_literal(literal))
    if match := _BINDING_ORDER.match(text):
        return InBindingOrder(slot=match.group(1))
    if match := _ONLY_READS.match(text):
        return OnlyReads(slot=match.group(1) or match.group(2))
    if match := _SAME_SEQUENCE.match(text):
        return SameSequence(slot=match.group(1), input=match.group(2))
    if match := _ITEM_INPUT.match(text):
        return ItemInput(slot=match.group(1), items=match.group(2), input=match.group(3))
    if match := _IN_ORDER.match(text):
        return OutputsInOrder(key=match.group(1), slot=match.group(2))
    if match := _GROWS_AFTER.match(text):
        field = match.group(3) or match.group(5)
        literal = match.group(4) if match.group(3) else match.group(6)
        return GrowsOnlyAfter(name=match.group(1), approver=match.group(2), field=field,
                              value=_literal(literal))
    if match := _CARRIES.match(text):
        names = tuple(dict.fromkeys(_ANY_NAME.findall(match.group(3))))
        return ReturnCarries(key=match.group(1), slots=names,
                             only=match.group(2).lower() == "only")
    if match := _CARRIES_NEVER.match(text):
        names = tuple(dict.fromkeys(_ANY_NAME.findall(match.group(2))))
        return ReturnCarries(key=match.group(1), slots=names, only=False)
    if match := _CHOSEN_BY_CODE.match(text):
        return ChosenByCode(name=match.group(1))
    return None


# One spelling of every checkable form, `{}` where its names go (`{*}`: a list of names),
# for the nearest form a near miss is shown (PH608).
FORM_SPELLINGS: tuple[str, ...] = (
    "`{}` sees only `{*}`",
    "`{}` never sees `{}`",
    "`{}` never sees `{}`, even indirectly",
    "`{}` is unaware of `{}`",
    "`{}` and `{}` are independent",
    "`{*}` are pairwise independent",
    "`{}` and `{}` are independently configured",
    "each `{}` sees only its own chain",
    "each `{}` never sees its own round",
    "each of `{}` sees only its predecessor's output",
    "every loop is bounded by `{*}`",
    "`{}` only grows",
    "the result returns `{}` and `{}` unmerged",
    "`{}` is blind to the source of `{}`",
    "`{}` runs only if `{}`",
    "`{}` runs only after `{}` returns `{}` == true",
    "`{}` gets the same `{}` `{}` got",
    "every call of `{}` gets the same `{}`",
    "no call receives `{}`",
    "`{}` returns `{}` as one of \"a\", \"b\"",
    "`{*}` are never told `{}`",
    "at most one of `{*}` runs",
    "`{}` runs at most once",
    "the result satisfies `{}`",
    "every `{}` of `{}` satisfies `{}`",
    "`{*}` never run after `{}` returns `{}` == true",
    "`{}` run one at a time in binding order",
    "`{}` only reads",
    "no model chooses `{}`",
    "the returned `{}` carries only `{*}`",
    "`{}` grows only after `{}` returns `{}` == true",
    "each chain of `{}` gets the same sequence of `{}`",
    "each of `{}` gets its item of `{}` as `{}`",
    "the returned `{}` holds the outputs of `{}` in binding order",
    "the returned `{}` never carries `{*}`",
)
_BACKTICKED = re.compile(r"`[^`]*`")
_SKELETON_CUTOFF = 0.75


def _skeleton(text: str) -> str:
    """A bullet with every backticked part as one placeholder, folded for comparison."""
    return " ".join(_BACKTICKED.sub("`x`", _normalise(text).lower()).split())


def _fill(spelling: str, names: list[str]) -> str | None:
    count = spelling.count("{}") + spelling.count("{*}")
    if len(names) < count:
        return None
    text, rest = spelling, list(names)
    while "{" in text:
        star, one = text.find("{*}"), text.find("{}")
        if star >= 0 and (one < 0 or star < one):
            needed = text.count("{}")  # the names left for the single places after it
            taken, rest = rest[:len(rest) - needed], rest[len(rest) - needed:]
            text = text.replace("{*}", "`, `".join(taken), 1)
        else:
            text, rest = text.replace("{}", rest[0], 1), rest[1:]
    return text if not rest else None  # every name of the bullet has its place


def nearest_form(text: str) -> str | None:
    """The checkable form a bullet that is none comes closest to, written with its own
    backticked names (None when it has none, or is not close to any form)."""
    import difflib

    if "`" not in text or parse_invariant_form(text) is not None:
        return None
    names = [part.strip("`").strip() for part in _BACKTICKED.findall(_normalise(text))]
    skeleton = _skeleton(text)
    best: tuple[float, str] | None = None
    for spelling in FORM_SPELLINGS:
        filled = _fill(spelling, names)
        if filled is None or parse_invariant_form(filled) is None:
            continue
        score = difflib.SequenceMatcher(None, skeleton, _skeleton(filled)).ratio()
        if score >= _SKELETON_CUTOFF and (best is None or score > best[0]):
            best = (score, filled)
    return best[1] if best else None


_UNCHECKED = re.compile(r"\(\s*not\s+machine[- ]checked\s*:\s*([^()]+)\)\s*\.?\s*$", re.I)


def unchecked_reason(text: str) -> str | None:
    """Why a prose-only bullet cannot be checked, when it says so: a closing
    `(not machine-checked: REASON)`."""
    match = _UNCHECKED.search(text)
    return " ".join(match.group(1).split()) if match else None


def backticked_names(text: str) -> list[tuple[str, int]]:
    """Every backticked identifier in `text` with the offset of its first character."""
    return [(match.group(1), match.start(1)) for match in _ANY_VIEWER.finditer(text)]
