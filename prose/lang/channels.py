"""What a call sends into a model, channel by channel (LANGUAGE.md 4.4).

A model call's messages are built from exactly these channels: each input
(its name is sent as a label, its value as text), the call's `prompt`, the
`schema` it asks for (field names and type words go to the model as the
response format), the slot's own `ensures` text (the system message) and the
service's role prompt. Every channel counts for hiding. The interpreter
renders the messages from the same channels it checks, and the linter builds
them from the flows it proves possible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from prose.lang.flows import NO_CHAINS, Chains

ChannelKind = Literal["input", "prompt", "schema", "ensures", "role"]
EMPTY: frozenset[str] = frozenset()

# The kinds of service whose call is sent as messages built from every channel below
# (the role prompt, the slot's `ensures`, the prompt, the schema, the inputs). A person
# is one of them: the question is rendered from exactly what a model would be sent by
# the same call, and the policy and the content check judge it the same way
# (docs/people.md). A Python function or a nested pattern gets the inputs and prompt only.
MESSAGE_KINDS = frozenset({"model", "person"})
# The input `resume: AGENT` sends the agent's memory under (LANGUAGE.md 3.2).
MEMORY_INPUT = "memory"


class Carried(Protocol):
    """What a value carries (a run-time value, or a label the linter resolved)."""

    @property
    def provenance(self) -> frozenset[str]: ...
    @property
    def transitive(self) -> frozenset[str]: ...
    @property
    def literal(self) -> frozenset[str]: ...


@dataclass(frozen=True, slots=True)
class Channel:
    """One way text reaches the model: its provenance and the pattern's own text in it."""

    name: str
    kind: ChannelKind
    provenance: frozenset[str] = EMPTY
    transitive: frozenset[str] = EMPTY
    literal: tuple[str, ...] = ()
    chains: Chains = NO_CHAINS


def _carried(name: str, kind: ChannelKind, value: Carried, *extra: str) -> Channel:
    return Channel(name, kind, value.provenance, value.transitive | value.provenance,
                   (*extra, *sorted(value.literal)), getattr(value, "chains", NO_CHAINS))


def call_channels(
    inputs: Mapping[str, Carried],
    *,
    prompt: Carried | None = None,
    schema: Carried | None = None,
    ensures: str | None = None,
    role: str | None = None,
) -> list[Channel]:
    """The channels of one call. An input's name is literal text too: it is sent as a label."""
    channels = [_carried(name, "input", value, name) for name, value in inputs.items()]
    if prompt is not None:
        channels.append(_carried("prompt", "prompt", prompt))
    if schema is not None:
        channels.append(_carried("schema", "schema", schema))
    if ensures:
        channels.append(Channel("ensures", "ensures", literal=(ensures,)))
    if role:
        channels.append(Channel("role", "role", literal=(role,)))
    return channels


def channel_to_dict(channel: Channel) -> dict[str, Any]:
    """A channel as JSON data (a refused call in a trace)."""
    return {"name": channel.name, "kind": channel.kind, "provenance": sorted(channel.provenance),
            "transitive": sorted(channel.transitive), "literal": list(channel.literal),
            "chains": sorted([made, list(path), index, line]
                             for made, path, index, line in channel.chains)}


def channel_from_dict(data: Mapping[str, Any]) -> Channel:
    """The inverse of `channel_to_dict`."""
    kind = str(data.get("kind", "input"))
    return Channel(
        str(data.get("name", "")),
        kind if kind in ("input", "prompt", "schema", "ensures", "role") else "input",  # type: ignore[arg-type]
        frozenset(str(x) for x in data.get("provenance", ())),
        frozenset(str(x) for x in data.get("transitive", ())),
        tuple(str(x) for x in data.get("literal", ())),
        chains_from(data.get("chains", ())),
    )


def chains_from(items: Any) -> Chains:
    """Chains as a trace records them: `[slot, path, index, line]` (older traces: fewer)."""
    out = set()
    for item in items or ():
        if not isinstance(item, list | tuple) or not item:
            continue
        path = tuple(str(step) for step in item[1]) if len(item) > 1 else ()
        index = int(item[2]) if len(item) > 2 else -1
        line = int(item[3]) if len(item) > 3 else 0
        out.add((str(item[0]), path, index, line))
    return frozenset(out)
