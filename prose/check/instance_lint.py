"""`prose lint INSTANCE.yaml`: an instance checked against its pattern as the run would.

The instance loader already checks the file itself, its bindings, config types and
inputs against the pattern, and each nested pattern's own `with:`, `config:` and
`rename:` (`prose.spec.instance_loader`). What it cannot see without the program is
how the outer pattern *calls* a nested pattern: this module adds that. For every slot
bound to a nested pattern, each `call SLOT` of the outer program must pass (after the
binding's `rename:`) only inputs the nested pattern takes and every input it needs
(PS221): the run would otherwise stop at that call (R012).

It also judges the channels through external tools as this instance binds them
(PH620, PH621, `prose.lang.tools`): a tool the instance serves `separate` (a server
per slot) is no channel, a shared one is, whatever the pattern alone says; `prose run`
of the instance refuses the same findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from prose.check.lint import lint_pattern
from prose.diagnostics.model import Diagnostic, Label
from prose.errors import InputReadError, ProseSyntaxError
from prose.files import read_text
from prose.lang.properties import is_input
from prose.spec.codes import make
from prose.spec.instance import Binding, PatternService
from prose.spec.instance_loader import load_instance_file
from prose.spec.instance_tools import separate_tools
from prose.spec.loader import load_spec_file
from prose.spec.model import PatternSpec
from prose.spelling import closest, did_you_mean
from prose.syntax import nodes as n
from prose.syntax.walk import find_all

# The rules whose verdict depends on how the instance binds the tools.
TOOL_CHANNEL_CODES = ("PH620", "PH621")


@dataclass
class InstanceLint:
    """The diagnostics of one instance file, and the texts their spans point into."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)


def lint_instance(path: str) -> InstanceLint:
    """Check the instance at `path` against its pattern (raises InputReadError when the
    file cannot be read)."""
    out = InstanceLint(path)
    loaded = load_instance_file(path)
    out.diagnostics.extend(loaded.diagnostics)
    out.sources[path] = read_text(path, empty_ok=True)
    instance = loaded.instance
    if instance is None or instance.pattern_path is None:
        return out
    pattern_path = instance.pattern_path
    try:
        text = read_text(pattern_path)
    except (InputReadError, ProseSyntaxError):
        return out  # the loader reported the pattern it could not read
    from prose.pattern_file import pattern_from_text  # as `lint_text` does: a lazy edge

    pattern = pattern_from_text(text, pattern_path)
    result = lint_pattern(pattern)
    if result.program is None or result.spec is None:
        return out
    nested = _nested_call_problems(result.program, instance.bindings)
    channels = [d for d in lint_pattern(pattern, select=TOOL_CHANNEL_CODES,
                                        separate_tools=separate_tools(instance.tools)).diagnostics
                if d.code in TOOL_CHANNEL_CODES]
    if nested or channels:
        out.sources[pattern_path] = text
        out.diagnostics.extend([*nested, *channels])
    return out


def _nested_call_problems(program: n.Program, bindings: dict[str, Binding]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    calls = [call for call in find_all(program, n.Call) if isinstance(call.target, n.Name)]
    for slot, binding in bindings.items():
        services = binding.value if isinstance(binding.value, list) else [binding.value]
        for service in services:
            if not isinstance(service, PatternService) or service.pattern_path is None:
                continue
            spec = _spec(service.pattern_path)
            if spec is None:
                continue
            for call in calls:
                if isinstance(call.target, n.Name) and call.target.name == slot:
                    out.extend(_check_call(call, slot, service, spec, binding))
    return out


def _spec(path: str) -> PatternSpec | None:
    try:
        return load_spec_file(Path(path)).spec
    except (InputReadError, ProseSyntaxError):
        return None


def _check_call(call: n.Call, slot: str, service: PatternService, spec: PatternSpec,
                binding: Binding) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    rename = service.renames
    slots = set(spec.slot_names)
    takes = {p.name for p in spec.parameters if p.name not in slots}
    takes |= {c.name for c in spec.config}  # a config key may be passed as an input
    note = (Label(binding.span, f"`{slot}` is bound to pattern `{service.pattern}` here"),)
    passed = {rename.get(p.name, p.name) for p in call.properties if is_input(p.name)}
    missing = [p.name for p in spec.required_inputs() if p.name not in passed | slots]
    for prop in call.properties:
        if not is_input(prop.name):
            continue
        name = rename.get(prop.name, prop.name)
        if name in takes:
            continue
        shown = f"`{prop.name}`" + (f" (renamed `{name}`)" if name != prop.name else "")
        inputs = sorted(p.name for p in spec.parameters if p.name not in slots)
        guess = did_you_mean(name, inputs)
        out.append(
            make(
                "PS221",
                f"the call passes {shown} to the nested pattern `{spec.name}` of `{slot}`, "
                f"which takes no input `{name}`{guess}",
                prop.span,
                secondary=note,
                help=f"rename it in the binding: `rename: {{{prop.name}: "
                f"{closest(name, inputs) or (missing[0] if len(missing) == 1 else 'INPUT')}}}`"
                + (f" (its inputs are {', '.join(f'`{i}`' for i in inputs)})" if inputs else ""),
            )
        )
    for name in missing:
        out.append(
            make(
                "PS221",
                f"the call of `{slot}` does not pass `{name}`, a required input of the "
                f"nested pattern `{spec.name}`",
                call.head if call.head.line else call.span,
                secondary=note,
                help=f"pass `{name}: ...` in the call, or `rename:` the input that holds it",
            )
        )
    return out
