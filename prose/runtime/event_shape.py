"""The shape of a trace event: which fields each event type has and what JSON type each holds.

One definition, used by `integrity.parse_line`, so every reader of a trace (`prose
audit`, `report`, `stats`, `export`, OpenTelemetry, `--resume`, a batch taking a row
from its trace) sees a line whose fields have the wrong type (`"line": "abc"`, a
text `usage`, a time past the year 9999) as what it is: not an event prose wrote,
so a damaged line, named with its number, never a crash deep in a reader.

Only the fields prose writes are checked; an unknown field is left alone (a newer
prose may add one). A field may be absent (an older prose wrote fewer) unless
`REQUIRED` names it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

# 9999-12-31: `datetime.fromtimestamp` and every report's clock can show it.
MAX_TIME = 253_402_300_799.0

Check = Callable[[Any], bool]


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return (_integer(value) or isinstance(value, float)) and math.isfinite(value)


def _time(value: Any) -> bool:
    return _number(value) and 0 <= value <= MAX_TIME


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _flag(value: Any) -> bool:
    return isinstance(value, bool)


def _mapping(value: Any) -> bool:
    return isinstance(value, dict)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _usage(value: Any) -> bool:
    return isinstance(value, dict) and all(
        _integer(value.get(name, 0)) and value.get(name, 0) >= 0
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"))


def _messages(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(item, dict) and _text(item.get("role", "")) and _text(item.get("content", ""))
        for item in value)


def _totals(value: Any) -> bool:
    """Counts and amounts are numbers; `stopped_by` is text or null."""
    return isinstance(value, dict) and all(
        item is None or _text(item) if name == "stopped_by" else item is None or _number(item)
        for name, item in value.items())


def _chains(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(item, list) and len(item) == 4 and _text(item[0]) and _texts(item[1])
        and _integer(item[2]) and _integer(item[3]) for item in value)


def _optional(check: Check) -> Check:
    return lambda value: value is None or check(value)


_WORDS = {  # what a reader is told the field should have been
    _integer: "an integer", _number: "a finite number", _time: "a time (seconds since 1970)",
    _text: "text", _flag: "true or false", _mapping: "an object", _texts: "a list of texts",
    _usage: "token counts (non-negative integers)", _messages: "a list of messages",
    _totals: "numbers by name", _chains: "a list of chains",
}

_COMMON: dict[str, Check] = {"type": _text, "time": _time, "run_id": _text,
                             "prev": _optional(_text)}
_CALL_LIKE: dict[str, Check] = {
    "id": _text, "file": _optional(_text), "line": _optional(_integer),
    "path": _optional(_text), "model": _optional(_text), "messages": _messages,
    "error": _optional(_mapping), "usage": _usage, "cost_usd": _number,
    "latency_ms": _number, "cache_hit": _flag, "key": _optional(_text),
    "requests": _integer, "finish_reason": _optional(_text),
}
SHAPES: dict[str, dict[str, Check]] = {
    "run_start": {"pattern": _text, "pattern_sha256": _optional(_text), "inputs": _mapping,
                  "config": _mapping, "bindings": _mapping, "models": _mapping,
                  "policy": _optional(_mapping), "resumed_from": _optional(_text)},
    "call": {**_CALL_LIKE, "slot": _text, "index": _optional(_integer), "service": _text,
             "column": _optional(_integer), "attempt": _integer,
             "provenance": _texts, "transitive": _texts, "branch": _optional(_texts),
             "chains": _optional(_chains), "entry": _optional(_text), "sha256": _optional(_text), "reply": _optional(_text),
             "answered": _optional(_mapping)},
    "judge": {**_CALL_LIKE, "kind": _text, "text": _text, "values": _mapping,
              "options": _optional(_texts), "reason": _optional(_text)},
    "note": {"what": _text, "message": _text, "file": _optional(_text),
             "line": _optional(_integer), "detail": _mapping},
    "error": {"code": _text, "kind": _text, "message": _text, "file": _optional(_text),
              "line": _optional(_integer), "column": _optional(_integer),
              "slot": _optional(_text), "rules": _optional(_texts),
              "refused": _optional(_mapping)},
    "run_end": {"status": _text, "exit_code": _integer, "error": _optional(_mapping),
                "totals": _totals},
}


def shape_problem(event: Mapping[str, Any]) -> str | None:
    """Why `event` (a parsed trace line of a known type) is not shaped as prose writes it,
    naming the first field of the wrong type; None when it is, or its type is unknown."""
    for name, check in (*_COMMON.items(), *SHAPES.get(str(event.get("type")), {}).items()):
        if name in event and not check(event[name]):
            return f"its `{name}` is {_shown(event[name])}, not {_expected(check)}"
    return None


def _expected(check: Check) -> str:
    for known, words in _WORDS.items():
        if check is known:
            return words
    inner = getattr(check, "__closure__", None)
    if inner:
        return f"{_expected(inner[0].cell_contents)} or null"
    return "what prose writes"


def _shown(value: Any) -> str:
    """A short description of a value for a message (never the whole of a large one)."""
    if isinstance(value, str):
        return f'"{value[:40]}..."' if len(value) > 40 else f'"{value}"'
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "null"
    if isinstance(value, int | float):
        text = repr(value)
        return text if len(text) <= 40 else f"a number of {len(text)} characters"
    return f"a{'n' if isinstance(value, dict) else ''} {'object' if isinstance(value, dict) else 'list'}"
