"""The names a script and a test may use: the pattern's slots (and the names its sessions
are answered under), and `OUTER.INNER` for a nested pattern's slots.

`prose run --script` and `prose test` refuse a script key or a test's `calls:` key that
names no slot, with the slot it most resembles, before anything runs (a misspelt
`redteam:` would otherwise surface as "no response left for slot `red_team`").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from prose.spelling import did_you_mean

if TYPE_CHECKING:  # the run's modules load with the run (`prose.testing` is imported cheaply)
    from prose.pattern_file import PatternFile, PatternFiles


def pattern_names(
    pattern: PatternFile, bindings: Mapping[str, Any], files: PatternFiles
) -> tuple[list[str], dict[str, list[str]]]:
    """The pattern's slots, `use` aliases and session names (an agent a session names, or
    `session`), and each nested pattern's slots by outer name."""
    from prose.runtime.services import PatternService
    from prose.syntax import nodes as n
    from prose.syntax.walk import session_names

    spec = pattern.spec
    slots = list(spec.slot_names) if spec is not None else []
    nested: dict[str, list[str]] = {}
    for name, binding in bindings.items():
        if isinstance(binding, PatternService):
            inner = _slots_of(binding.path, files)
            if inner is not None:
                nested[name] = inner
    if pattern.program is not None:
        slots += [s.alias for s in pattern.program.body if isinstance(s, n.Use)]
        slots += [name for name in session_names(pattern.program) if name not in slots]
    return slots, nested


def _slots_of(path: str, files: PatternFiles) -> list[str] | None:
    from prose.errors import ProseError

    try:
        spec = files.get(path).spec
    except ProseError:
        return None  # the run reports an unreadable nested pattern
    return list(spec.slot_names) if spec is not None else None


def check_call_names(
    names: Mapping[str, Any], slots: list[str], nested: Mapping[str, list[str]]
) -> list[str]:
    """Problems with a test's `calls:` keys: each must be a slot, `slot[i]` or `OUTER.INNER`."""
    dotted = [f"{outer}.{inner}" for outer, inners in nested.items() for inner in inners]
    known = [*slots, *dotted]
    counted = {*known, *(inner for inners in nested.values() for inner in inners)}
    problems = []
    for name in names:
        base = name.split("[", 1)[0]
        if base in counted:
            continue
        problems.append(f"`calls: {{{name}: ...}}` names no slot of the pattern"
                        + did_you_mean(base, known)
                        + " (slots: " + ", ".join(f"`{k}`" for k in known) + ")")
    return problems
