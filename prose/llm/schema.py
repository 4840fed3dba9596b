"""Structured output: JSON schemas, the `response_format` sent, and checking replies.

jsonschema is only a dev dependency, so replies are checked by the small
validator below. It covers what patterns ask for: `type` (one or a list),
`enum`, `const`, `properties`, `required`, `additionalProperties`, `items`,
`minItems`/`maxItems`, `minLength`/`maxLength`, `pattern`,
`minimum`/`maximum` (and the exclusive forms), `anyOf`/`oneOf`/`allOf`, and
local `$ref`s (`#/$defs/...`). Other keywords (`format`, ...) are ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from prose.bounded import JSONBoundError, loads_bounded
from prose.errors import ProseError
from prose.lang.schema_types import known_words, schema_for
from prose.lang.type_words import type_word
from prose.llm.errors import SchemaDefinitionError

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(?P<body>.*?)\n?```\s*$", re.S)
_NUMERIC = ("integer", "number")
_BOUNDS = (
    ("minimum", "at least"),
    ("maximum", "at most"),
    ("exclusiveMinimum", "more than"),
    ("exclusiveMaximum", "less than"),
)
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


def schema_from_fields(fields: Mapping[str, str]) -> dict[str, Any]:
    """A strict object schema from a field-to-type-name mapping.

    `{accept: "boolean", notes: "string"}` (a call's `schema:`) becomes an
    object with those typed properties, all required, no others. Type names:
    string, boolean, number, integer, object, array (and str, bool, float,
    int, dict, list, text); `T[]` is an array of T.
    """
    properties: dict[str, Any] = {}
    for name, type_name in fields.items():
        properties[name] = _field_schema(name, type_name)
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _field_schema(name: str, type_name: str) -> dict[str, Any]:
    schema = schema_for(type_name)  # the one definition the linter uses too
    if schema is None:
        raise SchemaDefinitionError(
            f"field `{name}` has unknown type `{type_name}` (use {known_words()})")
    return schema


def is_strict_compatible(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts the schema: every object lists its
    properties, requires all of them and forbids others."""
    if isinstance(schema, list):
        return all(is_strict_compatible(item) for item in schema)
    if not isinstance(schema, Mapping):
        return True
    if not schema:
        return False  # `any`: strict mode wants a type for every value
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return False
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", ())) != set(properties):
            return False
    return all(
        is_strict_compatible(value)
        for key, value in schema.items()
        if key not in ("enum", "const", "required") and isinstance(value, Mapping | list)
    )


def response_format(schema: Mapping[str, Any], *, name: str, strict: bool | None) -> dict[str, Any]:
    """The OpenAI-style `response_format` LiteLLM translates for each provider."""
    clean_name = _NAME_CHARS.sub("_", name).strip("_")[:64] or "output"
    return {
        "type": "json_schema",
        "json_schema": {
            "name": clean_name,
            "schema": dict(schema),
            "strict": is_strict_compatible(schema) if strict is None else strict,
        },
    }


def parse_json_reply(text: str) -> tuple[Any, str | None]:
    """The JSON value in a reply, or a problem. A surrounding ``` fence is allowed."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    try:
        return loads_bounded(body), None
    except json.JSONDecodeError as error:
        return None, (
            f"the reply is not valid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        )
    except JSONBoundError as error:  # a hostile or runaway reply: refused, never a crash
        return None, f"the reply's JSON is past a bound: {error}"


def check_reply(text: str, schema: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """Parse a reply as JSON and validate it; the value and the problems found."""
    value, problem = parse_json_reply(text)
    if problem is not None:
        return None, [problem]
    return value, validate(value, schema)


def accepts_empty(schema: Mapping[str, Any] | None) -> bool:
    """Whether a reply with no text is a valid answer under `schema`: the schema
    accepts the empty string (`{"type": "string"}` without `minLength`, `{}`).

    Without a schema the answer is text, and empty text is no answer.
    """
    return schema is not None and not validate("", schema)


def validate(instance: Any, schema: Mapping[str, Any] | bool) -> list[str]:
    """The ways `instance` fails `schema`, each as `path: problem`; empty when valid."""
    problems: list[str] = []
    _check(instance, schema, "$", schema, problems)
    return problems


def json_type(value: Any) -> str:
    """The JSON type name of a Python value (`type_word`, with JSON's `array`)."""
    word = type_word(value)
    return "array" if word == "list" else word


def _has_type(value: Any, name: str) -> bool:
    actual = json_type(value)
    if name == "number":
        return actual in _NUMERIC
    if name == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == name


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: `true` is not `1`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if json_type(a) in _NUMERIC and json_type(b) in _NUMERIC:
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#"):
        raise _UnsupportedRef(ref)
    node = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        key = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or key not in node:
            raise _UnsupportedRef(ref)
        node = node[key]
    return node


class _UnsupportedRef(ProseError):
    pass


def _check(value: Any, schema: Any, path: str, root: Any, out: list[str]) -> None:
    if schema is True or schema is None:
        return
    if schema is False:
        out.append(f"{path}: no value is allowed here")
        return
    if not isinstance(schema, Mapping):
        return
    if "$ref" in schema:
        try:
            target = _resolve(str(schema["$ref"]), root)
        except _UnsupportedRef:
            out.append(f"{path}: cannot resolve schema reference `{schema['$ref']}`")
            return
        _check(value, target, path, root, out)
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_has_type(value, name) for name in names):
            out.append(f"{path}: expected {' or '.join(names)}, got {json_type(value)}")
            return
    if "enum" in schema and not any(_json_equal(value, option) for option in schema["enum"]):
        options = ", ".join(json.dumps(option) for option in schema["enum"])
        out.append(f"{path}: {json.dumps(value)} is not one of {options}")
    if "const" in schema and not _json_equal(value, schema["const"]):
        out.append(f"{path}: must be {json.dumps(schema['const'])}")
    if isinstance(value, Mapping):
        _check_object(value, schema, path, root, out)
    elif isinstance(value, list | tuple):
        _check_array(value, schema, path, root, out)
    elif isinstance(value, str):
        _check_string(value, schema, path, out)
    elif json_type(value) in ("integer", "number"):
        _check_number(value, schema, path, out)
    _check_combinators(value, schema, path, root, out)


def _check_object(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: str, root: Any, out: list[str]
) -> None:
    properties = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            out.append(f"{path}: missing required property `{name}`")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            _check(item, properties[name], f"{path}.{name}", root, out)
        elif extra is False:
            out.append(f"{path}: unexpected property `{name}`")
        elif isinstance(extra, Mapping):
            _check(item, extra, f"{path}.{name}", root, out)


def _check_array(
    value: list[Any] | tuple[Any, ...],
    schema: Mapping[str, Any],
    path: str,
    root: Any,
    out: list[str],
) -> None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        out.append(f"{path}: expected at least {schema['minItems']} items, got {len(value)}")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        out.append(f"{path}: expected at most {schema['maxItems']} items, got {len(value)}")
    items = schema.get("items")
    if isinstance(items, Mapping | bool):
        for index, item in enumerate(value):
            _check(item, items, f"{path}[{index}]", root, out)


def _check_string(value: str, schema: Mapping[str, Any], path: str, out: list[str]) -> None:
    if "minLength" in schema and len(value) < schema["minLength"]:
        out.append(f"{path}: expected at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        out.append(f"{path}: expected at most {schema['maxLength']} characters")
    if "pattern" in schema and not re.search(str(schema["pattern"]), value):
        out.append(f"{path}: does not match pattern `{schema['pattern']}`")


def _check_number(value: float, schema: Mapping[str, Any], path: str, out: list[str]) -> None:
    for keyword, words in _BOUNDS:
        limit = schema.get(keyword)
        if not isinstance(limit, int | float) or isinstance(limit, bool):
            continue
        holds = {
            "minimum": value >= limit,
            "maximum": value <= limit,
            "exclusiveMinimum": value > limit,
            "exclusiveMaximum": value < limit,
        }[keyword]
        if not holds:
            out.append(f"{path}: expected {words} {limit}, got {value}")


def _check_combinators(
    value: Any, schema: Mapping[str, Any], path: str, root: Any, out: list[str]
) -> None:
    for sub in schema.get("allOf", ()):
        _check(value, sub, path, root, out)
    if "anyOf" in schema:
        if not any(not _problems_in(value, sub, root) for sub in schema["anyOf"]):
            out.append(f"{path}: does not match any of the allowed shapes")
    if "oneOf" in schema:
        matches = sum(1 for sub in schema["oneOf"] if not _problems_in(value, sub, root))
        if matches != 1:
            out.append(f"{path}: must match exactly one of the allowed shapes, matches {matches}")


def _problems_in(value: Any, schema: Any, root: Any) -> list[str]:
    """The problems against a sub-schema whose `$ref`s resolve in `root`."""
    problems: list[str] = []
    _check(value, schema, "$", root, problems)
    return problems


# How the re-ask begins: the scripted model tells a re-ask from a retry by it.
REASK_OPENING = "Your reply did not match the required JSON schema:"


def reask_prompt(problems: list[str], schema: Mapping[str, Any]) -> str:
    """The message that asks once more after a reply failed the schema."""
    listed = "\n".join(f"- {problem}" for problem in problems[:20])
    return (
        f"{REASK_OPENING}\n"
        f"{listed}\n"
        "Reply again with only a JSON value matching this schema:\n"
        f"{json.dumps(schema, ensure_ascii=False)}"
    )
