"""A JSON-ready dump of the AST, stable enough for golden files."""

from __future__ import annotations

from typing import Any

from prose.syntax import nodes as n
from prose.syntax.walk import field_layout


def dump(node: Any, *, positions: bool = True) -> Any:
    """Nodes become `{"type": ..., fields..., "span": "line:col-end_line:end_col"}`.

    The fields are those the node's `repr` shows (`walk.field_layout`): its positions
    other than `span` and the program's whole text are left out. A node's tuple fields
    are dumped in the node's own call, so a program at the nesting limit
    (`nesting.MAX_NESTING`) dumps within Python's default recursion limit.
    """
    if isinstance(node, tuple | list):
        return [dump(item, positions=positions) for item in node]
    if not isinstance(node, n.Node):
        return node
    out: dict[str, Any] = {"type": type(node).__name__}
    for field in field_layout(type(node)):
        if not field.shown:
            continue
        value = getattr(node, field.name)
        if isinstance(value, tuple | list):
            items: list[Any] = []  # a loop, not a comprehension: no frame of its own
            for item in value:
                items.append(dump(item, positions=positions))
            out[field.name] = items
        else:
            out[field.name] = dump(value, positions=positions)
    if positions and node.span.line:
        span = node.span
        out["span"] = f"{span.line}:{span.column}-{span.end_line}:{span.end_column}"
    return out
