"""Suggested checkable rewrites for invariants written in prose."""

from __future__ import annotations

import re

from prose.check.declarations import Declarations


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", text.lower())


def mentioned_slots(text: str, decl: Declarations) -> list[str]:
    """Slots an invariant mentions: by name (any case, backticks optional)."""
    words = set(_words(text))
    return [name for name in decl.slots if name.lower() in words]


def _role_mentions(text: str, decl: Declarations, exclude: str) -> list[str]:
    """Slots whose role word (first noun of `ensures`) or name stem appears in `text`."""
    words = _words(text)
    found = []
    for name, slot in decl.slots.items():
        if name == exclude:
            continue
        stems = {name.lower()}
        if slot.role_word:
            stems.add(slot.role_word.lower())
        if any(word == stem or (len(stem) >= 4 and word.startswith(stem)) for word in words for stem in stems):
            found.append(name)
    return found


def suggest_rewrite(text: str, decl: Declarations) -> str | None:
    """A checkable form with the same intent, when the intent is clear."""
    lowered = text.lower()
    slots = mentioned_slots(text, decl)
    if not slots:
        return None
    subject = slots[0]
    if re.search(r"\b(unaware|does not know|doesn't know|not told|never told)\b", lowered):
        others = [name for name in _role_mentions(text, decl, subject)]
        if len(others) == 1:
            return f"`{subject}` is unaware of `{others[0]}`"
    if re.search(r"\bindependent\b", lowered) and len(slots) == 2:
        return f"`{slots[0]}` and `{slots[1]}` are independent"
    if re.search(r"\bnever (sees|see)\b", lowered) and len(slots) == 2:
        return f"`{slots[0]}` never sees `{slots[1]}`"
    if re.search(r"\b(sees|receives) only\b", lowered):
        return f"`{subject}` sees only " + ", ".join(
            f"`{word}`" for word in _words(text.split("only", 1)[1])
            if word in decl.parameters or word in decl.config
        ) if any(word in decl.parameters for word in _words(text.split("only", 1)[1])) else None
    return None
