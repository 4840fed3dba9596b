"""The environment: a dict of bindings with an outer pointer (LANGUAGE.md 4.1).

Scopes nest like this::

    globals    slots, config keys, parameters, `use` aliases, blocks (read-only)
      body     the pattern body: one scope for every `if`/`for`/`loop`/`try` in it
        child  a parallel branch or a block invocation (`isolated`): reads go out,
               assignments and `record`s do not

`let` binds in the innermost scope, or assigns when that scope already has
the name; `x = v` assigns the nearest binding, but never across an isolated
scope (a race in a parallel branch). Loop and catch variables are read-only
bindings that the loop itself rebinds every iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from prose.runtime.errors import NameNotDefined, ParallelRace, ReadOnlyName
from prose.runtime.values import Value


class Kind(StrEnum):
    VAR = "variable"
    CONST = "constant"
    LOOP = "loop variable"
    CATCH = "catch variable"
    SLOT = "slot"
    CONFIG = "config key"
    PARAMETER = "parameter"
    ALIAS = "pattern alias"

    @property
    def read_only(self) -> bool:
        return self is not Kind.VAR


@dataclass(slots=True)
class Binding:
    value: Value
    kind: Kind


class Scope:
    """Bindings plus an outer pointer; `isolated` marks a parallel branch or block scope."""

    __slots__ = ("bindings", "isolated", "outer", "published")

    def __init__(self, outer: Scope | None = None, *, isolated: bool = False) -> None:
        self.bindings: dict[str, Binding] = {}
        self.outer = outer
        self.isolated = isolated
        # Names bound by `let` in this scope, in order (what a `parallel:` branch publishes).
        self.published: list[str] = []

    def child(self, *, isolated: bool = True) -> Scope:
        return Scope(self, isolated=isolated)

    def find(self, name: str) -> tuple[Scope, Binding] | None:
        scope: Scope | None = self
        while scope is not None:
            binding = scope.bindings.get(name)
            if binding is not None:
                return scope, binding
            scope = scope.outer
        return None

    def has(self, name: str) -> bool:
        return self.find(name) is not None

    def lookup(self, name: str) -> Binding:
        found = self.find(name)
        if found is None:
            raise NameNotDefined(f"`{name}` is not defined")
        return found[1]

    def get(self, name: str) -> Value:
        return self.lookup(name).value

    def define(self, name: str, value: Value, kind: Kind) -> None:
        """Bind without checks (globals, loop and catch variables, block parameters)."""
        self.bindings[name] = Binding(value, kind)

    def let(self, name: str, value: Value, *, const: bool = False) -> None:
        """`let`/`const`: bind in this scope, or assign when this scope already binds `name`."""
        found = self.find(name)
        if (
            found is not None
            and found[1].kind.read_only
            and (
                found[0] is self
                or found[1].kind not in (Kind.VAR, Kind.CONST, Kind.LOOP, Kind.CATCH)
            )
        ):
            raise ReadOnlyName(f"`{name}` is a {found[1].kind.value} and cannot be bound again")
        self.bindings[name] = Binding(value, Kind.CONST if const else Kind.VAR)
        if name not in self.published:
            self.published.append(name)

    def assign(self, name: str, value: Value) -> None:
        """`name = value`: the nearest binding, never across an isolated scope."""
        scope: Scope | None = self
        crossed = False
        while scope is not None:
            binding = scope.bindings.get(name)
            if binding is not None:
                if binding.kind.read_only:
                    raise ReadOnlyName(f"`{name}` is a {binding.kind.value} and cannot be assigned")
                if crossed:
                    raise ParallelRace(
                        f"`{name}` belongs to an outer scope: a parallel branch or block "
                        "may read it but not change it"
                    )
                binding.value = value
                return
            crossed = crossed or scope.isolated
            scope = scope.outer
        raise NameNotDefined(f"`{name}` is not defined (bind it with `let` first)")
