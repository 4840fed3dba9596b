"""The rule registry: one table of every lint rule, by stable code.

A rule is a `Rule` subclass in a module of `prose.check.rules`, marked with
the `@rule` decorator (`prose.check.rule`), which enters it here under its
`code`. `prose rules` lists this table; `prose rules CODE` prints a rule's
docstring. Spec rules (PS1xx) are reported while loading the pattern file and
are listed beside these, from `prose.spec.codes` (`prose.check.catalogue`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from prose.check.rule import REGISTERED, Rule


@lru_cache(maxsize=1)
def rule_table() -> Mapping[str, type[Rule]]:
    """Every rule class by code, in code order (imports the rule modules on first use)."""
    import prose.check.rules  # noqa: F401  (importing the package registers every rule)

    return MappingProxyType(dict(sorted(REGISTERED.items())))


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    """An instance of every rule, in code order."""
    return tuple(cls() for cls in rule_table().values())


def rule_by_code(code: str) -> Rule | None:
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None
