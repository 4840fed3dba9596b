"""Completion: slot names after `call`, names in scope, config keys, parameters, keywords.

In the prose block: after `call ` the callable names (slots, `use` aliases, variables
bound to a service); inside `{` of a string the names in scope; elsewhere every name
and the statement keywords. In the markdown (an invariant, a `requires:` line) inside
backticks: the slots, parameters and config keys.
"""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from prose.lsp.documents import Analysis
from prose.syntax.keywords import grammar_keywords

# The statement and expression words of LANGUAGE.md 3, from the grammar (it reserves them
# in place).
KEYWORDS = grammar_keywords()
_KINDS = {
    "slot": lsp.CompletionItemKind.Interface,
    "config": lsp.CompletionItemKind.Property,
    "parameter": lsp.CompletionItemKind.Variable,
    "variable": lsp.CompletionItemKind.Variable,
    "constant": lsp.CompletionItemKind.Constant,
    "loop variable": lsp.CompletionItemKind.Variable,
    "catch variable": lsp.CompletionItemKind.Variable,
    "block": lsp.CompletionItemKind.Function,
    "block parameter": lsp.CompletionItemKind.Variable,
    "alias": lsp.CompletionItemKind.Module,
}
_CALL = re.compile(r"\bcall\s+[A-Za-z0-9_\-]*$")
_INTERPOLATION = re.compile(r"\{[A-Za-z0-9_\-]*$")


def complete(analysis: Analysis, position: lsp.Position) -> list[lsp.CompletionItem]:
    """The completion items at `position`."""
    line = analysis.lines.line(position.line)
    before = line[: analysis.lines.point(position)[1] - 1]
    names = analysis.index.names()
    if not _in_program(analysis, position.line + 1):
        if before.count("`") % 2 == 1:
            return [_item(name, kind) for name, kind in names.items()
                    if kind in ("slot", "config", "parameter")]
        return []
    if _CALL.search(before):
        return [_item(name, kind) for name, kind in names.items()
                if kind in ("slot", "alias", "block") or _is_service(analysis, name)]
    if _INTERPOLATION.search(before) and before.count('"') % 2 == 1:
        return [_item(name, kind) for name, kind in names.items()
                if kind not in ("block", "alias")]
    items = [_item(name, kind) for name, kind in names.items()]
    items.extend(lsp.CompletionItem(label=word, kind=lsp.CompletionItemKind.Keyword)
                 for word in KEYWORDS)
    return items


def _item(name: str, kind: str) -> lsp.CompletionItem:
    return lsp.CompletionItem(label=name, kind=_KINDS.get(kind, lsp.CompletionItemKind.Text),
                              detail=kind)


def _in_program(analysis: Analysis, line: int) -> bool:
    spec = analysis.pattern.spec
    if spec is None or spec.delegation is None:
        return False
    block = spec.delegation
    return block.fence_line < line < (block.end_line if block.closed else 10**9)


def _is_service(analysis: Analysis, name: str) -> bool:
    """Whether variable `name` holds a service (`for w in writers`, `let s = critic`)."""
    context = analysis.result.context
    if context is None:
        return False
    return any(b.name == name and b.service_of for b in context.model.bindings)
