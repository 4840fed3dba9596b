"""The pattern file a trace was made from: its sha256, its compiled policy and its call sites.

A call event records the file, line and column of its `call`; with the
pattern at hand the audit reads that call's input names and the literal text
it sends from the program itself instead of from the rendered messages.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prose.lang.policy import Policy
from prose.lang.properties import MODEL_CHANNELS, is_input
from prose.syntax import nodes as n


@dataclass(frozen=True, slots=True)
class CallSite:
    """What the program's `call` at one position passes: input names and literal text."""

    line: int
    column: int
    inputs: tuple[str, ...]
    literals: tuple[str, ...]


@dataclass(frozen=True)
class PatternSource:
    """A pattern file read for the audit."""

    path: Path
    sha256: str
    policy: Policy
    sites: dict[tuple[int, int], CallSite]

    def call_at(self, line: int, column: int) -> CallSite | None:
        return self.sites.get((line, column))


def read_pattern(path: Path) -> PatternSource | None:
    """The pattern at `path`, or None when it cannot be read, loaded or parsed."""
    from prose.check.declarations import from_spec
    from prose.check.flow import analyse
    from prose.errors import ProseError
    from prose.files import read_text
    from prose.lang.policy import compile_policy
    from prose.spec import load_spec
    from prose.syntax import parse

    filename = str(path)
    try:
        text = read_text(filename)  # as the runtime read it (a BOM removed) before hashing
    except ProseError:
        return None
    loaded = load_spec(text, filename)
    if loaded.spec is None:
        return None
    try:
        program = parse(text, filename)
    except ProseError:
        return None
    policy = compile_policy(loaded.spec)
    flow = analyse(from_spec(loaded.spec), program, strict=policy.strict)
    sites: dict[tuple[int, int], CallSite] = {}
    for call in _calls(program):
        names = tuple(prop.name for prop in call.inputs)
        site = flow.calls.get(id(call))
        found: dict[str, None] = {}
        for entry in site.inputs.values() if site is not None else ():
            if is_input(entry.name) or entry.name in MODEL_CHANNELS:
                found.update(dict.fromkeys(text for text, _ in flow.literal_texts(entry.value)))
        literals = tuple(text for text in found if text not in names)
        sites[(call.line, call.column)] = CallSite(call.line, call.column, names, literals)
    return PatternSource(path, hashlib.sha256(text.encode("utf-8")).hexdigest(), policy, sites)


def _calls(node: Any) -> Iterator[n.Call]:
    """Every `call` node in the tree, found by walking the dataclass fields."""
    if isinstance(node, n.Call):
        yield node
    if isinstance(node, tuple | list):
        for item in node:
            yield from _calls(item)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for item in dataclasses.fields(node):
            if item.name in ("span", "head"):
                continue
            yield from _calls(getattr(node, item.name))
