"""The pattern spec model (`*.prose.md`) and the instance model (`*.yaml`).

`load_spec(text, filename)` reads a pattern file into a `PatternSpec` with
positions and diagnostics (codes PS1xx, category `spec`; the table is
`prose.spec.codes.SPEC_CODES`). `load_instance(text, filename)` reads an
instance file and `validate_instance(instance, spec)` checks it against its
pattern. Nothing here imports litellm, jinja2, rich or lark.
"""

from prose.spec.codes import BY_CODE, SPEC_CODES, SpecCode
from prose.spec.instance import (
    Binding,
    Entry,
    Instance,
    InstanceResult,
    ModelService,
    PatternService,
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

__all__ = [
    "BY_CODE",
    "SPEC_CODES",
    "Binding",
    "ConfigParam",
    "DelegationBlock",
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
