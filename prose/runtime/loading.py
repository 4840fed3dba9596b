"""Everything checked before a run starts: the pattern, its bindings, config and inputs.

Problems here are `InputError`s (exit 1) with the position of what is wrong,
raised before a single call is made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.errors import ProseSyntaxError
from prose.runtime.errors import InputError
from prose.runtime.services import (
    ModelService,
    PatternService,
    PersonService,
    PythonService,
    ServiceMap,
    ServiceSpec,
    SlotBinding,
    import_callable,
)
from prose.source import Span
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.pattern_file import PatternFile, PatternFiles
    from prose.spec.model import PatternSpec


@dataclass(frozen=True)
class LoadedPattern:
    """A pattern file fit to run: a spec without errors and a parsed program."""

    path: str
    text: str
    spec: PatternSpec
    program: n.Program


def load_pattern(
    source: str | Path | PatternFile, files: PatternFiles | None = None
) -> LoadedPattern:
    """The pattern, fit to run; its errors are InputErrors.

    A path is read, loaded and parsed through `files` (once per run), or here.
    """
    from prose.pattern_file import PatternFile, read_pattern

    if isinstance(source, PatternFile):
        pattern = source
    else:
        filename = str(source)
        try:
            pattern = files.get(filename) if files is not None else read_pattern(filename)
        except ProseSyntaxError as error:
            raise InputError(error.message, Span.point(filename, error.line, error.column)) from None
    spec, errors = pattern.spec, pattern.spec_errors
    if spec is None or errors:
        first = errors[0] if errors else None
        message = first.message if first is not None else "the pattern file cannot be used"
        raise InputError(
            f"the pattern has errors: {message}", first.span if first else None, source=pattern.text
        )
    if pattern.program is None:
        bad = pattern.syntax_error
        if bad is None:
            raise InputError("the pattern has no prose block to run", Span.point(pattern.path, 1, 1))
        raise InputError(
            bad.message, Span.point(pattern.path, bad.line, bad.column), source=pattern.text
        )
    return LoadedPattern(pattern.path, pattern.text, spec, pattern.program)


def declared_names(program: n.Program) -> frozenset[str]:
    """Every name the program binds anywhere: `let`, loop, catch and block variables."""
    from prose.syntax.walk import bound_names

    return bound_names(program)


def iterated_slots(program: n.Program, slots: set[str]) -> set[str]:
    """Slots a `for` iterates: list-valued even without the `list` marker."""
    from prose.syntax.walk import walk_statements

    return {
        statement.iterable.name
        for statement in walk_statements(program.body)
        if isinstance(statement, n.For)
        and isinstance(statement.iterable, n.Name)
        and statement.iterable.name in slots
    }


def uses(program: n.Program) -> dict[str, str]:
    """`use "path" as alias` statements at the top level: alias -> path."""
    return {s.alias: s.path for s in program.body if isinstance(s, n.Use)}


def from_instance_service(service: Any, base_dir: Path) -> ServiceSpec:
    """A runtime service from the instance model's service (`prose.spec.instance`)."""
    kind = getattr(service, "kind", None)
    if kind == "python":
        return PythonService(service.python, import_callable(service.python, base_dir))
    if kind == "person":
        return PersonService(service.name, tuple(service.may_answer), service.prompt)
    if kind == "pattern":
        if service.pattern_path is None:
            raise InputError(f"the nested pattern `{service.pattern}` is not found", service.span)
        inner = {
            name: from_instance_binding(b.value, base_dir, b.keys) for name, b in service.bindings.items()
        }
        return PatternService(service.pattern_path, inner, service.config_values, service.renames)
    role = service.prompt
    if role is None and service.role_path is not None:
        try:
            role = Path(service.role_path).read_text(encoding="utf-8")
        except OSError as error:
            raise InputError(
                f"cannot read role file `{service.role_path}`: {error.strerror}", service.span
            ) from None
    params = {"max_tokens": service.max_tokens} if service.max_tokens is not None else {}
    return ModelService(service.model, role, service.output_schema, params)


def from_instance_binding(value: Any, base_dir: Path, names: Sequence[str] | None = None
                          ) -> SlotBinding:
    """A slot's binding; `names`: a map-valued slot's entry names (`ServiceMap`)."""
    if isinstance(value, list):
        services = [from_instance_service(item, base_dir) for item in value]
        return ServiceMap(services, names) if names is not None else services
    return from_instance_service(value, base_dir)


def config_values(spec: PatternSpec, overrides: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Config defaults with overrides applied; unknown keys and wrong types are errors."""
    from prose.spec.values import describe, matches_type, normalise_type

    values = {param.name: param.default for param in spec.config}
    for name, value in overrides.items():
        param = spec.config_param(name)
        if param is None:
            known = ", ".join(f"`{p.name}`" for p in spec.config) or "none"
            raise InputError(
                f"{where}: `{name}` is not a config key of this pattern (config keys: {known})"
            )
        type_name = normalise_type(param.type) or ""
        if type_name and not matches_type(value, type_name):
            raise InputError(f"{where}: config `{name}` is {describe(value)}, not `{param.type}`")
        values[name] = value
    return values


def input_values(spec: PatternSpec, supplied: Mapping[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Parameters from the supplied inputs (a config key's input overrides its default)."""
    from prose.spec.values import describe, matches_type, normalise_type

    slots = set(spec.slot_names)
    values: dict[str, Any] = {}
    for name, value in supplied.items():
        if name in slots:
            raise InputError(
                f"input `{name}` is a slot: bind it (`--bind {name}=MODEL`), do not pass it"
            )
        if spec.config_param(name) is not None:
            config.update(config_values(spec, {name: value}, "input"))
            continue
        param = spec.parameter(name)
        if param is None:
            known = (
                ", ".join(f"`{p.name}`" for p in spec.parameters if p.name not in slots) or "none"
            )
            raise InputError(
                f"input `{name}` is not a parameter of this pattern (parameters: {known})"
            )
        type_name = normalise_type(param.type or "") or ""
        if type_name and not matches_type(value, type_name):
            raise InputError(f"input `{name}` is {describe(value)}, not `{param.type}`")
        values[name] = value
    for param in spec.parameters:
        if param.name in values or param.name in slots or spec.config_param(param.name) is not None:
            continue
        if not param.optional:
            raise InputError(
                f"required input `{param.name}` is not supplied (use `--input {param.name}=...`)",
                param.span,
            )
        values[param.name] = param.default
    return values
