"""Services and bindings: what answers a call to a slot (LANGUAGE.md 1.2).

A slot binds to a model service (a router alias or LiteLLM model name, an
optional role prompt, an optional output schema), a list of services (a
list-valued slot), a nested pattern instance, or a Python callable. Python
callables come only from an instance file or the command line: a pattern
file is data and never names code. The instance's bindings are read by
`prose.spec.instance_loader` and made into these by `prose.runtime.loading`; the keys
each kind takes are `prose.lang.services.SERVICE_KEYS`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prose.runtime.errors import InputError

SCRIPT_PREFIX = "prose-script/"


@dataclass(frozen=True, slots=True)
class ModelService:
    """A model behind the router. `model` None means the run's default model. `requested`:
    the pattern file named `model` (an agent's `model:`), so the run sends to it only when
    granted (`prose.lang.model_choice`); an instance's or the command line's binding is not."""

    model: str | None = None
    role: str | None = None
    schema: Mapping[str, Any] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    requested: bool = False

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "model",
            "model": self.model,
            "role": self.role is not None,
            "schema": dict(self.schema) if self.schema else None,
        }

    @property
    def label(self) -> str:
        return f"model:{self.model or 'default'}"

    @property
    def kind(self) -> str:
        return "model"


@dataclass(frozen=True, slots=True)
class PythonService:
    """`python: package.module:function`; the function gets the inputs as keyword arguments."""

    ref: str
    function: Callable[..., Any]

    def describe(self) -> dict[str, Any]:
        return {"kind": "python", "python": self.ref}

    @property
    def label(self) -> str:
        return f"python:{self.ref}"

    @property
    def kind(self) -> str:
        return "python"


@dataclass(frozen=True, slots=True)
class PatternService:
    """A nested pattern instance: its file, its own bindings and config."""

    path: str
    bindings: Mapping[str, Any] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    # A call's input name -> the nested pattern's input name (the binding's `rename:`).
    rename: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        described = {
            "kind": "pattern",
            "pattern": self.path,
            "with": {name: _describe(item) for name, item in self.bindings.items()},
            "config": dict(self.config),
        }
        if self.rename:
            described["rename"] = dict(self.rename)
        return described

    def nested_inputs(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """A call's inputs under the names the nested pattern takes (`rename:` applied)."""
        return {self.rename.get(name, name): value for name, value in inputs.items()}

    @property
    def label(self) -> str:
        return f"pattern:{self.path}"

    @property
    def kind(self) -> str:
        return "pattern"


@dataclass(frozen=True, slots=True)
class PersonService:
    """A person answers the slot (docs/people.md): asked what a model would be sent.

    `name` is who the person is; `may_answer` who may give the answer (empty:
    anyone); `role` is shown as a model service's role prompt would be.
    """

    name: str
    may_answer: tuple[str, ...] = ()
    role: str | None = None

    def describe(self) -> dict[str, Any]:
        return {"kind": "person", "person": self.name, "may_answer": list(self.may_answer),
                "role": self.role is not None}

    @property
    def label(self) -> str:
        return f"person:{self.name}"

    @property
    def kind(self) -> str:
        return "person"

    def allows(self, who: str) -> bool:
        """Whether `who` may answer for this person."""
        return not self.may_answer or who in self.may_answer


ServiceSpec = ModelService | PythonService | PatternService | PersonService


class ServiceMap(list[ServiceSpec]):
    """A map-valued slot's binding (`(map)` in `### Slots`): one service per entry, in the
    instance's order, and `names` the entries. It is a list-valued slot underneath (a call
    of `handlers[key]` is a call of the service at that entry's position), so everything
    that handles list-valued slots handles it."""

    def __init__(self, services: list[ServiceSpec], names: Sequence[str]) -> None:
        super().__init__(services)
        self.names = tuple(names)


SlotBinding = ServiceSpec | list[ServiceSpec]


def _describe(binding: Any) -> Any:
    if isinstance(binding, list):
        return [_describe(item) for item in binding]
    if isinstance(binding, ModelService | PythonService | PatternService | PersonService):
        return binding.describe()
    return binding


def describe_bindings(bindings: Mapping[str, SlotBinding]) -> dict[str, Any]:
    """The bindings as plain data for the trace (no role prompt text, no code)."""
    return {name: _describe(binding) for name, binding in bindings.items()}


def import_callable(ref: str, base_dir: Path | None = None) -> Callable[..., Any]:
    """`package.module:function` imported; an InputError if it cannot be.

    The module is looked for in the instance file's folder (`base_dir`) and the
    current folder first, then on `sys.path`, whether prose runs as the
    `prose` console script or as `python -m`.
    """
    module_name, _, attribute = ref.partition(":")
    if not module_name or not attribute:
        raise InputError(
            f"`{ref}` is not a Python callable reference (use `package.module:function`)"
        )
    try:
        with _searching(base_dir, Path.cwd()):
            module = importlib.import_module(module_name)
    except ImportError as error:
        raise InputError(f"cannot import `{module_name}` for `{ref}`: {error}") from None
    target: Any = module
    for part in attribute.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise InputError(f"`{module_name}` has no `{attribute}` (from `{ref}`)")
    if not callable(target):
        raise InputError(f"`{ref}` is not callable")
    return target  # type: ignore[no-any-return]


@contextmanager
def _searching(*folders: Path | None) -> Iterator[None]:
    """`folders` at the front of `sys.path` while a module is imported."""
    added = [str(folder) for folder in dict.fromkeys(folders) if folder is not None]
    added = [entry for entry in added if entry not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for entry in added:
            if entry in sys.path:
                sys.path.remove(entry)


def parse_bind_option(text: str) -> tuple[str, SlotBinding]:
    """`--bind slot=MODEL[,MODEL...]` (or `slot=python:pkg.mod:func`)."""
    slot, sep, value = text.partition("=")
    if not sep or not slot.strip() or not value.strip():
        raise InputError(f"`--bind {text}`: expected slot=MODEL[,MODEL...]")
    items = [item.strip() for item in value.split(",") if item.strip()]
    services: list[ServiceSpec] = []
    for item in items:
        if item.startswith("python:"):
            ref = item.removeprefix("python:")
            services.append(PythonService(ref, import_callable(ref)))
        else:
            services.append(ModelService(model=item))
    return slot.strip(), services if len(services) > 1 else services[0]


def scripted(binding: SlotBinding, slot: str, responses: int | None) -> SlotBinding:
    """A binding whose model services are served by the script (Python and patterns stay).

    A list-valued slot gets one scripted service per response list
    (`responses`), or keeps its length when it was bound already.
    """

    names = binding.names if isinstance(binding, ServiceMap) else None

    def model_for(index: int | None) -> str:
        at = index if names is None or index is None else names[index]
        key = f"slot:{slot}" if at is None else f"slot:{slot}[{at}]"
        return SCRIPT_PREFIX + key

    if isinstance(binding, list):
        services: list[ServiceSpec] = [
            ModelService(model_for(i), item.role, item.schema, item.params)
            if isinstance(item, ModelService)
            else item
            for i, item in enumerate(binding)
        ]
        return ServiceMap(services, names) if names is not None else services
    if isinstance(binding, ModelService):
        if responses is not None:
            return [
                ModelService(model_for(i), binding.role, binding.schema) for i in range(responses)
            ]
        return ModelService(model_for(None), binding.role, binding.schema, binding.params)
    return binding
