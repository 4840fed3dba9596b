"""The parser of LANGUAGE.md section 5's checkable invariant forms (the forms themselves
are `prose.lang.invariants`' dataclasses).

Parsing is tolerant of case, repeated spaces, a trailing period and `and`
versus `,` between names, and strict about backticks: a name that is not in
backticks never makes a bullet checkable.
"""

from __future__ import annotations

import re
from collections.abc import Callable

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

_LIST = rf"({_NAME_PLAIN}(?:{_SEP}{_NAME_PLAIN})*)"  # one name or more
_NAMES = rf"({_NAME_PLAIN}(?:{_SEP}{_NAME_PLAIN})+)"  # two names or more
_PATH = r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)`"
_LITERAL = r"(true|false|null|-?\d+(?:\.\d+)?|\"[^\"]*\")"
# What an approver returns (`` `field == value` `` or `` `field` == value ``): 4 groups.
_RETURNED = (rf"(?:`([A-Za-z_]\w*)\s*==\s*{_LITERAL}`"
             rf"|`([A-Za-z_]\w*)`\s*(?:==|=|is|as)\s*`?{_LITERAL}`?)")
_PER_ITERATION = (r"(\s*,?\s*\(?(?:per\s+run|per\s+iteration|in\s+each\s+iteration"
                  r"|each\s+iteration)\)?)?")
# A gloss in parentheses after a form, never a `(not machine-checked: ...)` (which marks a
# prose-only bullet).
_GLOSS = r"(?:\s*\((?!\s*not\s+machine)[^()]*\))?"


def _form(body: str) -> re.Pattern[str]:
    """A form's pattern: the whole (normalised) bullet, any case."""
    return re.compile(rf"^{body}$", re.I)


_SEES_ONLY = _form(rf"{_VIEWER}\s+sees\s+only\s+{_LIST}")
_NEVER_SEES = _form(rf"{_VIEWER}\s+never\s+sees\s+{_NAME}(\s*,?\s*even\s+indirectly)?")
_UNAWARE = _form(rf"{_VIEWER}\s+is\s+unaware\s+of\s+{_NAME}")
_INDEPENDENT = _form(rf"{_NAME}{_SEP}{_NAME}\s+are\s+independent")
_DISTINCT = _form(rf"{_NAME}{_SEP}{_NAME}\s+(?:are\s+independently\s+configured"
                  r"|run\s+on\s+distinct\s+models)")
_OWN_CHAIN = _form(rf"(?:each\s+)?{_NAME}\s+sees\s+only\s+its\s+own\s+(?:chain|branch)")
_OWN_ROUND = _form(rf"(?:each\s+(?:of\s+)?)?{_NAME}\s+never\s+sees\s+(?:anything\s+of\s+)?"
                   r"its\s+own\s+round")
_PREDECESSOR = _form(rf"each\s+(?:of\s+)?{_NAME}\s+sees\s+only\s+its\s+predecessor'?s?"
                     r"(?:\s+output)?")
_BOUNDED = _form(rf"every\s+loop\s+is\s+bounded\s+by\s+({_NAME_PLAIN}(?:\s*(?:,\s*or\b|,|\bor\b"
                 rf"|\band\b)\s*{_NAME_PLAIN})*)")
_GROWS = _form(rf"{_NAME}\s+only\s+grows")
_UNMERGED = _form(rf"the\s+result\s+returns\s+{_NAME}{_SEP}{_NAME}\s+unmerged")
_ANY_NAME = re.compile(_NAME)
_ANY_VIEWER = re.compile(_VIEWER)
_PAIRWISE = _form(rf"{_NAMES}\s+are\s+(?:all\s+)?pairwise\s+independent")
_BLIND = _form(rf"{_NAME}\s+is\s+blind\s+to\s+the\s+sources?\s+of\s+{_NAME}")
_RUNS_ONLY_IF = _form(rf"{_NAME}\s+runs\s+only\s+(?:if|when)\s+{_PATH}"
                      r"(?:\s+(?:holds|is\s+true))?")
_RUNS_ONLY_AFTER = _form(rf"{_NAME}\s+runs\s+only\s+after\s+{_NAME}\s+returns\s+{_RETURNED}")
_SAME_INPUT = _form(rf"{_NAME}\s+gets\s+the\s+same\s+{_NAME}(?:\s+as)?\s+{_NAME}\s+"
                    r"(?:got|was\s+given)")
_AT_MOST_ONE = _form(rf"at\s+most\s+one\s+of\s+{_NAMES}\s+runs{_PER_ITERATION}")
_ONE_OF = _form(rf"{_NAME}\s+returns\s+{_PATH}\s+as\s+one\s+of\s+"
                rf"({_LITERAL}(?:\s*(?:,\s*or\b|,|\bor\b)\s*{_LITERAL})*)")
_ONE_LITERAL = re.compile(_LITERAL, re.I)
_NO_CALL = _form(rf"(?:no\s+call\s+(?:receives|is\s+given|gets)\s+(?:the\s+outputs?\s+of\s+)?"
                 rf"{_NAME}|the\s+outputs?\s+of\s+{_NAME}\s+reach(?:es)?\s+no\s+call)")
_NEVER_TOLD = _form(rf"{_LIST}\s+(?:is|are)\s+never\s+told\s+(?:the\s+word\s+)?`([^`]+)`")
_SAME_EVERY_CALL = _form(rf"(?:every\s+call\s+of\s+{_NAME}\s+gets|{_NAME}\s+always\s+gets)"
                         rf"\s+the\s+same\s+{_NAME}")
_RUNS_ONCE = _form(rf"{_NAME}\s+runs\s+(?:at\s+most\s+once|only\s+once|once\s+at\s+most)"
                   rf"{_PER_ITERATION}")
_NEVER_AFTER = _form(rf"{_LIST}\s+(?:never|no\s+longer)\s+runs?\s+(?:again\s+)?(?:after|once)\s+"
                     rf"{_NAME}\s+(?:returns|returned|has\s+returned)(?:\s+{_RETURNED})?")
_BINDING_ORDER = _form(rf"{_NAME}\s+(?:run|are\s+called|are\s+tried|runs)\s+one\s+at\s+a\s+time"
                       r"\s*,?\s*in\s+(?:their\s+)?binding\s+order")
_CHOSEN_BY_CODE = _form(rf"no\s+model\s+(?:call\s+)?(?:chooses|decides|picks)\s+"
                        rf"(?:what\s+|which\s+)?{_NAME}(?:\s+holds)?{_GLOSS}")
_SAME_SEQUENCE = _form(rf"(?:each|every)\s+chain\s+of\s+{_NAME}\s+gets\s+the\s+same\s+"
                       rf"(?:sequence|order)\s+of\s+{_NAME}(?:\s+in\s+the\s+same\s+order)?{_GLOSS}")
_ITEM_INPUT = _form(rf"each\s+of\s+{_NAME}\s+gets\s+its\s+(?:own\s+)?item\s+of\s+{_NAME}\s+as\s+"
                    rf"{_NAME}{_GLOSS}")
_IN_ORDER = _form(rf"the\s+returned\s+{_NAME}\s+holds\s+the\s+outputs\s+of\s+{_NAME}\s+in\s+"
                  rf"binding\s+order{_GLOSS}")
_GROWS_AFTER = _form(rf"{_NAME}\s+grows\s+only\s+after\s+{_NAME}\s+returns\s+{_RETURNED}{_GLOSS}")
_CARRIES = _form(rf"the\s+returned\s+{_NAME}\s+(?:carries|holds)\s+(only|nothing\s+of|never)\s*"
                 rf"(?:carries\s+|holds\s+)?(?:the\s+outputs?\s+of\s+)?{_LIST}"
                 rf"(?:'s(?:\s+outputs?)?)?{_GLOSS}")
_CARRIES_NEVER = _form(rf"the\s+returned\s+{_NAME}\s+never\s+(?:carries|holds)\s+"
                       rf"(?:the\s+outputs?\s+of\s+)?{_LIST}(?:'s(?:\s+outputs?)?)?{_GLOSS}")
_ONLY_READS = _form(rf"(?:{_NAME}\s+only\s+reads|{_NAME}'s\s+tools\s+only\s+read){_GLOSS}")
# `` the result satisfies `EXPR` ``, with a gloss.
_SATISFIES = _form(rf"the\s+(?:returned\s+)?result\s+satisfies\s+`([^`]+)`{_GLOSS}")
# `` every `entry` of `ledger` satisfies `EXPR` ``: the same, for each item of a returned list.
_EVERY_SATISFIES = _form(rf"(?:every|each)\s+(?:item\s+)?`([A-Za-z_]\w*)`\s+(?:of|in)\s+"
                         rf"(?:the\s+returned\s+)?`([A-Za-z_]\w*)`\s+satisfies\s+`([^`]+)`"
                         rf"{_GLOSS}")


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


def _names(text: str) -> tuple[str, ...]:
    """The backticked names in `text`, each once, in order."""
    return tuple(dict.fromkeys(_ANY_NAME.findall(text)))


def _returns(match: re.Match[str], at: int) -> tuple[str | None, bool | int | float | str | None]:
    """The `field` and value of `returns `field == value`` (or `` `field` == value ``),
    whose two spellings are groups `at` to `at + 3`; (None, None) when it says neither."""
    if match.group(at):
        return match.group(at), _literal(match.group(at + 1))
    if match.group(at + 2):
        return match.group(at + 2), _literal(match.group(at + 3))
    return None, None


def _runs_only_after(m: re.Match[str]) -> InvariantForm:
    field, value = _returns(m, 3)
    return RunsOnlyAfter(slot=m.group(1), approver=m.group(2), field=field or "", value=value)


def _grows_only_after(m: re.Match[str]) -> InvariantForm:
    field, value = _returns(m, 3)
    return GrowsOnlyAfter(name=m.group(1), approver=m.group(2), field=field or "", value=value)


def _never_after(m: re.Match[str]) -> InvariantForm:
    field, value = _returns(m, 3)
    if field is None:
        return NeverAfter(slots=_names(m.group(1)), stopper=m.group(2))
    return NeverAfter(slots=_names(m.group(1)), stopper=m.group(2), field=field, value=value)


def _bounded(m: re.Match[str]) -> InvariantForm:
    first, *others = _names(m.group(1))
    return LoopsBoundedBy(config_key=first, others=tuple(others))


def _at_most_one(m: re.Match[str]) -> InvariantForm | None:
    names = _names(m.group(1))
    per_iteration = "iteration" in (m.group(2) or "").lower()
    return AtMostOne(slots=names, per_iteration=per_iteration) if len(names) >= 2 else None


def _never_told(m: re.Match[str]) -> InvariantForm | None:
    word = m.group(2).strip()
    return NeverTold(slots=_names(m.group(1)), word=word) if word else None


def _same_every_call(m: re.Match[str]) -> InvariantForm:
    slot = m.group(1) or m.group(2)
    return SameInput(slot=slot, input=m.group(3), approver=slot)


def _pairwise(m: re.Match[str]) -> InvariantForm | None:
    names = _names(m.group(1))
    return PairwiseIndependent(slots=names) if len(names) >= 2 else None


# Every checkable form: its pattern and what a match of it builds, tried in this order;
# the first pattern that matches decides (its builder may still say None: a form written
# with too few names is no form).
_FORMS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], InvariantForm | None]], ...] = (
    (_SEES_ONLY, lambda m: SeesOnly(slot=m.group(1), inputs=tuple(_ANY_NAME.findall(m.group(2))))),
    (_NEVER_SEES, lambda m: NeverSees(slot=m.group(1), other=m.group(2),
                                      indirectly=bool(m.group(3)))),
    (_UNAWARE, lambda m: UnawareOf(slot=m.group(1), other=m.group(2))),
    (_INDEPENDENT, lambda m: Independent(a=m.group(1), b=m.group(2))),
    (_DISTINCT, lambda m: DistinctModels(a=m.group(1), b=m.group(2))),
    (_OWN_CHAIN, lambda m: OwnChain(slot=m.group(1))),
    (_OWN_ROUND, lambda m: OwnRound(slot=m.group(1))),
    (_PREDECESSOR, lambda m: Predecessor(slot=m.group(1))),
    (_BOUNDED, _bounded),
    (_GROWS, lambda m: OnlyGrows(name=m.group(1))),
    (_UNMERGED, lambda m: ReturnsUnmerged(a=m.group(1), b=m.group(2))),
    # When a slot runs (the control-flow forms), and the pairwise shorthand.
    (_PAIRWISE, _pairwise),
    (_BLIND, lambda m: BlindTo(slot=m.group(1), sources=m.group(2))),
    (_RUNS_ONLY_IF, lambda m: RunsOnlyIf(slot=m.group(1), condition=tuple(m.group(2).split(".")))),
    (_RUNS_ONLY_AFTER, _runs_only_after),
    (_SAME_INPUT, lambda m: SameInput(slot=m.group(1), input=m.group(2), approver=m.group(3))),
    (_AT_MOST_ONE, _at_most_one),
    (_ONE_OF, lambda m: ReturnsOneOf(
        slot=m.group(1), path=tuple(m.group(2).split(".")),
        values=tuple(dict.fromkeys(_literal(item) for item in _ONE_LITERAL.findall(m.group(3)))))),
    (_NO_CALL, lambda m: NoCallReceives(slot=m.group(1) or m.group(2))),
    (_NEVER_TOLD, _never_told),
    (_SAME_EVERY_CALL, _same_every_call),
    (_SATISFIES, lambda m: _satisfies(m.group(1))),
    (_EVERY_SATISFIES, lambda m: _satisfies(m.group(3), m.group(1), m.group(2))),
    (_RUNS_ONCE, lambda m: AtMostOne(slots=(m.group(1),),
                                     per_iteration="iteration" in (m.group(2) or "").lower())),
    # The order of calls, and a slot's tools.
    (_NEVER_AFTER, _never_after),
    (_BINDING_ORDER, lambda m: InBindingOrder(slot=m.group(1))),
    (_ONLY_READS, lambda m: OnlyReads(slot=m.group(1) or m.group(2))),
    (_SAME_SEQUENCE, lambda m: SameSequence(slot=m.group(1), input=m.group(2))),
    (_ITEM_INPUT, lambda m: ItemInput(slot=m.group(1), items=m.group(2), input=m.group(3))),
    (_IN_ORDER, lambda m: OutputsInOrder(key=m.group(1), slot=m.group(2))),
    (_GROWS_AFTER, _grows_only_after),
    (_CARRIES, lambda m: ReturnCarries(key=m.group(1), slots=_names(m.group(3)),
                                       only=m.group(2).lower() == "only")),
    (_CARRIES_NEVER, lambda m: ReturnCarries(key=m.group(1), slots=_names(m.group(2)),
                                             only=False)),
    (_CHOSEN_BY_CODE, lambda m: ChosenByCode(name=m.group(1))),
)


def parse_invariant_form(text: str) -> InvariantForm | None:
    """The checkable form `text` is written in, or None for natural language."""
    text = _normalise(text)
    if "`" not in text:
        return None
    for pattern, build in _FORMS:
        if match := pattern.match(text):
            return build(match)
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
