"""Go to definition, find references and the outline (document symbols)."""

from __future__ import annotations

from lsprotocol import types as lsp

from prose.lsp.documents import Analysis
from prose.source import Span
from prose.syntax import nodes as n


def definition(analysis: Analysis, position: lsp.Position) -> list[lsp.Location]:
    """Where the name under the cursor is declared or bound (the declaration for a slot,
    config key or parameter; every binding for a variable)."""
    found = analysis.index.at(*analysis.lines.point(position))
    if found is None:
        return []
    return [analysis.lines.location(analysis.uri, o.span)
            for o in analysis.index.definitions(found.key)]


def references(analysis: Analysis, position: lsp.Position,
               include_declaration: bool) -> list[lsp.Location]:
    """Every occurrence of the name under the cursor, in the program and the sections."""
    found = analysis.index.at(*analysis.lines.point(position))
    if found is None:
        return []
    return [analysis.lines.location(analysis.uri, o.span)
            for o in analysis.index.of(found.key) if include_declaration or not o.definition]


def document_symbols(analysis: Analysis) -> list[lsp.DocumentSymbol]:
    """The outline: each section, with its slots, config keys, parameters or program."""
    spec = analysis.pattern.spec
    if spec is None:
        return []
    lines = analysis.lines
    children: dict[str, list[lsp.DocumentSymbol]] = {
        "slots": [_symbol(s.name, lsp.SymbolKind.Interface, lines.range(s.span), s.ensures)
                  for s in spec.slots],
        "config": [_symbol(c.name, lsp.SymbolKind.Property, lines.range(c.span), c.type)
                   for c in spec.config],
        "parameters": [_symbol(p.name, lsp.SymbolKind.Variable, lines.range(p.span), p.type)
                       for p in spec.parameters],
        "returns": [_symbol(r.name, lsp.SymbolKind.Field, lines.range(r.span), None)
                    for r in spec.returns],
    }
    program = analysis.pattern.program
    if program is not None:
        children["delegation"] = _program_symbols(analysis, program)
    out = []
    for section in spec.sections:
        whole = lines.range(section.span)
        title = lines.line(section.span.line - 1)
        heading = lines.range(Span(section.span.file, section.span.line, 1, section.span.line,
                                   len(title) + 1))
        out.append(lsp.DocumentSymbol(
            name=section.heading.lstrip("#").strip() or section.name,
            kind=lsp.SymbolKind.Namespace, range=whole, selection_range=heading,
            children=children.get(section.name) or None))
    return out


def _program_symbols(analysis: Analysis, program: n.Program) -> list[lsp.DocumentSymbol]:
    """Top-level `block`s, `use` aliases, `agent`s and the variables the program binds at
    top level."""
    lines = analysis.lines
    out = []
    for statement in program.body:
        names: list[tuple[str, lsp.SymbolKind]] = []
        if isinstance(statement, n.BlockDef):
            names = [(statement.name, lsp.SymbolKind.Function)]
        elif isinstance(statement, n.Use):
            names = [(statement.alias, lsp.SymbolKind.Module)]
        elif isinstance(statement, n.AgentDef):
            names = [(statement.name, lsp.SymbolKind.Object)]
        elif isinstance(statement, n.Let):
            kind = lsp.SymbolKind.Constant if statement.const else lsp.SymbolKind.Variable
            names = [(name, kind) for name in statement.names]
        for name, kind in names:
            binding = next((o for o in analysis.index.of(name)
                            if o.definition and o.span.line == statement.span.line), None)
            selection = lines.range(binding.span if binding else statement.span)
            whole = lines.range(statement.span)
            if (whole.end.line, whole.end.character) < (selection.end.line, selection.end.character):
                whole = selection
            out.append(lsp.DocumentSymbol(name=name, kind=kind, range=whole,
                                          selection_range=selection))
    return out


def _symbol(name: str, kind: lsp.SymbolKind, where: lsp.Range,
            detail: str | None) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(name=name, kind=kind, range=where, selection_range=where,
                              detail=detail)
