"""Where every name of a pattern occurs, in the prose block and in the markdown sections.

The index is built from what the library already computed: the spec's spans (slots,
config keys, parameters, the names an invariant or a `requires:` entry mentions) and
the parsed program's nodes. The AST gives a name's exact position where it has its own
node (a reference, a call target); where a statement binds a name (`let x`, `for x in`,
`catch as err`, `block b(p)`, `use "..." as a`) the name is found on the statement's
own line, after the keyword, so no second parser is involved.

Scoping (LANGUAGE.md 4.1): slots, config keys, parameters and variables share one
namespace, so a name is its own key; a block's parameters and the names its body binds
are keyed with the block.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.walk import children, walk_statements

if TYPE_CHECKING:
    from prose.spec.model import PatternSpec

Kind = Literal["slot", "config", "parameter", "variable", "constant", "loop variable",
               "catch variable", "block", "block parameter", "alias", "agent", "name"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*")
_BOUNDARY = r"[A-Za-z0-9_\-]"


@dataclass(frozen=True)
class Occurrence:
    """One place a name is written: a definition (declaration, binding) or a reference."""

    name: str
    key: str
    span: Span
    definition: bool
    kind: Kind
    # Where it is: "program", or the markdown section ("slots", "invariants", ...).
    where: str = "program"

    def contains(self, line: int, column: int) -> bool:
        """Whether 1-based `line`:`column` is on the name (its end counts: a cursor after it)."""
        return (self.span.line == line and self.span.column <= column <= self.span.end_column)


@dataclass
class SymbolIndex:
    """Every occurrence of every name, and the kind of each key."""

    occurrences: list[Occurrence] = field(default_factory=list)
    kinds: dict[str, Kind] = field(default_factory=dict)

    def at(self, line: int, column: int) -> Occurrence | None:
        """The occurrence under 1-based `line`:`column`, if any (the innermost wins)."""
        found = [o for o in self.occurrences if o.contains(line, column)]
        if not found:
            return None
        # Prefer a name the cursor is inside over one it merely ends.
        return min(found, key=lambda o: (o.span.end_column == column, o.span.end_column - o.span.column))

    def of(self, key: str) -> list[Occurrence]:
        """Every occurrence of `key`, definitions first, in source order."""
        found = [o for o in self.occurrences if o.key == key]
        return sorted(found, key=lambda o: (not o.definition, o.span.line, o.span.column))

    def definitions(self, key: str) -> list[Occurrence]:
        return [o for o in self.of(key) if o.definition]

    def names(self) -> dict[str, Kind]:
        """Every global name (not block-local) with its kind."""
        return {key: kind for key, kind in self.kinds.items() if "@" not in key}


def build_index(text: str, spec: PatternSpec | None, program: n.Program | None) -> SymbolIndex:
    """The symbol index of one pattern file (either part may be missing)."""
    lines = text.split("\n")
    index = SymbolIndex()
    if spec is not None:
        _declarations(index, spec, lines)
    if program is not None:
        _Program(index, lines, spec).run(program)
    return index


# --- the markdown sections ----------------------------------------------------------------


def _declarations(index: SymbolIndex, spec: PatternSpec, lines: list[str]) -> None:
    slots = set(spec.slot_names)
    config = set(spec.config_names)
    for slot in spec.slots:
        _add(index, slot.name, slot.span, True, "slot", "slots")
    for key in spec.config:
        _add(index, key.name, key.span, True, "config", "config")
    for parameter in spec.parameters:
        # A parameter named like a slot documents its binding; named like a config key, it is it.
        kind: Kind = "slot" if parameter.name in slots else "config" if parameter.name in config \
            else "parameter"
        _add(index, parameter.name, parameter.span, kind == "parameter", kind, "parameters")
    for invariant in spec.invariants:
        for name, span in invariant.name_spans.items():
            _add(index, name, span, False, index.kinds.get(name, "name"), "invariants")
    for slot in spec.slots:
        for requirement in slot.requires:
            for name, span in _words_in(lines, requirement.span):
                _add(index, name, span, False, index.kinds.get(name, "name"), "slots")
    if spec.shape is not None:
        for name, span in spec.shape.delegate_spans.items():
            if name in slots:
                _add(index, name, _narrow(lines, span, name), False, "slot", "shape")


def _words_in(lines: list[str], span: Span) -> Iterator[tuple[str, Span]]:
    """The identifiers inside a one-line span, each with its own span."""
    if span.line != span.end_line or not 0 < span.line <= len(lines):
        return
    text = lines[span.line - 1]
    for match in _IDENTIFIER.finditer(text, span.column - 1, span.end_column - 1):
        yield match.group(), Span(span.file, span.line, match.start() + 1, span.line, match.end() + 1)


def _narrow(lines: list[str], span: Span, name: str) -> Span:
    """The span of `name` itself inside `span`'s first line (or `span` if it is not there)."""
    return find_word(lines, span, name) or span


def find_word(lines: list[str], span: Span, name: str, *, from_column: int | None = None,
              last_line: int | None = None) -> Span | None:
    """The first whole-word `name` from `span`'s start (through `last_line`), as a span."""
    pattern = re.compile(rf"(?<!{_BOUNDARY}){re.escape(name)}(?!{_BOUNDARY})")
    start = span.column - 1 if from_column is None else from_column - 1
    for line in range(span.line, (last_line or span.line) + 1):
        if not 0 < line <= len(lines):
            break
        match = pattern.search(lines[line - 1], start if line == span.line else 0)
        if match:
            return Span(span.file, line, match.start() + 1, line, match.end() + 1)
    return None


def _add(index: SymbolIndex, name: str, span: Span, definition: bool, kind: Kind, where: str,
         key: str | None = None) -> None:
    key = key or name
    if key not in index.kinds and (definition or kind != "name"):
        index.kinds[key] = kind
    index.occurrences.append(Occurrence(name, key, span, definition, kind, where))


# --- the program ----------------------------------------------------------------------------


class _Program:
    """One walk over the program recording every name written in it."""

    def __init__(self, index: SymbolIndex, lines: list[str], spec: PatternSpec | None) -> None:
        self.index = index
        self.lines = lines
        self.declared: dict[str, Kind] = {}
        if spec is not None:
            self.declared.update({name: "parameter" for name in (p.name for p in spec.parameters)})
            self.declared.update({name: "config" for name in spec.config_names})
            self.declared.update({name: "slot" for name in spec.slot_names})
        # Innermost block first: (block line, names local to it).
        self.blocks: list[tuple[int, set[str]]] = []

    def run(self, program: n.Program) -> None:
        for statement in program.body:
            self.node(statement)

    # --- keys ---------------------------------------------------------------------

    def key(self, name: str) -> str:
        for line, local in reversed(self.blocks):
            if name in local:
                return f"{name}@{line}"
        return name

    def kind_of(self, name: str, fallback: Kind) -> Kind:
        return self.declared.get(name) or self.index.kinds.get(self.key(name)) or fallback

    def define(self, name: str, span: Span | None, kind: Kind) -> None:
        if span is None:
            return
        declared = self.declared.get(name)
        if declared is not None and not self.blocks:  # a `let` of a slot name: PN103 says so
            _add(self.index, name, span, False, declared, "program")
            return
        _add(self.index, name, span, True, kind, "program", self.key(name))

    def refer(self, name: str, span: Span) -> None:
        _add(self.index, name, span, False, self.kind_of(name, "name"), "program", self.key(name))

    def word(self, span: Span, name: str, *, after: int | None = None,
             last_line: int | None = None) -> Span | None:
        return find_word(self.lines, span, name, from_column=after, last_line=last_line)

    # --- nodes ----------------------------------------------------------------------

    def node(self, node: n.Node) -> None:
        handler = getattr(self, "on_" + type(node).__name__, None)
        if handler is not None:
            handler(node)
        if isinstance(node, n.BlockDef):
            return  # on_BlockDef walks its body in the block's scope
        for child in children(node):
            self.node(child)

    def on_Name(self, node: n.Name) -> None:
        self.refer(node.name, node.span)

    def on_Interpolation(self, node: n.Interpolation) -> None:
        head = node.path[0]
        span = node.span
        self.refer(head, Span(span.file, span.line, span.column + 1, span.line,
                              span.column + 1 + len(head)))

    def on_Condition(self, node: n.Condition) -> None:
        if node.predicate is not None:
            return  # its names are nodes of their own
        for mention in dict.fromkeys(m.split(".")[0] for m in node.mentions):
            found = self.word(node.span, mention, last_line=node.span.end_line)
            if found is not None:
                self.refer(mention, found)

    def on_Let(self, node: n.Let) -> None:
        after = node.span.column + (6 if node.const else 4)
        kind: Kind = "constant" if node.const else "variable"
        for name in node.names:
            self.define(name, self.word(node.span, name, after=after), kind)

    def bound(self, names: tuple[str | None, ...], spans: tuple[Span, ...], kind: Kind) -> None:
        """Define the names a node binds where the parser saw them written (`bound_at`)."""
        for name, span in zip([name for name in names if name], spans, strict=False):
            self.define(name, span, kind)

    def on_For(self, node: n.For) -> None:
        self.bound((node.var, node.index_var), node.bound_at, "loop variable")

    def on_Repeat(self, node: n.Repeat | n.Loop) -> None:
        self.bound((node.var,), node.bound_at, "loop variable")

    on_Loop = on_Repeat

    def on_Try(self, node: n.Try) -> None:
        self.bound((node.catch_var,), node.bound_at, "catch variable")

    def on_Orphan(self, node: n.Orphan) -> None:
        self.bound((node.var,), node.bound_at, "catch variable")

    def on_BlockDef(self, node: n.BlockDef) -> None:
        after = self._after_keyword(node.span, "block")
        self.define(node.name, self.word(node.span, node.name, after=after), "block")
        local = set(node.params)
        for statement in walk_statements(node.body):
            if isinstance(statement, n.Let):
                local.update(statement.names)
            elif isinstance(statement, n.For):
                local.update(v for v in (statement.var, statement.index_var) if v)
            elif isinstance(statement, n.Repeat | n.Loop) and statement.var:
                local.add(statement.var)
            elif isinstance(statement, n.Try) and statement.catch_var:
                local.add(statement.catch_var)
        self.blocks.append((node.span.line, local))
        try:
            self.bound(node.params, node.bound_at, "block parameter")
            for statement in node.body:
                self.node(statement)
        finally:
            self.blocks.pop()

    def on_Do(self, node: n.Do) -> None:
        if node.name is not None:
            found = self.word(node.span, node.name, after=self._after_keyword(node.span, "do"))
            if found is not None:
                self.refer(node.name, found)

    def on_Use(self, node: n.Use) -> None:
        self.bound((node.alias,), node.bound_at, "alias")

    def on_AgentDef(self, node: n.AgentDef) -> None:
        found = self.word(node.span, node.name, after=self._after_keyword(node.span, "agent"))
        self.define(node.name, found, "agent")

    def on_Session(self, node: n.Session) -> None:
        if node.agent is None:
            return
        keyword = "resume" if node.resume else "session"
        after = self._after_keyword(node.head, keyword)
        if node.label is not None:
            label = self.word(node.head, node.label, after=after)
            after = label.end_column if label is not None else after
        found = self.word(node.head, node.agent, after=after)
        if found is not None:
            self.refer(node.agent, found)

    def on_Stage(self, node: n.Stage) -> None:
        # `map`'s `item` is implicit (no `bound_at`): no place defines it.
        self.bound(node.params, node.bound_at, "loop variable")

    def _after_keyword(self, span: Span, keyword: str) -> int:
        """The column just after `keyword` on `span`'s first line (its start if not found)."""
        line = self.lines[span.line - 1] if 0 < span.line <= len(self.lines) else ""
        found = re.compile(rf"\b{keyword}\b").search(line, span.column - 1)
        return found.end() + 1 if found else span.column


__all__ = ["Kind", "Occurrence", "SymbolIndex", "build_index", "find_word"]
