"""The type language: one grammar for output schemas, `schema:` and config types.

A type is written wherever a pattern or an instance declares the shape of a value:
a slot's ``ensures: verdict object with `ok` (boolean)``, an instance's `schema:`, a
call's `schema:` property, and a `### Config` key's type. The grammar:

    type    := option (("|" | "or") option)*
    option  := atom ("[]" | "?")*
    atom    := WORD | "text" | NUMBER | "{" field ("," field)* "}" | "(" type ")"
    field   := NAME "?"? ":" type

- a WORD is a base type (`string`, `number`, `integer`, `boolean`, `object`,
  `array`, `null`, `any`, and the aliases `str`, `text`, `int`, `float`, `bool`,
  `dict`, `list`);
- a quoted string or a number is a literal: a union of literals is an enum
  (`"PASS" | "FAIL"`);
- `{ kind: "code" | "docs", instruction: string }` is an object with exactly these
  fields, all of them written by the model;
- `T[]` is a list of T; `T?` is an optional T, the same as `T | null` (the key is
  still written, as `null`, so providers' strict mode accepts the schema); in an
  object, `name?: T` is the same as `name: T?`.

`parse_type` reads the text into a `Type` tree, `json_schema` gives the JSON Schema
the run sends and validates against, `accepts` checks a config value, and
`field_type` / `enum_values` are what the linter asks when it checks a read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from prose.spelling import did_you_mean

# The base words and the JSON type each one means.
BASE_WORDS: dict[str, str] = {
    "string": "string",
    "str": "string",
    "text": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "number": "number",
    "float": "number",
    "integer": "integer",
    "int": "integer",
    "object": "object",
    "dict": "object",
    "array": "array",
    "list": "array",
    "null": "null",
    "any": "any",
}
# How a base type is written back (config keys have always said `list`).
_SHOWN = {"array": "list"}
Scalar = str | int | float | bool


class TypeTextError(ValueError):
    """A type text that does not parse; `offset` is where in the text."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True, slots=True)
class Base:
    """A base type: `string`, `number`, `integer`, `boolean`, `object`, `array`, `null`, `any`."""

    name: str


@dataclass(frozen=True, slots=True)
class Enum:
    """A union of literals: `"PASS" | "FAIL"`."""

    values: tuple[Scalar, ...]


@dataclass(frozen=True, slots=True)
class ListOf:
    """`T[]`."""

    item: Type


@dataclass(frozen=True, slots=True)
class Field:
    """A named field of an object type."""

    name: str
    type: Type


@dataclass(frozen=True, slots=True)
class Record:
    """`{ a: T, b: U }`: an object with exactly these fields."""

    fields: tuple[Field, ...]

    def get(self, name: str) -> Type | None:
        return next((field.type for field in self.fields if field.name == name), None)


@dataclass(frozen=True, slots=True)
class Union:
    """`A | B` (none of them literals only, which is an `Enum`)."""

    options: tuple[Type, ...]


Type = Base | Enum | ListOf | Record | Union
ANY = Base("any")
NULL = Base("null")

_TOKEN = re.compile(
    r"""\s*(?:(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    |(?P<number>-?\d+(?:\.\d+)?)
    |(?P<word>[A-Za-z_][\w-]*)
    |(?P<list>\[\s*\])
    |(?P<punct>[{}()|,:?]))""",
    re.X,
)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    at = 0
    while at < len(text):
        if not text[at:].strip():
            break
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            column = at + len(text[at:]) - len(text[at:].lstrip())
            raise TypeTextError(f"unexpected `{text[column]}` in a type", column)
        kind = match.lastgroup or "punct"
        value = match.group(kind)
        out.append((kind, value, match.start(kind)))
        at = match.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, value: str) -> bool:
        token = self.peek()
        if token is not None and token[1] == value and token[0] != "string":
            self.at += 1
            return True
        return False

    def fail(self, expected: str) -> TypeTextError:
        token = self.peek()
        if token is None:
            return TypeTextError(f"the type ends where {expected} was expected", len(self.text))
        return TypeTextError(f"unexpected `{token[1]}` where {expected} was expected", token[2])

    def union(self) -> Type:
        options = [self.option()]
        while self.take("|") or self.take("or"):
            options.append(self.option())
        return join(options)

    def option(self) -> Type:
        found = self.atom()
        while True:
            token = self.peek()
            if token is not None and token[0] == "list":
                self.at += 1
                found = ListOf(found)
            elif self.take("?"):
                found = join([found, NULL])
            else:
                return found

    def atom(self) -> Type:
        token = self.peek()
        if token is None:
            raise self.fail("a type")
        kind, value, offset = token
        self.at += 1
        if kind == "string":
            return Enum((_unquote(value),))
        if kind == "number":
            return Enum((float(value) if "." in value else int(value),))
        if kind == "word":
            base = BASE_WORDS.get(value.lower())
            if base is None:
                hint = did_you_mean(value.lower(), BASE_WORDS)
                raise TypeTextError(f"unknown type `{value}`{hint}", offset)
            return Base(base)
        if value == "(":
            inner = self.union()
            if not self.take(")"):
                raise self.fail("`)`")
            return inner
        if value == "{":
            return self.record()
        self.at -= 1
        raise self.fail("a type")

    def record(self) -> Record:
        fields: list[Field] = []
        while not self.take("}"):
            token = self.peek()
            if token is None or token[0] not in ("word", "string"):
                raise self.fail("a field name")
            self.at += 1
            name = _unquote(token[1]) if token[0] == "string" else token[1]
            if any(field.name == name for field in fields):
                raise TypeTextError(f"field `{name}` is declared twice", token[2])
            optional = self.take("?")
            if not self.take(":"):
                raise self.fail(f"`:` and the type of `{name}`")
            field_type = self.union()
            fields.append(Field(name, join([field_type, NULL]) if optional else field_type))
            if not self.take(","):
                if not self.take("}"):
                    raise self.fail("`,` or `}`")
                break
        return Record(tuple(fields))


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def join(options: Iterable[Type]) -> Type:
    """The union of `options`, flattened; literals gather into one `Enum`, `any` absorbs."""
    flat: list[Type] = []
    for option in options:
        flat.extend(option.options if isinstance(option, Union) else (option,))
    if ANY in flat:
        return ANY
    literals = tuple(dict.fromkeys(v for o in flat if isinstance(o, Enum) for v in o.values))
    rest = list(dict.fromkeys(o for o in flat if not isinstance(o, Enum)))
    joined: list[Type] = ([Enum(literals)] if literals else []) + rest
    return joined[0] if len(joined) == 1 else Union(tuple(joined))


@lru_cache(maxsize=1024)
def parse_type(text: str) -> Type:
    """The type `text` means; raises `TypeTextError` (with the offset) when it does not parse.

    Cached (types are frozen): the linter's rules and the run read the same few texts."""
    parser = _Parser(text)
    found = parser.union()
    if parser.peek() is not None:
        raise parser.fail("the end of the type")
    return found


def try_parse(text: str) -> Type | None:
    try:
        return parse_type(text)
    except TypeTextError:
        return None


def problem(text: str) -> str | None:
    """Why `text` is no type (`unknown type `strng`; did you mean `string`?`), or None."""
    try:
        parse_type(text)
    except TypeTextError as error:
        return error.message
    return None


def json_schema(found: Type) -> dict[str, Any]:
    """The JSON Schema of a type: what the run sends to providers and checks replies with."""
    if isinstance(found, Base):
        return {} if found.name == "any" else {"type": found.name}
    if isinstance(found, Enum):
        kinds = {_scalar_kind(value) for value in found.values}
        schema: dict[str, Any] = {"enum": list(found.values)}
        return {"type": kinds.pop(), **schema} if len(kinds) == 1 else schema
    if isinstance(found, ListOf):
        return {"type": "array", "items": json_schema(found.item)}
    if isinstance(found, Record):
        return {
            "type": "object",
            "properties": {field.name: json_schema(field.type) for field in found.fields},
            "required": [field.name for field in found.fields],
            "additionalProperties": False,
        }
    return {"anyOf": [json_schema(option) for option in found.options]}


def _scalar_kind(value: Scalar) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return "number" if isinstance(value, float) else "string"


def show(found: Type) -> str:
    """The type written back in the language's own words (`string[]`, `"a" | "b"`)."""
    if isinstance(found, Base):
        return _SHOWN.get(found.name, found.name)
    if isinstance(found, Enum):
        return " | ".join(_literal(value) for value in found.values)
    if isinstance(found, ListOf):
        inner = show(found.item)
        return f"({inner})[]" if isinstance(found.item, Enum | Union) else f"{inner}[]"
    if isinstance(found, Record):
        return "{ " + ", ".join(f"{f.name}: {show(f.type)}" for f in found.fields) + " }"
    return " | ".join(
        f"({show(o)})" if isinstance(o, Enum) and len(o.values) > 1 else show(o)
        for o in found.options
    )


def _literal(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def accepts(found: Type, value: Any, *, null_anywhere: bool = False) -> bool:
    """Whether a JSON-like `value` is of the type; `null_anywhere` lets null stand for any
    value (a config key without a value)."""
    if value is None and (null_anywhere or _admits_null(found)):
        return True
    if isinstance(found, Base):
        return _base_accepts(found.name, value)
    if isinstance(found, Enum):
        return any(_same(value, option) for option in found.values)
    if isinstance(found, ListOf):
        return isinstance(value, list) and all(
            accepts(found.item, item, null_anywhere=null_anywhere) for item in value)
    if isinstance(found, Record):
        return isinstance(value, dict) and set(value) <= {f.name for f in found.fields} and all(
            accepts(f.type, value.get(f.name), null_anywhere=null_anywhere) for f in found.fields)
    return any(accepts(option, value, null_anywhere=null_anywhere) for option in found.options)


def _admits_null(found: Type) -> bool:
    if isinstance(found, Base):
        return found.name in ("null", "any")
    return isinstance(found, Union) and any(_admits_null(option) for option in found.options)


def _base_accepts(name: str, value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return {
        "any": True,
        "null": value is None,
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": number and float(value).is_integer(),
        "number": number,
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
    }.get(name, False)


def _same(value: Any, option: Scalar) -> bool:
    if isinstance(value, bool) or isinstance(option, bool):
        return isinstance(value, bool) and isinstance(option, bool) and value == option
    return type(value) in (int, float, str) and value == option


def without_null(found: Type) -> Type:
    """The type a present value has: `T?` read where it is not null is a T."""
    if isinstance(found, Union):
        return join(option for option in found.options if option != NULL)
    return found


def field_type(found: Type, name: str) -> Type | None:
    """The type of field `name` of a value of type `found`: `ANY` when the type does not
    say which fields it has, None when it says and `name` is none of them."""
    found = without_null(found)
    if isinstance(found, Record):
        return found.get(name)
    if isinstance(found, Union):
        records = [option for option in found.options if isinstance(option, Record)]
        if len(records) == len(found.options):
            types = [record.get(name) for record in records]
            return None if all(t is None for t in types) else ANY
    return ANY


def field_names(found: Type) -> tuple[str, ...]:
    found = without_null(found)
    return tuple(f.name for f in found.fields) if isinstance(found, Record) else ()


def item_type(found: Type) -> Type:
    """The type of an item of a list of type `found` (`ANY` when it does not say)."""
    found = without_null(found)
    return found.item if isinstance(found, ListOf) else ANY


def enum_values(found: Type) -> tuple[Scalar, ...] | None:
    """The literals a value of the type can be (null aside), or None when it is not an enum."""
    found = without_null(found)
    return found.values if isinstance(found, Enum) else None


def record(fields: dict[str, Type]) -> Record:
    return Record(tuple(Field(name, field) for name, field in fields.items()))
