"""A call site compiled once per run: what every call made at one `call` to one service
shares, worked out at its first call and reused (issue 41).

A call's messages, labels and content check depend on the values it sends and are made
per call. Everything else does not: the slot's `ensures` and the service's role, the
schema it asks for (its fields and the words of them the model reads), the parameters
sent and those in the cache key, how the budget names the call, and the policy's screen
(`prose.lang.screen`: which labels could make a call here a violation, so that a call
carrying none of them is cleared without its channels being built). A call's own
`schema:` property is a value and is read per call; the site's schema is what applies
without one. The JSON form of the schema is still made per call: the model layer hands
it on, and a provider's translation may change it in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prose.lang.channels import MESSAGE_KINDS, Channel, call_channels
from prose.lang.flows import CONCRETE, NO_INDEX, NO_LABEL, Label
from prose.lang.policy import Policy
from prose.lang.screen import Screen, screen
from prose.lang.services import SENT_PARAMETERS
from prose.runtime import values as v
from prose.runtime.services import ModelService, PersonService, ServiceSpec
from prose.runtime.values import Value
from prose.syntax import nodes as n

ScreenKey = tuple[tuple[str, ...], tuple[str, ...], bool, "str | tuple[str, ...] | None"]


@dataclass(frozen=True, slots=True)
class CallOptions:
    """The reserved properties of one call, evaluated."""

    prompt: Value | None = None
    schema_value: Value | None = None  # the call's own `schema:` (its label counts for hiding)
    model: str | None = None
    retry: int = 0
    backoff: str = "none"
    schema: Mapping[str, Any] | None = None
    # What the control-flow invariants evaluated before the call (`prose.runtime.gates`).
    gates: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Payload:
    """Everything one call sends: what the policy checks is what the messages are built from.

    `ensures` and `role` are sent to a model service only (the system message);
    `schema` is the call's own `schema:` value and `schema_words` the field
    names and type words of the response format the model receives.
    """

    inputs: Mapping[str, Value]
    prompt: Value | None = None
    schema: Value | None = None
    schema_words: tuple[str, ...] = ()
    ensures: str | None = None
    role: str | None = None

    def channels(self) -> list[Channel]:
        schema: Value | None = self.schema
        if self.schema_words:
            words = v.labelled(None, Label(literal=frozenset(self.schema_words)))
            schema = v.relabel(schema, words.label) if schema is not None else words
        return call_channels(self.inputs, prompt=self.prompt, schema=schema,
                             ensures=self.ensures, role=self.role)

    def label(self) -> Label:
        """The union of what the call is given (a call's output carries it transitively)."""
        parts = [*self.inputs.values(), *(x for x in (self.prompt, self.schema) if x is not None)]
        return CONCRETE.join(value.label for value in parts)


_EMPTY = Value(None, NO_LABEL)  # an input of a call site's fixed channels (`CallSite.screen`)


@dataclass(frozen=True, slots=True)
class CallSite:
    """One call site and the service it reaches, compiled (see the module)."""

    node: n.Call  # held, so that the run's table of sites, keyed by identity, stays true
    service: ServiceSpec
    slot: str
    what: str  # how the budget names it: "the call to `critic` at line 12"
    messages: bool  # sent as messages built from every channel (a model, a person)
    schema_fields: Mapping[str, Any]  # the service's own or the slot's output schema
    schema_words: tuple[str, ...]
    ensures: str | None = None
    role: str | None = None
    key_params: Mapping[str, Any] = field(default_factory=dict)
    send_params: Mapping[str, Any] = field(default_factory=dict)
    _screens: dict[ScreenKey, Screen | None] = field(default_factory=dict, repr=False)

    def payload(self, inputs: Mapping[str, Value], options: CallOptions) -> Payload:
        """What a call here with `inputs` and `options` sends (LANGUAGE.md 4.4)."""
        if not self.messages:
            return Payload(inputs, options.prompt)  # the one rule of what each kind is sent
        words = (tuple(schema_words(options.schema)) if options.schema
                 else self.schema_words)
        return Payload(inputs, options.prompt, options.schema_value, words, self.ensures,
                       self.role)

    def schema(self, options: CallOptions) -> dict[str, Any] | None:
        """The JSON schema a call here asks for (its own `schema:` first)."""
        return json_schema(options.schema or self.schema_fields)

    def screen(self, policy: Policy, payload: Payload, index: int,
               entry: str | tuple[str, ...] | None) -> Screen | None:
        """The policy's screen of a call here sending `payload` (None: judge in full): made
        once per shape of call (its input names, schema words, index and entry)."""
        key: ScreenKey = (tuple(payload.inputs), payload.schema_words, index != NO_INDEX,
                          entry)
        try:
            return self._screens[key]
        except KeyError:
            fixed = Payload({name: _EMPTY for name in payload.inputs}, None, None,
                            payload.schema_words, payload.ensures, payload.role).channels()
            found = self._screens[key] = screen(policy, self.slot, fixed, index != NO_INDEX,
                                                entry)
            return found


def compile_site(node: n.Call, slot: str, service: ServiceSpec,
                 slot_schema: Mapping[str, Any] | None, ensures: str | None) -> CallSite:
    """The call site of `node` reaching `slot` bound to `service` (`slot_schema` and
    `ensures`: the spec's declaration of the slot)."""
    what = f"the call to `{slot}` at line {node.line}"
    if service.kind not in MESSAGE_KINDS or not isinstance(service, ModelService | PersonService):
        return CallSite(node, service, slot, what, False, {}, ())
    own = service.schema if isinstance(service, ModelService) else None
    fields = own or slot_schema or {}
    params = service.params if isinstance(service, ModelService) else {}
    return CallSite(
        node, service, slot, what, True, fields, tuple(schema_words(fields)), ensures, service.role, dict(params),
        {key: value for key, value in params.items() if key in SENT_PARAMETERS},
    )


def schema_words(fields: Mapping[str, Any]) -> list[str]:
    """The field names and type words of a schema, as the model reads them."""
    out: list[str] = []
    for key, item in fields.items():
        out.append(str(key))
        if isinstance(item, Mapping):
            out.extend(schema_words(item))
        elif isinstance(item, list):
            out.extend(str(entry) for entry in item if not isinstance(entry, Mapping | list))
        elif item is not None and not isinstance(item, bool):
            out.append(str(item))
    return out


def json_schema(fields: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The JSON schema a call asks the model for, from its fields (or a JSON schema)."""
    if not fields:
        return None
    if "type" in fields or "properties" in fields or "$ref" in fields:
        return dict(fields)  # already a JSON schema (from an instance file)
    from prose.llm.schema import schema_from_fields

    return schema_from_fields({str(k): str(v) for k, v in fields.items()})
