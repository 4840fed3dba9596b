"""What a pattern declares, as the checker needs it.

This is the one module of the checker that reads `PatternSpec` attributes,
so the rules depend on a small, stable shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prose.lang.invariants import InvariantForm
from prose.source import Span

if TYPE_CHECKING:
    from prose.spec.model import PatternSpec


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """A declared slot, as the rules see it."""

    name: str
    span: Span
    requires: tuple[str, ...] | None
    # The entries without a condition: each must be matched by an input.
    required_entries: tuple[str, ...]
    ensures: str | None
    role_word: str | None
    list_valued: bool
    output_schema: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class ConfigInfo:
    """A declared config key, as the rules see it."""

    name: str
    span: Span
    type: str | None
    default: Any


@dataclass(frozen=True, slots=True)
class ParameterInfo:
    """A declared parameter, as the rules see it."""

    name: str
    span: Span
    optional: bool


@dataclass(frozen=True, slots=True)
class InvariantInfo:
    """An invariant bullet and its checkable form."""

    text: str
    span: Span
    form: InvariantForm | None  # its checkable form, if it is written in one


@dataclass(frozen=True)
class Declarations:
    """Slots, config, parameters, returns and invariants of one pattern."""

    path: str
    name: str
    slots: dict[str, SlotInfo] = field(default_factory=dict)
    config: dict[str, ConfigInfo] = field(default_factory=dict)
    parameters: dict[str, ParameterInfo] = field(default_factory=dict)
    returns: tuple[str, ...] | None = None
    returns_span: Span | None = None
    invariants: tuple[InvariantInfo, ...] = ()

    @property
    def inputs(self) -> dict[str, ParameterInfo]:
        """Parameters that are values (not documenting a slot or naming a config key)."""
        return {
            name: info
            for name, info in self.parameters.items()
            if name not in self.slots and name not in self.config
        }

    def is_declared(self, name: str) -> bool:
        return name in self.slots or name in self.config or name in self.parameters


def from_spec(spec: PatternSpec) -> Declarations:
    """Build the checker's view of a `prose.spec.model.PatternSpec`."""
    slots: dict[str, SlotInfo] = {}
    for slot in spec.slots:
        if slot.name in slots:
            continue
        entries: tuple[str, ...] | None = None
        if slot.requires_declared:
            entries = tuple(item.text for item in slot.requires)
        required = tuple(item.text for item in slot.requires if not item.optional)
        slots[slot.name] = SlotInfo(
            name=slot.name,
            span=slot.span,
            requires=entries,
            required_entries=required,
            ensures=slot.ensures,
            role_word=slot.role_word,
            list_valued=slot.list_valued,
            output_schema=slot.output_schema,
        )
    config = {
        item.name: ConfigInfo(item.name, item.span, item.type, item.default)
        for item in spec.config
    }
    parameters = {
        item.name: ParameterInfo(item.name, item.span, item.optional)
        for item in spec.parameters
    }
    returns: tuple[str, ...] | None = None
    returns_span = None
    if spec.returns:
        returns = tuple(item.name for item in spec.returns)
        returns_span = spec.returns[0].span
    invariants = tuple(
        InvariantInfo(item.text, item.span, item.form) for item in spec.invariants
    )
    return Declarations(
        path=spec.path,
        name=spec.name or "",
        slots=slots,
        config=config,
        parameters=parameters,
        returns=returns,
        returns_span=returns_span,
        invariants=invariants,
    )
