"""The pattern file a trace was made from: its sha256, its compiled policy and its call sites.

The file is read through `prose.pattern_file` (as `prose run` reads it), never here.

A call event records the file, line and column of its `call`; with the
pattern at hand the audit reads that call's input names and the literal text
it sends from the program itself instead of from the rendered messages.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from prose.lang.policy import Policy
from prose.lang.properties import MODEL_CHANNELS, is_input
from prose.syntax import nodes as n
from prose.syntax.walk import find_all

if TYPE_CHECKING:
    from prose.pattern_file import PatternFile


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


def pattern_source(pattern: PatternFile) -> PatternSource | None:
    """The audit's view of a pattern file (`prose.pattern_file`, read once per command), or
    None when its spec does not load or its program does not parse.

    Every kind with a program is read alike: a pattern's `### Delegation` and a function's
    or responsibility's `### Execution` (with its callees as slots). The policy and the
    data flow are the file's checking context (`prose.check.lint.check_context`), the one
    the linter used, so a run that linted the file does not analyse it again."""
    from prose.check.lint import check_context

    context = check_context(pattern)
    if context is None:
        return None
    flow = context.flow
    sites: dict[tuple[int, int], CallSite] = {}
    for call in find_all(context.program, n.Call):
        names = tuple(prop.name for prop in call.inputs)
        site = flow.calls.get(id(call))
        found: dict[str, None] = {}
        for entry in site.inputs.values() if site is not None else ():
            if is_input(entry.name) or entry.name in MODEL_CHANNELS:
                found.update(dict.fromkeys(text for text, _ in flow.literal_texts(entry.value)))
        literals = tuple(text for text in found if text not in names)
        sites[(call.line, call.column)] = CallSite(call.line, call.column, names, literals)
    sha256 = hashlib.sha256(pattern.text.encode("utf-8")).hexdigest()
    return PatternSource(Path(pattern.path), sha256, context.policy, sites)
