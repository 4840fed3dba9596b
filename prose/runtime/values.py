"""Values with provenance (LANGUAGE.md 4.2 and 5).

A `Value` is JSON-like data plus what it is made of: `provenance` is the set
of slots whose outputs it copies, `transitive` adds everything those outputs
were computed from, and `literal` is the pattern's own text it contains (for
`is unaware of`). Containers hold `Value`s, so a member or index read gives
that element's own provenance while the container carries the union.

Values are immutable: `record`, `append` and member assignment build a new
container and rebind the variable (value semantics, so a parallel branch can
never see a list change under it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from prose.lang import flows
from prose.lang.flows import CONCRETE, NO_CHAINS, NO_LABEL, Chains, Label
from prose.lang.type_words import program_word, with_article
from prose.runtime.errors import MemberError, ProseRuntimeError, ValueTypeError
from prose.source import Span

EMPTY: frozenset[str] = frozenset()
NOWHERE = Span("", 0, 0, 0, 0)  # the concrete algebra does not use where a text was written
_NOWHERE = NOWHERE


@dataclass(frozen=True, slots=True)
class Service:
    """A bound slot as a value (what `for delegate in delegates` iterates over).

    `slot` is the declared slot name; `index` the position in a list-valued
    slot (None for a single service).
    """

    slot: str
    index: int | None = None
    # The entry's name in a map-valued slot (`handlers.billing`'s `billing`): its rules of
    # its own apply to a call of it (`prose.lang.policy`). Not part of equality: a service
    # is its slot and position.
    entry: str | None = field(default=None, compare=False)

    def label(self) -> str:
        return self.slot if self.index is None else f"{self.slot}[{self.index}]"


Data = None | bool | int | float | str | tuple["Value", ...] | dict[str, "Value"] | Service


class Value:
    """Data with provenance; see the module docstring."""

    __slots__ = ("chains", "data", "literal", "provenance", "transitive")

    data: Data
    provenance: frozenset[str]
    transitive: frozenset[str]
    literal: frozenset[str]
    chains: Chains

    def __init__(self, data: Data, label: Label) -> None:
        """`data` carrying `label`, and whatever its elements carry (a container's label is
        the union). There is no default: every value says what it carries, `NO_LABEL` for
        a constant (LANGUAGE.md 4.2, docs/language.md "Values")."""
        self.data = data
        provenance, transitive = label.provenance, label.transitive
        literal, chains = label.literal, label.chains
        if isinstance(data, tuple):
            parts: Iterable[Value] = data
        elif isinstance(data, dict):
            parts = data.values()
        else:
            parts = ()
        for part in parts:
            if part.provenance:
                provenance = provenance | part.provenance
            if part.transitive:
                transitive = transitive | part.transitive
            if part.literal:
                literal = literal | part.literal
            if part.chains:
                chains = chains | part.chains
        self.provenance = provenance
        self.transitive = transitive | provenance
        self.literal = literal
        self.chains = chains

    def __repr__(self) -> str:
        marks = f" from {sorted(self.provenance)}" if self.provenance else ""
        return f"Value({plain(self)!r}{marks})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Value) and equal(self, other)

    __hash__ = None  # type: ignore[assignment]

    @property
    def type_name(self) -> str:
        return type_name(self.data)

    @property
    def label(self) -> Label:
        """What the value carries (`prose.lang.flows.Label`)."""
        if not (self.provenance or self.transitive or self.literal or self.chains):
            return NO_LABEL
        return Label(self.provenance, self.transitive, self.literal, self.chains)


def labelled(data: Data, label: Label) -> Value:
    """A value of `data` carrying `label` (and whatever its elements carry)."""
    return Value(data, label)


def constant(data: bool | int | float | None) -> Value:
    """A value the program made from nothing it was given: a number, a boolean, null (a
    loop counter, a literal). Text is never a constant: see `text`."""
    return Value(data, NO_LABEL)


def text(data: str) -> Value:
    """A string literal of the pattern: its text is the pattern's own literal text."""
    return Value(data, Label(literal=frozenset((data,))) if data.strip() else NO_LABEL)


def service(slot: str, index: int | None = None, entry: str | None = None) -> Value:
    """A bound slot as a value. Rendered into a message it reads `<service NAME>`, so it
    carries that text as the pattern's literal text (LANGUAGE.md 4.4: a slot's name is
    never sent unlabelled; `is unaware of` sees it)."""
    target = Service(slot, index, entry)
    return Value(target, flows.service(CONCRETE, target.label(), _NOWHERE))


def services(slot: str, count: int) -> Value:
    """A list-valued slot: the list of its services."""
    return Value(tuple(service(slot, i) for i in range(count)), NO_LABEL)


def service_map(slot: str, names: Iterable[str]) -> Value:
    """A map-valued slot: an object of its entries' services (`call handlers[key]`)."""
    return Value({name: service(slot, i, name) for i, name in enumerate(names)}, NO_LABEL)


def collected(items: Iterable[Value], label: Label = NO_LABEL) -> Value:
    """A list the program gathered (a loop's or a race's values, a pipeline's result):
    each item keeps its own label, and the list carries `label` too."""
    return Value(tuple(items), label)


def relabel(value: Value, label: Label, *, deep: bool = False) -> Value:
    """`value` also carrying `label`; `deep`: every element too (a value bound under a
    strict-mode program counter, so that a member read cannot shed it)."""
    if not label:
        return value
    data = value.data
    if deep and isinstance(data, tuple):
        data = tuple(relabel(item, label, deep=True) for item in data)
    elif deep and isinstance(data, dict):
        data = {key: relabel(item, label, deep=True) for key, item in data.items()}
    return Value(data, value.label | label)


NULL = Value(None, NO_LABEL)


def type_name(data: Data) -> str:
    """`type_word` in the program's words (`prose.lang.type_words.program_word`)."""
    return program_word(data)


def wrap(
    data: Any,
    provenance: frozenset[str] = EMPTY,
    transitive: frozenset[str] = EMPTY,
    chains: Chains = NO_CHAINS,
) -> Value:
    """Plain Python data as a Value whose every element carries `provenance`.

    This is how a call's output enters the program: the whole value and each
    member of it carry the slot that produced it (and the branch it was made in).
    """
    if isinstance(data, Value):
        return data
    label = Label(provenance, transitive, EMPTY, chains)
    if isinstance(data, Mapping):
        entries = {str(key): wrap(item, provenance, transitive, chains) for key, item in data.items()}
        return Value(entries, label)
    if isinstance(data, list | tuple):
        items = tuple(wrap(item, provenance, transitive, chains) for item in data)
        return Value(items, label)
    if data is None or isinstance(data, bool | int | str | Service):
        return Value(data, label)
    if isinstance(data, float):
        number = int(data) if data.is_integer() and abs(data) < 2**53 else data
        return Value(number, label)
    return Value(str(data), label)


def plain(value: Value) -> Any:
    """The value as plain JSON-compatible data (a service as its label)."""
    data = value.data
    if isinstance(data, tuple):
        return [plain(item) for item in data]
    if isinstance(data, dict):
        return {key: plain(item) for key, item in data.items()}
    if isinstance(data, Service):
        return f"<service {data.label()}>"
    return data


def is_literal_text(value: Value) -> bool:
    """Whether the value is a string that is wholly the pattern's own literal text."""
    return (isinstance(value.data, str) and not value.provenance and not value.transitive
            and value.data in value.literal)


def pattern_made(value: Value) -> bool:
    """Whether the value is made of the pattern's own text alone: a literal string, a number
    or other constant (no label at all), or a list or object of such; no call output, no
    parameter's string."""
    if value.provenance or value.transitive:
        return False
    data = value.data
    if isinstance(data, str):
        return data in value.literal or not data.strip()
    if isinstance(data, tuple):
        return all(pattern_made(item) for item in data)
    if isinstance(data, dict):
        return all(key in value.literal and pattern_made(item) for key, item in data.items())
    return isinstance(data, int | float | bool) or data is None


def texts_of(data: Any) -> Iterator[str]:
    """Every string in `data` (a Value's data): strings, items, keys and values."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, tuple):
        for item in data:
            yield from texts_of(item.data)
    elif isinstance(data, dict):
        for key, item in data.items():
            yield key
            yield from texts_of(item.data)


def to_json(value: Value, *, indent: int | None = None) -> str:
    return json.dumps(plain(value), ensure_ascii=False, indent=indent)


def to_text(value: Value) -> str:
    """How a value reads in text (interpolation, prompts): a string as itself, else JSON."""
    if isinstance(value.data, str):
        return value.data
    return to_json(value)


def truthy(value: Value) -> bool:
    """LANGUAGE.md 4.2: null, false, 0, "", [] and {} are false; everything else is true."""
    data = value.data
    if data is None or data is False:
        return False
    if isinstance(data, bool):
        return True
    if isinstance(data, int | float):
        return data != 0
    if isinstance(data, str | tuple | dict):
        return len(data) > 0
    return True


def equal(left: Value, right: Value) -> bool:
    """Deep equality of the data (provenance does not take part)."""
    a, b = left.data, right.data
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[key], b[key]) for key in a)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=0, abs_tol=0) or a == b
    return type(a) is type(b) and a == b


def member(value: Value, name: str) -> Value:
    """`value.name`: a missing key of an object is null; `.length` of a list or string.

    Reading a key of null, a string, a number or a list is an error (4.2).
    """
    data = value.data
    if isinstance(data, dict):
        if name in data:
            return data[name]
        if name == "length":
            return Value(len(data), flows.length(CONCRETE, value.label))
        return NULL
    if name == "length" and isinstance(data, str | tuple):
        return Value(len(data), flows.length(CONCRETE, value.label))
    raise MemberError(f"cannot read `.{name}` of {describe(value)}",
                      label=flows.value_error(CONCRETE, [value.label]))


def index(value: Value, key: Value) -> Value:
    """`value[key]`: a list by integer position (negative from the end), an object by string.
    An error describes the index and the container, so it carries their labels."""
    data, at = value.data, key.data
    if isinstance(data, tuple):
        if not isinstance(at, int) or isinstance(at, bool):
            raise ValueTypeError(f"a list index must be an integer, not {describe(key)}",
                                 label=_about(value, key))
        if -len(data) <= at < len(data):
            return data[at]
        raise MemberError(f"index {at} is out of range for a list of {len(data)} items",
                          label=_about(value, key))
    if isinstance(data, dict):
        if not isinstance(at, str):
            raise ValueTypeError(f"an object key must be a string, not {describe(key)}",
                                 label=_about(value, key))
        return data.get(at, NULL)
    raise MemberError(f"cannot index {describe(value)}", label=_about(value, key))


def _about(container: Value, key: Value) -> Label:
    """What an index error's message describes: the index, and the container's length."""
    return flows.value_error(CONCRETE, [key.label, flows.length(CONCRETE, container.label)])


@contextmanager
def describing(*values: Value) -> Iterator[None]:
    """An error raised inside is about `values` (its message describes them: their type,
    their size, their text; that it was raised at all depends on them), so it carries
    their labels (`prose.lang.flows.value_error`), as a `catch as err` of it does."""
    try:
        yield
    except ProseRuntimeError as error:
        error.label = error.label | flows.value_error(CONCRETE, [value.label for value in values])
        raise


def describe(value: Value) -> str:
    """A short description for error messages: `null`, `a string`, `a list of 3 items`."""
    data = value.data
    if data is None:
        return "null"
    if isinstance(data, tuple):
        return f"a list of {len(data)} items"
    if isinstance(data, Service):
        return f"the service `{data.label()}`"
    return with_article(type_name(data))


def make_list(items: Iterable[Value], literal: frozenset[str] = EMPTY) -> Value:
    return Value(tuple(items), Label(literal=literal))


def make_object(entries: Mapping[str, Value], literal: frozenset[str] = EMPTY) -> Value:
    return Value(dict(entries), Label(literal=literal))


def appended(target: Value, item: Value) -> Value:
    """A new list: `target` with `item` at the end (keeps `target`'s literal text)."""
    if not isinstance(target.data, tuple):
        raise ValueTypeError(f"can only record into a list, not {describe(target)}",
                             label=flows.value_error(CONCRETE, [target.label]))
    return Value((*target.data, item), Label(literal=target.literal))


def with_member(target: Value, name: str, item: Value, key: Label | None = None) -> Value:
    """A new object: `target` with `name` set to `item`. The key is data (it reaches a
    model as a field name): the object carries the key's label, or, for a key written in
    the pattern (`x.name = v`), the key as literal text (`prose.lang.flows.stored_key`)."""
    if not isinstance(target.data, dict):
        raise MemberError(f"cannot set `.{name}` of {describe(target)}",
                          label=flows.value_error(CONCRETE, [target.label]))
    entries = dict(target.data)
    entries[name] = item
    own = Label(literal=target.literal)
    return Value(entries, flows.stored_key(CONCRETE, own, CONCRETE.text(name, _NOWHERE)
                                           if key is None else key))


def with_index(target: Value, key: Value, item: Value) -> Value:
    """A new list or object: `target[key]` set to `item`."""
    data, at = target.data, key.data
    if isinstance(data, dict) and isinstance(at, str):
        return with_member(target, at, item, key.label)
    if isinstance(data, tuple):
        if not isinstance(at, int) or isinstance(at, bool):
            raise ValueTypeError(f"a list index must be an integer, not {describe(key)}",
                                 label=_about(target, key))
        if not -len(data) <= at < len(data):
            raise MemberError(f"index {at} is out of range for a list of {len(data)} items",
                              label=_about(target, key))
        items = list(data)
        items[at] = item  # which item changed tells the index: the list carries it too
        return Value(tuple(items), flows.stored_key(CONCRETE, Label(literal=target.literal),
                                                    key.label))
    raise MemberError(f"cannot set an index of {describe(target)}",
                      label=_about(target, key))


def error_object(
    message: str,
    kind: str,
    slot: str | None,
    *,
    line: int | None = None,
    label: Label = NO_LABEL,
) -> Value:
    """What `catch as err` binds: `{message, kind, slot, line}`.

    Every field carries the error's label (`prose.lang.flows.error_object`): a
    failed call's message may quote what the model returned, and a thrown
    object's `kind` or `slot` may be any text.
    """
    return Value(
        {
            "message": labelled(message, label),
            "kind": labelled(kind, label),
            "slot": labelled(slot, label),
            "line": labelled(line, label),
        },
        NO_LABEL,
    )


def unordered(value: Value, where: Span) -> Value:
    """`value` with every output of a list-valued slot in it no longer telling which
    service made it (`prose.lang.flows.shuffled`), its members too."""
    data = value.data
    if isinstance(data, tuple):
        data = tuple(unordered(item, where) for item in data)
    elif isinstance(data, dict):
        data = {key: unordered(item, where) for key, item in data.items()}
    return Value(data, CONCRETE.unordered(value.label, where))


def shuffled(items: Value, order: list[int], where: Span) -> Value:
    """`shuffle(items)` for the permutation `order` (item `i` of the result was item
    `order[i]`): `{ items, key }`, the key sealed (`prose.lang.flows.SEALED`)."""
    assert isinstance(items.data, tuple)
    _, key = flows.shuffled(CONCRETE, NO_LABEL, where)
    permuted = tuple(unordered(items.data[position], where) for position in order)
    sealed = Value(tuple(Value(position, key) for position in order), key)
    return Value({"items": Value(permuted, CONCRETE.unordered(NO_LABEL, where)),
                  "key": sealed}, NO_LABEL)
