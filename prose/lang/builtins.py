"""The pure built-ins and the operators: what each takes, and the one flow rule they share.

A built-in is written with its parenthesis touching its name (`length(xs)`,
`sort(scores, by: "value")`); the table below is the only list of them, read
by the linter (unknown names, arity, keywords: PS201; flow analysis), the run
time (`prose.runtime.builtins`) and the docs (`python -m prose.lang.builtins`
prints the table in docs/language.md; a test keeps the two the same).

**The flow rule** (`result`), the same for every built-in and operator: the
result, and every part of it, carries everything its operands carried, the
elements of a list operand included. A built-in that picks an element
(`max`, `mode`, `top`) copies that element and also tells which element was
the largest or most frequent, so the chosen element carries the others too;
`length(xs)` carries the list's label as `xs.length` does. Coarser than a
per-element rule, and the same in both engines: the linter gives the value
the operands' joined label with no known members, the run time relabels the
value it computes deeply (`prose.runtime.values.relabel`).

**Bounds**: a built-in or operator charges the step budget one step per
item it reads, and refuses (a run-time error at its line) to build a string
longer than `MAX_TEXT_CHARS`, a list longer than `MAX_LIST_ITEMS` or an
integer wider than `MAX_INT_BITS` bits, before building it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from prose.lang.flows import Algebra

L = TypeVar("L")

MAX_TEXT_CHARS = 1_000_000
MAX_LIST_ITEMS = 100_000
MAX_INT_BITS = 14_000
MAX_PATTERN_CHARS = 1_000  # a `matches` regular expression


@dataclass(frozen=True, slots=True)
class BuiltinSpec:
    """One built-in: its name, how many positional arguments it takes, its keywords."""

    name: str
    min_args: int
    max_args: int | None  # None: any number
    keywords: tuple[str, ...]
    signature: str
    returns: str


BUILTINS: dict[str, BuiltinSpec] = {
    spec.name: spec
    for spec in (
        BuiltinSpec("length", 1, 1, (), "length(x)",
                    "the number of items of a list, characters of a string or keys of an object"),
        BuiltinSpec("count", 1, 2, (), "count(xs)`, `count(xs, v)",
                    "the number of items of a list; with `v`, of the items equal to `v` (of a "
                    "string: the occurrences of the substring `v`)"),
        BuiltinSpec("sum", 1, 1, (), "sum(xs)", "the sum of a list of numbers (0 when empty)"),
        BuiltinSpec("min", 1, None, ("by",), "min(xs, by: f)`, `min(a, b, ...)",
                    "the smallest item (numbers or strings, or their field `f`); the first of "
                    "equal ones; an empty list is an error"),
        BuiltinSpec("max", 1, None, ("by",), "max(xs, by: f)`, `max(a, b, ...)",
                    "the largest item, as `min`"),
        BuiltinSpec("mode", 1, 1, (), "mode(xs)",
                    "the most frequent item (deep equality); of items equally frequent, the one "
                    "seen first; an empty list is an error"),
        BuiltinSpec("sort", 1, 1, ("by", "descending"), "sort(xs, by: f, descending: b)",
                    "the items in ascending order (stable: equal ones keep their order)"),
        BuiltinSpec("top", 2, 2, ("by",), "top(xs, n, by: f)",
                    "the `n` largest items, largest first (stable: of equal ones, the first seen "
                    "comes first)"),
        BuiltinSpec("unique", 1, 1, (), "unique(xs)",
                    "the items without repeats (deep equality), first occurrences, in order"),
        BuiltinSpec("flatten", 1, 1, (), "flatten(xs)",
                    "a list of lists as one list (one level; other items stay as they are)"),
        BuiltinSpec("keys", 1, 1, (), "keys(o)", "an object's keys, in order"),
        BuiltinSpec("values", 1, 1, (), "values(o)", "an object's values, in order"),
        BuiltinSpec("zip", 2, None, (), "zip(a, b, ...)",
                    "lists of the items at the same position, as long as the shortest list"),
        BuiltinSpec("range", 1, 3, (), "range(n)`, `range(a, b)`, `range(a, b, step)",
                    "the integers from `a` (default 0) up to, not including, `b`"),
        BuiltinSpec("join", 1, 2, (), "join(xs, sep)",
                    "the items as text (strings as themselves, others as JSON) joined by `sep` "
                    "(default `\"\"`)"),
        BuiltinSpec("split", 1, 2, (), "split(s, sep)",
                    "a string cut at `sep` (default: runs of white space, no empty parts)"),
        BuiltinSpec("lower", 1, 1, (), "lower(s)", "a string in lower case"),
        BuiltinSpec("upper", 1, 1, (), "upper(s)", "a string in upper case"),
        BuiltinSpec("trim", 1, 1, (), "trim(s)", "a string without white space at either end"),
        BuiltinSpec("digest", 1, 1, (), "digest(x)",
                    "the SHA-256 of the manifest of the files `x` is laid out as in an agent's "
                    "workspace (a map of paths to text: its files; any other value: one file), "
                    "the digest the agent's call records (docs/agents.md)"),
    )
}

# What an operator takes, by the type names of `prose.runtime.values.type_name`.
ARITHMETIC = ("-", "*", "/", "%")


def result(alg: Algebra[L], operands: Iterable[L]) -> L:
    """The flow rule of every built-in and operator (module docstring): the result, and
    every part of it, carries the union of what its operands carried."""
    return alg.join(operands)


def arity_problem(name: str, positional: int, keywords: Sequence[str]) -> str | None:
    """Why a call of built-in `name` with these arguments is wrong, or None."""
    spec = BUILTINS.get(name)
    if spec is None:
        return f"`{name}` is not a built-in"
    if positional < spec.min_args or (spec.max_args is not None and positional > spec.max_args):
        return f"`{name}` takes {_arguments(spec)}, not {positional}"
    for keyword in keywords:
        if keyword not in spec.keywords:
            allowed = ", ".join(f"`{k}:`" for k in spec.keywords) or "none"
            return f"`{name}` has no keyword `{keyword}:` (it takes: {allowed})"
    return None


def _arguments(spec: BuiltinSpec) -> str:
    if spec.max_args == spec.min_args:
        count = spec.min_args
        return f"{count} argument" + ("" if count == 1 else "s")
    if spec.max_args is None:
        return f"at least {spec.min_args} argument" + ("" if spec.min_args == 1 else "s")
    return f"{spec.min_args} to {spec.max_args} arguments"


def operation_problem(op: str, left: str, right: str) -> str | None:
    """Why `left OP right` cannot be computed, by the operands' type names, or None.

    `+` adds numbers and joins two strings or two lists; `-`, `*`, `/`, `%` take
    numbers; `<` and friends compare two numbers or two strings; `in`/`not in` look
    for an item in a list, a substring in a string or a key in an object; `contains`
    is `in` reversed; `starts with` and `matches` take strings. `==` and `!=` take
    anything. A boolean is not a number here.
    """
    if op in ("==", "!="):
        return None
    if op == "+":
        if left == right and left in ("number", "string", "list"):
            return None
        return f"cannot add {_a(left)} and {_a(right)} (`+` adds numbers, or joins two strings or two lists)"
    if op in ARITHMETIC:
        if left == right == "number":
            return None
        return f"`{op}` takes two numbers, not {_a(left)} and {_a(right)}"
    if op in ("<", "<=", ">", ">="):
        if left == right and left in ("number", "string"):
            return None
        return f"cannot compare {_a(left)} {op} {_a(right)} (two numbers or two strings)"
    if op in ("in", "not in", "contains"):
        container, item = (left, right) if op == "contains" else (right, left)
        if container == "list" or (container == "string" and item == "string") or (
                container == "object" and item == "string"):
            return None
        return (f"`{op}` looks for an item in a list, a substring in a string or a key in an "
                f"object, not {_a(item)} in {_a(container)}")
    if op in ("starts with", "matches"):
        if left == right == "string":
            return None
        return f"`{op}` takes two strings, not {_a(left)} and {_a(right)}"
    return f"unknown operator `{op}`"


def _a(type_name: str) -> str:
    return f"an {type_name}" if type_name[0] in "aeiou" else f"a {type_name}"


def markdown_table() -> str:
    """The built-ins as the table in docs/language.md."""
    rows = ["| built-in | gives |", "|---|---|"]
    rows += [f"| `{spec.signature}` | {spec.returns} |" for spec in BUILTINS.values()]
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
