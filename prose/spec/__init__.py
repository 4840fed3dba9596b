"""The pattern spec model (`*.prose.md`) and the instance model (`*.yaml`).

`load_spec(text, filename)` reads a pattern file into a `PatternSpec` with
positions and diagnostics (codes PS1xx, category `spec`; the table is
`prose.spec.codes.SPEC_CODES`). `load_instance(text, filename)` reads an
instance file and `validate_instance(instance, spec)` checks it against its
pattern. Nothing here imports litellm, jinja2, rich or lark.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prose.spec.codes import BY_CODE, SPEC_CODES, SpecCode
    from prose.spec.instance import (
        Binding,
        Entry,
        Instance,
        InstanceResult,
        ModelService,
        PatternService,
        PersonService,
        PythonService,
        Service,
        resolve_pattern,
    )
    from prose.spec.instance_check import iterated_names, validate_bindings, validate_instance
    from prose.spec.instance_loader import (
        SpecLoader,
        load_instance,
        load_instance_file,
    )
    from prose.spec.invariants import (
        DistinctModels,
        Independent,
        InvariantForm,
        LoopsBoundedBy,
        NeverSees,
        OnlyGrows,
        ReturnsUnmerged,
        SeesOnly,
        UnawareOf,
        parse_invariant_form,
    )
    from prose.spec.loader import load_spec, load_spec_file
    from prose.spec.model import (
        ConfigParam,
        DelegationBlock,
        Invariant,
        Parameter,
        PatternSpec,
        Requirement,
        ReturnKey,
        Section,
        Shape,
        Slot,
        SpecResult,
    )

# Loaded on first use, so `prose lint` pays only for the modules it needs
# (the instance models are not needed to lint a pattern file).
_EXPORTS: dict[str, str] = {
    "BY_CODE": "prose.spec.codes",
    "Binding": "prose.spec.instance",
    "ConfigParam": "prose.spec.model",
    "DelegationBlock": "prose.spec.model",
    "Entry": "prose.spec.instance",
    "DistinctModels": "prose.spec.invariants",
    "Independent": "prose.spec.invariants",
    "Instance": "prose.spec.instance",
    "InstanceResult": "prose.spec.instance",
    "Invariant": "prose.spec.model",
    "InvariantForm": "prose.spec.invariants",
    "LoopsBoundedBy": "prose.spec.invariants",
    "ModelService": "prose.spec.instance",
    "NeverSees": "prose.spec.invariants",
    "OnlyGrows": "prose.spec.invariants",
    "Parameter": "prose.spec.model",
    "PatternService": "prose.spec.instance",
    "PatternSpec": "prose.spec.model",
    "PersonService": "prose.spec.instance",
    "PythonService": "prose.spec.instance",
    "Requirement": "prose.spec.model",
    "ReturnKey": "prose.spec.model",
    "ReturnsUnmerged": "prose.spec.invariants",
    "SPEC_CODES": "prose.spec.codes",
    "Section": "prose.spec.model",
    "SeesOnly": "prose.spec.invariants",
    "Service": "prose.spec.instance",
    "Shape": "prose.spec.model",
    "Slot": "prose.spec.model",
    "SpecCode": "prose.spec.codes",
    "SpecLoader": "prose.spec.instance_loader",
    "SpecResult": "prose.spec.model",
    "UnawareOf": "prose.spec.invariants",
    "iterated_names": "prose.spec.instance_check",
    "load_instance": "prose.spec.instance_loader",
    "load_instance_file": "prose.spec.instance_loader",
    "load_spec": "prose.spec.loader",
    "load_spec_file": "prose.spec.loader",
    "parse_invariant_form": "prose.spec.invariants",
    "resolve_pattern": "prose.spec.instance",
    "validate_bindings": "prose.spec.instance_check",
    "validate_instance": "prose.spec.instance_check",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prose.spec' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BY_CODE",
    "SPEC_CODES",
    "Binding",
    "ConfigParam",
    "DelegationBlock",
    "DistinctModels",
    "Entry",
    "Independent",
    "Instance",
    "InstanceResult",
    "Invariant",
    "InvariantForm",
    "LoopsBoundedBy",
    "ModelService",
    "NeverSees",
    "OnlyGrows",
    "Parameter",
    "PatternService",
    "PatternSpec",
    "PersonService",
    "PythonService",
    "Requirement",
    "ReturnKey",
    "ReturnsUnmerged",
    "Section",
    "SeesOnly",
    "Service",
    "Shape",
    "Slot",
    "SpecCode",
    "SpecLoader",
    "SpecResult",
    "UnawareOf",
    "iterated_names",
    "load_instance",
    "load_instance_file",
    "load_spec",
    "load_spec_file",
    "parse_invariant_form",
    "resolve_pattern",
    "validate_bindings",
    "validate_instance",
]
