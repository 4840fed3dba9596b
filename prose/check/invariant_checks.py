"""Shared logic of the invariant rules: which forms apply, what each call receives."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from prose.check.flow import CallFlow, InputFlow
from prose.check.rule import CheckContext
from prose.lang.properties import RESERVED_PROPERTIES
from prose.source import Span
from prose.syntax import nodes as n


@dataclass(frozen=True)
class Form:
    """An invariant in a checkable form whose slot names are all slots."""

    form: object
    text: str
    span: Span


def forms(ctx: CheckContext, kind: str) -> Iterator[Form]:
    for invariant in ctx.decl.invariants:
        form = invariant.form
        if form is None or getattr(form, "kind", None) != kind:
            continue
        slot_names = form.slot_names() if hasattr(form, "slot_names") else ()
        if all(name in ctx.decl.slots for name in slot_names):
            yield Form(form, invariant.text, invariant.span)


def calls_to(ctx: CheckContext, slot: str) -> Iterator[CallFlow]:
    for site in ctx.flow.calls.values():
        if site.slot == slot:
            yield site


def literal_texts(call: n.Call) -> Iterator[tuple[str, n.Node]]:
    """The pattern's own literal text a call sends: labels, string literals, the prompt."""
    for prop in call.properties:
        if prop.name not in RESERVED_PROPERTIES:
            yield prop.name, prop
        yield from _strings(prop.value) if prop.name not in ("model", "schema", "backoff", "retry") else ()


def _strings(expr: n.Expr) -> Iterator[tuple[str, n.Node]]:
    if isinstance(expr, n.String):
        text = "".join(part for part in expr.parts if isinstance(part, str))
        yield text, expr
    elif isinstance(expr, n.Array):
        for item in expr.items:
            yield from _strings(item)
    elif isinstance(expr, n.Object):
        for entry in expr.entries:
            yield entry.key, entry
            yield from _strings(entry.value)


def whole_word(word: str) -> re.Pattern[str]:
    """`word` as a whole word, ignoring case; `_` and `-` separate words (LANGUAGE.md 1.1)."""
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", re.I)


def forbidden_words(ctx: CheckContext, other: str) -> list[str]:
    """What literal text sent to A must not contain when A is unaware of `other`."""
    words = [other]
    role = ctx.decl.slots[other].role_word
    if role and role.lower() not in (word.lower() for word in words):
        words.append(role)
    if ctx.decl.name and ctx.decl.name.lower() not in (word.lower() for word in words):
        words.append(ctx.decl.name)
    return words


def carrying(ctx: CheckContext, site: CallFlow, other: str, transitive: bool) -> Iterator[InputFlow]:
    """Inputs of `site` whose value may carry `other`'s output."""
    for entry in site.inputs.values():
        found = ctx.flow.transitive(entry.value) if transitive else ctx.flow.provenance(entry.value)
        if other in found:
            yield entry
