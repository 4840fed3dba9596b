"""A JSON schema bounded so that a constrained reply closes within its token cap.

llama.cpp's grammar makes every token of a structured reply valid JSON for the
schema, but it cannot make the reply *end*: a free string (no `maxLength`,
`enum`, `const`, `pattern` or `format`) or an unbounded array may run until the
token cap cuts the JSON open. So the grammar gets a copy of the schema in which

- every free string has a `maxLength`: the token budget left after the keys
  and numbers, shared between the free strings, counting one token per
  character (a small model's degenerate text, digits and punctuation, is
  about that; `local_xllamacpp` also asks for compact JSON, so whitespace
  takes no tokens);
- every array without `maxItems` has one (`DEFAULT_MAX_ITEMS`, or `minItems`);
- every object with `properties` allows no other keys (`additionalProperties:
  false`): an extra key would bring a free string of its own (measured: SmolLM2
  added a "description" after the schema's keys and ran into the cap).

The reply is still validated against the caller's schema, which is untouched;
anything the bounded schema accepts, the original accepts too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KEY_TOKENS = 4  # a key's quotes, colon and comma, beside the key itself
NUMBER_TOKENS = 24  # llama.cpp bounds a number's digits; at most one token each
RESERVED_TOKENS = 4  # the braces and the end of the reply
MIN_STRING_CHARS = 24
DEFAULT_MAX_ITEMS = 3
_STRING_BOUNDS = ("maxLength", "enum", "const", "pattern", "format")


def bounded_schema(schema: Mapping[str, Any], max_tokens: int) -> dict[str, Any]:
    """The copy of `schema` the grammar is made from (see the module's docstring)."""
    capped = _close_shapes(schema)
    free, fixed = _weights(capped, 1)
    budget = max_tokens - fixed - RESERVED_TOKENS
    limit = max(MIN_STRING_CHARS, budget // max(free, 1))
    bounded: dict[str, Any] = _bound_strings(capped, limit)
    return bounded


def is_free_string(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    is_string = kind == "string" or (isinstance(kind, list) and "string" in kind)
    return is_string and not any(key in node for key in _STRING_BOUNDS)


def _is_array(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _close_shapes(node: Any) -> Any:
    if isinstance(node, Mapping):
        copy = {key: _close_shapes(value) for key, value in node.items()}
        if _is_array(node) and "maxItems" not in node:
            copy["maxItems"] = max(DEFAULT_MAX_ITEMS, int(node.get("minItems") or 0))
        if isinstance(node.get("properties"), Mapping):
            copy["additionalProperties"] = False
        return copy
    if isinstance(node, list):
        return [_close_shapes(value) for value in node]
    return node


def _weights(node: Any, times: int) -> tuple[int, int]:
    """(free strings, tokens of everything else) in `node`; array items count `maxItems` times."""
    if isinstance(node, list):
        pairs = [_weights(value, times) for value in node]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    if not isinstance(node, Mapping):
        return 0, 0
    free = times if is_free_string(node) else 0
    fixed = times * NUMBER_TOKENS if node.get("type") in ("number", "integer") else 0
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        fixed += times * sum(len(str(key)) + KEY_TOKENS for key in properties)
    for key, value in node.items():
        inner = times * int(node.get("maxItems") or 1) if key == "items" else times
        more_free, more_fixed = _weights(value, inner)
        free, fixed = free + more_free, fixed + more_fixed
    return free, fixed


def _bound_strings(node: Any, limit: int) -> Any:
    if isinstance(node, Mapping):
        copy = {key: _bound_strings(value, limit) for key, value in node.items()}
        if is_free_string(node):
            copy["maxLength"] = limit
        return copy
    if isinstance(node, list):
        return [_bound_strings(value, limit) for value in node]
    return node
