"""Hover: who sees what, as `prose explain` computes it, for the name under the cursor.

On a slot: its `requires:` and `ensures:`, the invariants that name it (with their
status), and every call of it with each input and the slots whose outputs that input
may carry. On a variable: the slots whose outputs it may carry. On a config key or a
parameter: its declaration. On a rule code (`PH604`, in a `# prose: ignore[...]`
comment or anywhere): the rule's summary and a link to its page.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lsprotocol import types as lsp

from prose.lsp.diagnostics import rule_url
from prose.lsp.documents import Analysis
from prose.lsp.symbols import Occurrence

_RULE_CODE = re.compile(r"\bP[A-Z]\d{3}\b")
_VARIABLE_DEFS = ("let", "assign", "record", "loop", "catch", "param", "join")


def hover(analysis: Analysis, position: lsp.Position) -> lsp.Hover | None:
    """The hover for `position` in `analysis`'s document, or None."""
    line, column = analysis.lines.point(position)
    code = _rule_code_at(analysis.lines.line(position.line), column)
    if code is not None:
        text = rule_summary(code)
        if text is not None:
            return _markdown(text)
    found = analysis.index.at(line, column)
    if found is None:
        return None
    kind = analysis.index.kinds.get(found.key, found.kind)
    if kind == "slot":
        text = slot_text(analysis, found.name)
    elif kind == "config":
        text = config_text(analysis, found.name)
    elif kind == "parameter":
        text = parameter_text(analysis, found.name)
    else:
        text = variable_text(analysis, found, kind)
    if text is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text),
                     range=analysis.lines.range(found.span))


def _markdown(text: str) -> lsp.Hover:
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))


def _rule_code_at(line: str, column: int) -> str | None:
    for match in _RULE_CODE.finditer(line):
        if match.start() < column <= match.end() + 1:
            return match.group()
    return None


@lru_cache(maxsize=1)
def _summaries() -> dict[str, tuple[str, str, str]]:
    from prose.check.catalogue import catalogue

    return {entry.code: (entry.name, entry.severity, entry.summary) for entry in catalogue()}


def rule_summary(code: str) -> str | None:
    """`**PH604** never-sees (error): summary` and the page's link, or None for no rule."""
    found = _summaries().get(code)
    if found is None:
        return None
    name, severity, summary = found
    text = f"**{code}** `{name}` ({severity}): {summary}"
    url = rule_url(code)
    if url:
        text += f"\n\n[{code} documentation]({url})"
    return text + f"\n\n`prose rules {code}` prints the whole page."


def slot_text(analysis: Analysis, name: str) -> str | None:
    """What slot `name` may see: requires, ensures, invariants, and every call's inputs."""
    spec = analysis.pattern.spec
    slot = spec.slot(name) if spec is not None else None
    if spec is None or slot is None:
        return None
    markers = f" ({', '.join(slot.markers)})" if slot.markers else ""
    out = [f"**slot** `{name}`{markers}"]
    if slot.requires_declared:
        out.append("requires: " + (", ".join(r.text + (f" ({r.condition})" if r.condition else "")
                                            for r in slot.requires) or "nothing"))
    else:
        out.append("requires: not declared (any input is accepted)")
    if slot.ensures:
        out.append(f"{slot.ensures_keyword or 'ensures'}: {slot.ensures}")
    explanation = analysis.explanation
    statuses = {item.line: item.status for item in explanation.invariants} if explanation else {}
    marks = {"holds": "checked, holds", "violated": "checked, **violated**",
             "prose-only": "not machine-checked", "invalid": "invalid form",
             "run-time": "checked at run time and by the audit"}
    invariants = [item for item in spec.invariants if name in item.name_spans
                  or re.search(rf"\b{re.escape(name)}\b", item.text)]
    if invariants:
        out.append("\n**Invariants about it**")
        for item in invariants:
            status = statuses.get(item.span.line)
            suffix = f": {marks[status]}" if status in marks else ""
            out.append(f"- {item.text} (line {item.span.line}){suffix}")
    if explanation is None:
        out.append("\n_What reaches it is shown once the program parses._")
        return "\n".join(out)
    calls = [call for call in explanation.calls if name in call.slots]
    out.append("\n**What reaches it** (as `prose explain` computes)")
    if not calls:
        out.append("- it is never called")
    for call in calls:
        out.append(f"- line {call.line}: `call {call.target if call.target != 'slot' else name}`"
                   if call.target != "slot" else f"- line {call.line}: `call {name}`")
        if not call.inputs:
            out.append("  - no inputs")
        for entry in call.inputs:
            carried = ", ".join(f"`{s}`" for s in entry.provenance) or "no slot output"
            extra = sorted(set(entry.transitive) - set(entry.provenance))
            indirect = f" (indirectly also {', '.join(f'`{s}`' for s in extra)})" if extra else ""
            out.append(f"  - `{entry.name}` carries {carried}{indirect}")
    return "\n".join(out)


def config_text(analysis: Analysis, name: str) -> str | None:
    spec = analysis.pattern.spec
    key = spec.config_param(name) if spec is not None else None
    if key is None:
        return None
    default = f", default: `{key.default!r}`" if key.has_default else ""
    description = f": {key.description}" if key.description else ""
    return f"**config key** `{name}` ({key.type}{default}){description}\n\ndeclared at line " \
           f"{key.span.line} (`### Config`)"


def parameter_text(analysis: Analysis, name: str) -> str | None:
    spec = analysis.pattern.spec
    parameter = spec.parameter(name) if spec is not None else None
    if parameter is None:
        return None
    kind = f": {parameter.type}" if parameter.type else ""
    optional = " (optional)" if parameter.optional else ""
    description = f" -- {parameter.description}" if parameter.description else ""
    return f"**parameter** `{name}`{kind}{optional}{description}\n\ndeclared at line " \
           f"{parameter.span.line} (`### Parameters`); it carries no slot output"


def variable_text(analysis: Analysis, found: Occurrence, kind: str) -> str | None:
    """A variable's kind, where it is bound, and the slots whose outputs it may carry."""
    definitions = analysis.index.definitions(found.key)
    where = ", ".join(str(o.span.line) for o in definitions) or "nowhere"
    head = f"**{kind}** `{found.name}` (bound at line{'s' if len(definitions) > 1 else ''} {where})"
    provenance = variable_provenance(analysis, found.name)
    if provenance is None:
        return head
    direct, transitive = provenance
    carried = ", ".join(f"`{s}`" for s in direct) or "no slot output"
    extra = sorted(set(transitive) - set(direct))
    indirect = f"; indirectly also {', '.join(f'`{s}`' for s in extra)}" if extra else ""
    return f"{head}\n\ncarries {carried}{indirect}"


def variable_provenance(analysis: Analysis, name: str) -> tuple[list[str], list[str]] | None:
    """(slots whose outputs `name` may carry, also through calls) over all its bindings."""
    context = analysis.result.context
    if context is None or not analysis.complete:
        return None
    from prose.check.flow import Value

    flow = context.flow
    ids = frozenset(d.id for d in flow.defs if d.name == name and d.kind in _VARIABLE_DEFS)
    if not ids:
        return None
    value = Value(ids)
    return sorted(flow.provenance(value)), sorted(flow.transitive(value))
