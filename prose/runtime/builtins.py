"""Operators, slices and the pure built-ins over values (`prose.lang.builtins` lists them).

Every function here is pure and deterministic: it reads its operands, charges
the step budget one step per item it reads (`Step`), refuses to build a value
past the memory bounds of `prose.lang.builtins` before building it, and gives
a value labelled by the one flow rule (`prose.lang.builtins.result`): the
result and every part of it carry everything the operands carried.

`matches` runs RE2 (linear time in the text, whatever the pattern), so a
pattern written to backtrack catastrophically in Python's `re` ends at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from prose.lang import builtins as spec
from prose.lang.builtins import MAX_INT_BITS, MAX_LIST_ITEMS, MAX_PATTERN_CHARS, MAX_TEXT_CHARS
from prose.lang.flows import CONCRETE
from prose.lang.manifest import value_digest
from prose.runtime import values as v
from prose.runtime.errors import ProseRuntimeError, ValueTypeError
from prose.runtime.values import Value

Step = Callable[[int], None]


class ArithmeticFault(ProseRuntimeError):
    """A division by zero, or a number past `MAX_INT_BITS`."""

    code = "R040"
    kind = "arithmetic"


class ValueTooLarge(ProseRuntimeError):
    """A string, list or integer a built-in or operator would build past its bound."""

    code = "R041"
    kind = "bound"


class BadPattern(ProseRuntimeError):
    """A `matches` pattern RE2 cannot compile (or one too long)."""

    code = "R042"
    kind = "pattern"


def labelled(data: Any, operands: Sequence[Value]) -> Value:
    """`data` (plain, or holding Values) carrying what every operand carried, deeply. Made
    from the pattern's own text alone (`"advers" + "ary"`, `join(["cri", "tic"], "")`), every
    string in it is the pattern's literal text too, as a string interpolated from literal
    strings is (docs/language.md 5.2, a role name split across literal pieces)."""
    label = spec.result(CONCRETE, [operand.label for operand in operands])
    value = data if isinstance(data, Value) else v.wrap(data)
    if operands and all(v.pattern_made(operand) for operand in operands):
        texts = [CONCRETE.text(text, v.NOWHERE) for text in v.texts_of(value.data)]
        label = CONCRETE.join([label, *texts])
    return v.relabel(value, label, deep=True)


def _number(value: Value) -> bool:
    return isinstance(value.data, int | float) and not isinstance(value.data, bool)


def _check(op: str, left: Value, right: Value) -> None:
    problem = spec.operation_problem(op, left.type_name, right.type_name)
    if problem is not None:
        raise ValueTypeError(problem)


def _size(data: Any, step: Step) -> Any:
    """`data` if within the bounds (charging its size), else a refusal."""
    if isinstance(data, str):
        if len(data) > MAX_TEXT_CHARS:
            raise ValueTooLarge(f"a string of {len(data):,} characters is past the bound "
                                f"of {MAX_TEXT_CHARS:,}")
        step(1 + len(data) // 1000)
    elif isinstance(data, tuple | list):
        if len(data) > MAX_LIST_ITEMS:
            raise ValueTooLarge(f"a list of {len(data):,} items is past the bound of "
                                f"{MAX_LIST_ITEMS:,}")
        step(1 + len(data))
    elif isinstance(data, int) and not isinstance(data, bool) and data.bit_length() > MAX_INT_BITS:
        raise ArithmeticFault(f"a number of more than {MAX_INT_BITS:,} bits")
    return data


def _plain_number(number: float) -> int | float:
    return int(number) if isinstance(number, float) and number.is_integer() \
        and abs(number) < 2**53 else number


def _operate(op: str, left: Value, right: Value, step: Step) -> Value:
    """`left OP right` for the arithmetic operators `+ - * / %`."""
    _check(op, left, right)
    a, b = left.data, right.data
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        if len(a) + len(b) > MAX_TEXT_CHARS:
            raise ValueTooLarge(f"a string of {len(a) + len(b):,} characters is past the bound "
                                f"of {MAX_TEXT_CHARS:,}")
        return labelled(_size(a + b, step), (left, right))
    if op == "+" and isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) + len(b) > MAX_LIST_ITEMS:
            raise ValueTooLarge(f"a list of {len(a) + len(b):,} items is past the bound of "
                                f"{MAX_LIST_ITEMS:,}")
        return labelled(v.collected(_size((*a, *b), step)), (left, right))
    assert isinstance(a, int | float) and isinstance(b, int | float)
    step(1)
    if op in ("/", "%") and b == 0:
        raise ArithmeticFault(f"`{op}` by zero")
    if op == "*" and isinstance(a, int) and isinstance(b, int) \
            and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        raise ArithmeticFault(f"a number of more than {MAX_INT_BITS:,} bits")
    try:
        number: int | float
        if op == "+":
            number = a + b
        elif op == "-":
            number = a - b
        elif op == "*":
            number = a * b
        elif op == "/":
            number = a // b if isinstance(a, int) and isinstance(b, int) and a % b == 0 else a / b
        else:
            number = a % b
    except OverflowError as error:
        raise ArithmeticFault(f"`{op}` overflows: {error}") from None
    return labelled(_size(_plain_number(number), step), (left, right))


def _test(op: str, left: Value, right: Value, step: Step) -> bool:
    """`in`, `not in`, `contains`, `starts with`, `matches` (the orderings and `==` live in
    `prose.runtime.conditions.compare`)."""
    _check(op, left, right)
    if op in ("in", "not in", "contains"):
        container, item = (left, right) if op == "contains" else (right, left)
        found = _member(container, item, step)
        return not found if op == "not in" else found
    a, b = left.data, right.data
    assert isinstance(a, str) and isinstance(b, str)
    step(1 + len(a) // 1000)
    if op == "starts with":
        return a.startswith(b)
    return matches(a, b)


def _member(container: Value, item: Value, step: Step) -> bool:
    data = container.data
    if isinstance(data, str):
        assert isinstance(item.data, str)
        step(1 + len(data) // 1000)
        return item.data in data
    if isinstance(data, dict):
        return item.data in data
    assert isinstance(data, tuple)
    step(1 + len(data))
    return any(v.equal(element, item) for element in data)


def matches(text: str, pattern: str) -> bool:
    """Whether RE2 finds `pattern` anywhere in `text` (anchor with `^...$` for the whole)."""
    return compile_pattern(pattern, "`matches`").search(text) is not None


def compile_pattern(pattern: str, user: str) -> Any:
    """`pattern` (from a value or a model: untrusted) compiled by RE2, whose searches take
    time linear in the text whatever the pattern (Python's `re` backtracks: `(a+)+$` on 34
    `a`s and a `!` runs for hours), quietly (RE2 logs a pattern it refuses to stderr unless
    told not to). `user` names what asked, for the error (BadPattern)."""
    import re2  # type: ignore[import-untyped]  # a C extension, loaded only when needed

    if len(pattern) > MAX_PATTERN_CHARS:
        raise BadPattern(f"a {user} pattern of {len(pattern):,} characters is past the "
                         f"bound of {MAX_PATTERN_CHARS:,}")
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        raise BadPattern(f"{user} cannot use the pattern {pattern!r}: {error} (RE2 syntax: no "
                         "backreferences or lookaround)") from None


def _sliced(container: Value, start: Value | None, stop: Value | None, step: Step) -> Value:
    """`xs[a:b]` of a list or a string; bounds as Python's (negative from the end, clipped)."""
    data = container.data
    if not isinstance(data, str | tuple):
        raise ValueTypeError(f"cannot slice {v.describe(container)}: a list or a string")
    bounds: list[int | None] = []
    for bound in (start, stop):
        if bound is None or bound.data is None:
            bounds.append(None)
        elif isinstance(bound.data, int) and not isinstance(bound.data, bool):
            bounds.append(bound.data)
        else:
            raise ValueTypeError(f"a slice bound must be an integer, not {v.describe(bound)}")
    part = data[bounds[0]:bounds[1]]
    operands = [container, *(b for b in (start, stop) if b is not None)]
    if isinstance(part, str):
        return labelled(_size(part, step), operands)
    return labelled(v.collected(_size(part, step)), operands)


# An error any of these raise describes its operands (a type, a size, a pattern, a key):
# it carries their labels (`prose.runtime.values.describing`).


def operate(op: str, left: Value, right: Value, step: Step) -> Value:
    """`left OP right` for the arithmetic operators `+ - * / %`."""
    with v.describing(left, right):
        return _operate(op, left, right, step)


def test(op: str, left: Value, right: Value, step: Step) -> bool:
    """`in`, `not in`, `contains`, `starts with`, `matches` (the orderings and `==` live in
    `prose.runtime.conditions.compare`)."""
    with v.describing(left, right):
        return _test(op, left, right, step)


def sliced(container: Value, start: Value | None, stop: Value | None, step: Step) -> Value:
    """`xs[a:b]` of a list or a string; bounds as Python's (negative from the end, clipped)."""
    with v.describing(container, *(bound for bound in (start, stop) if bound is not None)):
        return _sliced(container, start, stop, step)


def call_builtin(name: str, args: Sequence[Value], keywords: dict[str, Value], step: Step) -> Value:
    """The value of built-in `name` (checked against `prose.lang.builtins.BUILTINS`)."""
    with v.describing(*args, *keywords.values()):
        return _call_builtin(name, args, keywords, step)


# --- the built-ins ------------------------------------------------------------------


def _call_builtin(name: str, args: Sequence[Value], keywords: dict[str, Value],
                  step: Step) -> Value:
    """The value of built-in `name` (checked against `prose.lang.builtins.BUILTINS`)."""
    problem = spec.arity_problem(name, len(args), list(keywords))
    if problem is not None:
        raise ValueTypeError(problem)
    operands = [*args, *keywords.values()]
    data = _BUILTINS[name](list(args), keywords, step)
    if isinstance(data, list):
        data = v.collected(_size(tuple(data), step))
    elif isinstance(data, str | int):
        _size(data, step)
    return labelled(data, operands)


# What a built-in's operand must be, by the words its refusal uses.
_OPERANDS: dict[str, type] = {"a list": tuple, "a string": str, "an object": dict}


def _operand(value: Value, name: str, kind: str) -> Any:
    """`value`'s data when it is `kind` (`a list`, `a string`, `an object`); else the one
    refusal every built-in gives: `` `name` takes KIND, not WHAT ``."""
    if not isinstance(value.data, _OPERANDS[kind]):
        raise ValueTypeError(f"`{name}` takes {kind}, not {v.describe(value)}")
    return value.data


def _list(value: Value, name: str) -> tuple[Value, ...]:
    items: tuple[Value, ...] = _operand(value, name, "a list")
    return items


def _text(value: Value, name: str) -> str:
    text: str = _operand(value, name, "a string")
    return text


def _length(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    data = args[0].data
    if isinstance(data, str | tuple | dict):
        return len(data)
    raise ValueTypeError(f"`length` takes a list, a string or an object, not {v.describe(args[0])}")


def _count(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    if isinstance(args[0].data, str) and len(args) == 2:
        return args[0].data.count(_text(args[1], "count"))
    items = _list(args[0], "count")
    step(1 + len(items))
    if len(args) == 1:
        return len(items)
    return sum(1 for item in items if v.equal(item, args[1]))


def _sum(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    items = _list(args[0], "sum")
    step(1 + len(items))
    total: int | float = 0
    for item in items:
        if not _number(item):
            raise ValueTypeError(f"`sum` takes a list of numbers, not one holding {v.describe(item)}")
        total += item.data  # type: ignore[operator]
    return _plain_number(total)


def _key(item: Value, by: Value | None, name: str) -> Any:
    """What `item` is ordered by: itself, or its field `by` (a dotted path)."""
    value = item
    if by is not None:
        path = _text(by, f"{name}(by:)")
        for part in path.split("."):
            value = v.member(value, part)
    data = value.data
    if isinstance(data, int | float | str) and not isinstance(data, bool):
        return data
    where = f"`{by.data}` of an item" if by is not None else "an item"
    raise ValueTypeError(f"`{name}` orders numbers or strings; {where} is {v.describe(value)}")


def _keys_of(items: Sequence[Value], by: Value | None, name: str) -> list[Any]:
    keys = [_key(item, by, name) for item in items]
    kinds = {isinstance(key, str) for key in keys}
    if len(kinds) > 1:
        raise ValueTypeError(f"`{name}` cannot order numbers and strings together")
    return keys


def _extreme(args: list[Value], kw: dict[str, Value], step: Step, name: str) -> Any:
    items = _list(args[0], name) if len(args) == 1 else tuple(args)
    step(1 + len(items))
    if not items:
        raise ValueTypeError(f"`{name}` of an empty list")
    keys = _keys_of(items, kw.get("by"), name)
    best = 0
    for at in range(1, len(items)):  # the first of equal ones
        if (keys[at] < keys[best]) if name == "min" else (keys[at] > keys[best]):
            best = at
    return items[best]


def _min(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    return _extreme(args, kw, step, "min")


def _max(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    return _extreme(args, kw, step, "max")


def _distinct(items: Sequence[Value], step: Step) -> list[tuple[Value, int]]:
    """Each distinct item (deep equality) with its number of occurrences, first seen first."""
    seen: dict[str, int] = {}
    out: list[tuple[Value, int]] = []
    for item in items:
        key = json.dumps(v.plain(item), sort_keys=True)  # deep equality of the data
        at = seen.get(key)
        if at is None:
            seen[key] = len(out)
            out.append((item, 1))
        else:
            out[at] = (out[at][0], out[at][1] + 1)
    step(1 + len(items))
    return out


def _mode(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    items = _list(args[0], "mode")
    if not items:
        raise ValueTypeError("`mode` of an empty list")
    counts = _distinct(items, step)
    best = max(count for _, count in counts)
    return next(item for item, count in counts if count == best)  # first seen of the most frequent


def _sort(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    items = _list(args[0], "sort")
    keys = _keys_of(items, kw.get("by"), "sort")
    step(1 + len(items))
    order = sorted(range(len(items)), key=lambda at: keys[at])
    if "descending" in kw and v.truthy(kw["descending"]):
        order = sorted(range(len(items)), key=lambda at: keys[at], reverse=True)
    return [items[at] for at in order]


def _top(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    items = _list(args[0], "top")
    count = args[1].data
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ValueTypeError(f"`top` takes a count >= 0, not {v.describe(args[1])}")
    keys = _keys_of(items, kw.get("by"), "top")
    step(1 + len(items))
    # Largest first; Python's sort is stable, so equal keys keep their input order.
    order = sorted(range(len(items)), key=lambda at: keys[at], reverse=True)
    return [items[at] for at in order[:count]]


def _unique(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    return [item for item, _ in _distinct(_list(args[0], "unique"), step)]


def _flatten(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    out: list[Value] = []
    for item in _list(args[0], "flatten"):
        if isinstance(item.data, tuple):
            out.extend(item.data)
        else:
            out.append(item)
        if len(out) > MAX_LIST_ITEMS:
            _size(tuple(out), step)
    return out


def _object(value: Value, name: str) -> dict[str, Value]:
    fields: dict[str, Value] = _operand(value, name, "an object")
    return fields


def _keys(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    return [v.wrap(key) for key in _object(args[0], "keys")]


def _values(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    return list(_object(args[0], "values").values())


def _zip(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    lists = [_list(arg, "zip") for arg in args]
    return [v.collected(items) for items in zip(*lists, strict=False)]


def _range(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    numbers: list[int] = []
    for arg in args:
        if not isinstance(arg.data, int) or isinstance(arg.data, bool):
            raise ValueTypeError(f"`range` takes integers, not {v.describe(arg)}")
        numbers.append(arg.data)
    start, stop, stride = (0, numbers[0], 1) if len(numbers) == 1 else (
        numbers[0], numbers[1], numbers[2] if len(numbers) == 3 else 1)
    if stride == 0:
        raise ValueTypeError("`range` with a step of 0")
    span = range(start, stop, stride)
    if len(span) > MAX_LIST_ITEMS:
        raise ValueTooLarge(f"a list of {len(span):,} items is past the bound of {MAX_LIST_ITEMS:,}")
    return [v.constant(number) for number in span]


def _join(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    items = _list(args[0], "join")
    separator = _text(args[1], "join") if len(args) == 2 else ""
    step(1 + len(items))
    size = sum(len(v.to_text(item)) for item in items) + len(separator) * len(items)
    if size > MAX_TEXT_CHARS:
        raise ValueTooLarge(f"a string of {size:,} characters is past the bound of "
                            f"{MAX_TEXT_CHARS:,}")
    return separator.join(v.to_text(item) for item in items)


def _split(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    text = _text(args[0], "split")
    step(1 + len(text) // 1000)
    if len(args) == 1:
        return [v.wrap(part) for part in text.split()]
    separator = _text(args[1], "split")
    if not separator:
        raise ValueTypeError("`split` with an empty separator")
    return [v.wrap(part) for part in text.split(separator)]


def _lower(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    return _text(args[0], "lower").lower()


def _upper(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    return _text(args[0], "upper").upper()


def _trim(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    return _text(args[0], "trim").strip()


def _digest(args: list[Value], kw: dict[str, Value], step: Step) -> Any:
    data = v.plain(args[0])
    step(1 + len(json.dumps(data, default=str)) // 1000)  # as a string's size is charged
    return value_digest(data)


_BUILTINS: dict[str, Callable[[list[Value], dict[str, Value], Step], Any]] = {
    "length": _length, "count": _count, "sum": _sum, "min": _min, "max": _max, "mode": _mode,
    "sort": _sort, "top": _top, "unique": _unique, "flatten": _flatten, "keys": _keys,
    "values": _values, "zip": _zip, "range": _range, "join": _join, "split": _split,
    "lower": _lower, "upper": _upper, "trim": _trim, "digest": _digest,
}  # fmt: skip
assert set(_BUILTINS) == set(spec.BUILTINS), "every built-in of prose.lang.builtins runs here"
