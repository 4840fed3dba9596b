"""Binding a pattern's names before it runs: slots to services, and the globals scope.

With a script, every model service is replaced by the scripted model
(`prose-script/slot:NAME`, one service per response list for a list-valued
slot); Python and nested-pattern bindings stay. Without one, an unbound slot
gets the run's default model, or the run stops before it starts.
`--require-distinct-models` is checked here too: independent slots routed to
one model are an information-hiding violation (exit 5) before any call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.lang.flows import Label, default_texts
from prose.runtime import values as v
from prose.runtime.context import RunContext
from prose.runtime.errors import InformationHidingViolation, InputError
from prose.runtime.loading import LoadedPattern, iterated_slots, uses
from prose.runtime.scope import Kind, Scope
from prose.runtime.services import (
    ModelService,
    PatternService,
    PersonService,
    ServiceMap,
    SlotBinding,
    scripted,
)
from prose.runtime.values import relabel, wrap
from prose.syntax import nodes as n
from prose.uses import UseRefused, resolve_use

if TYPE_CHECKING:
    from prose.llm.script import Script
    from prose.spec.model import PatternSpec


def bind_slots(
    loaded: LoadedPattern,
    given: Mapping[str, SlotBinding],
    *,
    script: Script | None,
    default_model: str | None,
    roots: Sequence[Path],
    key_prefix: str = "",
) -> tuple[dict[str, SlotBinding], frozenset[str]]:
    """Every slot's binding (scripted, given or the default model) and the list-valued slots."""
    spec = loaded.spec
    slots = set(spec.slot_names)
    list_slots = set(spec.list_valued_slots()) | iterated_slots(loaded.program, slots)
    list_slots |= {name for name, binding in given.items() if isinstance(binding, list)}
    unknown = [name for name in given if name not in slots and name not in uses(loaded.program)]
    if unknown:
        raise InputError(
            f"`{unknown[0]}` is not a slot of this pattern (slots: "
            + ", ".join(f"`{s}`" for s in spec.slot_names)
            + ")"
        )
    bindings: dict[str, SlotBinding] = {}
    remaining = script.remaining() if script is not None else {}
    maps = {slot.name for slot in spec.slots if slot.map_valued}
    for name in spec.slot_names:
        binding: SlotBinding | None = given.get(name) or _nested_callee(spec, name)
        if script is not None:
            key = key_prefix + name
            lists = sum(1 for k in remaining if k.startswith(f"slot:{key}["))
            base: SlotBinding = binding if binding is not None else ModelService()
            if name in maps and not isinstance(base, ServiceMap):
                # A map slot run from a script alone: its entries are the script's
                # `slot:NAME[ENTRY]` queues.
                entries = [k[len(f"slot:{key}["):-1] for k in remaining
                           if k.startswith(f"slot:{key}[") and k.endswith("]")]
                base = ServiceMap([ModelService()] * len(entries), entries)
            elif name in list_slots and not isinstance(base, list):
                base = [ModelService()] * max(lists, 1)
            binding = scripted(base, key, None)
        elif binding is None:
            if not default_model:
                raise InputError(
                    f"the slot `{name}` is not bound: use `--bind {name}=MODEL`, "
                    "`--model MODEL`, an instance file, or `--script`"
                )
            binding = [ModelService()] if name in list_slots else ModelService()
        bindings[name] = binding
    for statement in loaded.program.body:
        if not isinstance(statement, n.Use):
            continue
        nested = given.get(statement.alias)
        if isinstance(nested, PatternService):
            bindings[statement.alias] = nested
            continue
        try:
            target = resolve_use(statement.path, loaded.path, roots)
        except UseRefused as error:
            raise InputError(str(error), statement.span) from None
        bindings[statement.alias] = PatternService(str(target))
    return bindings, frozenset(list_slots)


def _nested_callee(spec: PatternSpec, name: str) -> PatternService | None:
    """A callee contract with its own ```prose program runs as a nested pattern
    (`prose.contracts`): its own scope and information-hiding boundary, its
    script keys `name.INNER`. Other callees are one model call."""
    from prose.contracts import nested_target

    target = nested_target(spec, name)
    return PatternService(target[0], {}, target[1]) if target is not None else None


def globals_scope(ctx: RunContext, config: Mapping[str, Any], inputs: Mapping[str, Any]) -> Scope:
    """Slots, config keys, parameters and `use` aliases: the read-only outermost scope."""
    scope = Scope()
    for name, binding in ctx.bindings.items():
        kind = Kind.ALIAS if name in ctx.aliases else Kind.SLOT
        if isinstance(binding, ServiceMap):
            scope.define(name, v.service_map(name, binding.names), kind)
        elif isinstance(binding, list):
            scope.define(name, v.services(name, len(binding)), kind)
        else:
            scope.define(name, v.service(name), kind)
    defaults = {item.name: item.default for item in ctx.spec.config} if ctx.spec else {}
    for name, value in config.items():
        texts = default_texts(value) if name in defaults and value == defaults[name] else ()
        wrapped = wrap(value)
        if texts:  # a default is the pattern's own literal text (`prose.lang.flows`)
            wrapped = relabel(wrapped, Label(literal=frozenset(texts)), deep=True)
        scope.define(name, wrapped, Kind.CONFIG)
    for name, value in inputs.items():
        scope.define(name, wrap(value), Kind.PARAMETER)
    return scope


def _answerers(binding: SlotBinding, default: str) -> set[str]:
    """Who can answer a slot: its models, and the people who may answer for it (a person
    binding that names nobody may be answered by anyone: `person *`)."""
    items = binding if isinstance(binding, list) else [binding]
    out: set[str] = set()
    for item in items:
        if isinstance(item, ModelService):
            out.add(item.model or default)
        elif isinstance(item, PersonService):
            out.update(f"person {who}" for who in item.may_answer or ("*",))
    return out


def _shared(a: set[str], b: set[str]) -> set[str]:
    common = a & b
    if "person *" in a:
        common |= {x for x in b if x.startswith("person ")}
    if "person *" in b:
        common |= {x for x in a if x.startswith("person ")}
    return common


def check_distinct_models(policy: Any, bindings: Mapping[str, SlotBinding], default: str) -> None:
    """`--require-distinct-models`: two independent slots never share a model, nor a person
    who may answer for both."""
    for a, b in policy.independent:
        if a not in bindings or b not in bindings:
            continue
        shared = _shared(_answerers(bindings[a], default), _answerers(bindings[b], default))
        if shared:
            raise InformationHidingViolation(
                f"`{a}` and `{b}` are independent but both route to `{sorted(shared)[0]}` "
                "(--require-distinct-models)"
            )
