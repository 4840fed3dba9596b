"""`validate_instance`: an instance's bindings, config and inputs against its pattern spec."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from prose.diagnostics.model import Diagnostic, Label
from prose.source import Span
from prose.spec.codes import make
from prose.spec.instance import Binding, Entry, Instance
from prose.spec.model import PatternSpec
from prose.spec.values import describe, matches_type, normalise_type
from prose.spelling import did_you_mean

_FOR = re.compile(
    r"^[ \t]*(?:(?:let|const)[ \t]+[A-Za-z_][\w-]*[ \t]*=[ \t]*)?(?:parallel[ \t]+)?for[ \t]+"
    r"[A-Za-z_][\w-]*(?:[ \t]*,[ \t]*[A-Za-z_][\w-]*)?[ \t]+in[ \t]+([A-Za-z_][\w-]*)[ \t]*[:(]",
    re.M,
)


def iterated_names(spec: PatternSpec) -> set[str]:
    """Slots that the program iterates with `for` / `parallel for` (a textual scan).

    The linter decides this from the AST; this scan lets instance validation
    work without parsing the program.
    """
    block = spec.delegation
    if block is None:
        return set()
    slots = set(spec.slot_names)
    return {name for name in _FOR.findall(block.source) if name in slots}


def _slot_help(name: str, spec: PatternSpec) -> str | None:
    if spec.config_param(name) is not None:
        return f"`{name}` is a config key: set it under `config:`"
    if spec.parameter(name) is not None:
        return f"`{name}` is an input: supply it under `inputs:`"
    if spec.slots:
        return "the slots are " + ", ".join(f"`{slot}`" for slot in spec.slot_names)
    return None


def validate_bindings(
    bindings: dict[str, Binding],
    config: Iterable[Entry],
    spec: PatternSpec,
    anchor: Span,
    list_slots: Collection[str] = (),
    skip: Collection[str] = (),
) -> list[Diagnostic]:
    """Check `with` and `config` against `spec`; missing bindings are reported at `anchor`.

    Slots in `skip` (bound, but to an invalid service) are not reported unbound.

    A slot is list-valued when it is marked `list`, documented by a `T[]`
    parameter, iterated by `for` in the program, or named in `list_slots`.
    """
    out: list[Diagnostic] = []
    listy = spec.list_valued_slots() | iterated_names(spec) | set(list_slots)
    for name, binding in bindings.items():
        slot = spec.slot(name)
        if slot is None:
            out.append(
                make(
                    "PS176",
                    f"`{name}` is not a slot of pattern `{spec.name}`"
                    + did_you_mean(name, spec.slot_names),
                    binding.span,
                    help=_slot_help(name, spec),
                )
            )
        elif slot.map_valued != (binding.keys is not None):
            wanted = ("a mapping of entry names to services (`billing: { model: fast }`)"
                      if slot.map_valued else "one service (mark the slot `(map)` to bind entries)")
            out.append(
                make(
                    "PS202",
                    f"slot `{name}` takes {wanted}",
                    binding.value_span,
                    secondary=(Label(slot.span, "the slot"),),
                )
            )
        elif name in listy and not binding.is_list:
            out.append(
                make(
                    "PS178",
                    f"slot `{name}` is list-valued but bound to a single service",
                    binding.value_span,
                    help="bind a YAML list of services",
                    secondary=(Label(slot.span, "the slot"),),
                )
            )
        elif name not in listy and binding.is_list:
            out.append(
                make(
                    "PS179",
                    f"slot `{name}` takes one service but is bound to a list",
                    binding.value_span,
                    secondary=(Label(slot.span, "the slot"),),
                    help="mark the slot `(list)` in the pattern, or bind one service",
                )
            )
    for slot in spec.slots:
        if slot.name not in bindings and slot.name not in skip:
            out.append(
                make(
                    "PS177",
                    f"slot `{slot.name}` is not bound",
                    anchor,
                    secondary=(Label(slot.span, "the slot"),),
                    help=f"add `{slot.name}: {{ model: ... }}` under `with:`",
                )
            )
    for entry in config:
        param = spec.config_param(entry.name)
        if param is None:
            help_text = (
                f"`{entry.name}` is a slot: bind it under `with:`"
                if spec.slot(entry.name)
                else None
            )
            out.append(
                make(
                    "PS180",
                    f"`{entry.name}` is not a config key of pattern `{spec.name}`"
                    + did_you_mean(entry.name, [item.name for item in spec.config]),
                    entry.span,
                    help=help_text,
                )
            )
        elif normalise_type(param.type) and not matches_type(entry.value, param.type):
            out.append(
                make(
                    "PS181",
                    f"config `{entry.name}` is {describe(entry.value)}, not `{param.type}`",
                    entry.value_span,
                    secondary=(Label(param.span, "declared here"),),
                )
            )
    return out


def validate_instance(
    instance: Instance,
    spec: PatternSpec,
    *,
    list_slots: Collection[str] = (),
    extra_inputs: Collection[str] = (),
) -> list[Diagnostic]:
    """Check an instance against its pattern: slots, config keys and types, inputs.

    `list_slots` adds slots known to be list-valued (e.g. from the linter's
    analysis of the program); `extra_inputs` names inputs supplied elsewhere
    (the command line), so they are not reported missing.
    """
    anchor = instance.with_span or instance.pattern_span or Span.point(instance.path, 1, 1)
    out = validate_bindings(
        instance.bindings, instance.config, spec, anchor, list_slots, instance.invalid_slots
    )
    for entry in instance.inputs:
        if spec.slot(entry.name) is not None:
            out.append(
                make("PS185", f"input `{entry.name}` is a slot; bind it under `with:`", entry.span)
            )
            continue
        config = spec.config_param(entry.name)
        if config is not None:
            if normalise_type(config.type) and not matches_type(entry.value, config.type):
                out.append(
                    make(
                        "PS181",
                        f"input `{entry.name}` is {describe(entry.value)}, not `{config.type}`",
                        entry.value_span,
                        secondary=(Label(config.span, "the config key"),),
                    )
                )
            continue
        param = spec.parameter(entry.name)
        if param is None:
            out.append(
                make(
                    "PS183",
                    f"input `{entry.name}` is not a parameter of pattern `{spec.name}`"
                    + did_you_mean(entry.name, [p.name for p in spec.parameters]),
                    entry.span,
                )
            )
            continue
        type_name = normalise_type(param.type or "")
        if type_name and not matches_type(entry.value, type_name):
            out.append(
                make(
                    "PS184",
                    f"input `{entry.name}` is {describe(entry.value)}, not `{param.type}`",
                    entry.value_span,
                    secondary=(Label(param.span, "declared here"),),
                )
            )
    supplied = {entry.name for entry in instance.inputs} | set(extra_inputs)
    where = instance.inputs_span or instance.pattern_span or Span.point(instance.path, 1, 1)
    for param in spec.required_inputs():
        if param.name not in supplied:
            out.append(
                make(
                    "PS182",
                    f"required input `{param.name}` is not supplied by the instance",
                    where,
                    secondary=(Label(param.span, "declared here"),),
                    help=f"add `{param.name}: ...` under `inputs:` or pass it on the command line",
                )
            )
    return out


def validate_rename(rename: Iterable[Entry], spec: PatternSpec) -> list[Diagnostic]:
    """Check a nested pattern's `rename: {CALL_INPUT: NESTED_INPUT}`: each value names an
    input of the nested pattern (PS220), and no two inputs go to one name."""
    out: list[Diagnostic] = []
    slots = set(spec.slot_names)
    inputs = [p.name for p in spec.parameters if p.name not in slots]
    taken: dict[str, str] = {}
    for entry in rename:
        target = entry.value
        if not isinstance(target, str):
            out.append(make("PS220", f"`rename` of `{entry.name}` is {describe(target)}, not the "
                            "name of an input of the nested pattern", entry.value_span))
            continue
        if spec.parameter(target) is None or target in slots:
            out.append(
                make(
                    "PS220",
                    f"`rename` sends `{entry.name}` to `{target}`, which is not an input of "
                    f"pattern `{spec.name}`" + did_you_mean(target, inputs),
                    entry.value_span,
                    help="its inputs are " + (", ".join(f"`{name}`" for name in inputs) or "none"),
                )
            )
        elif target in taken:
            out.append(make("PS220", f"`rename` sends both `{taken[target]}` and `{entry.name}` "
                            f"to `{target}`", entry.value_span))
        taken.setdefault(str(target), entry.name)
    return out
