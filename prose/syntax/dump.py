"""A JSON-ready dump of the AST, stable enough for golden files."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from prose.syntax import nodes as n


def dump(node: Any, *, positions: bool = True) -> Any:
    """Nodes become `{"type": ..., fields..., "span": "line:col-end_line:end_col"}`.

    A node's tuple fields are dumped in the node's own call, so a program at
    the nesting limit (`nesting.MAX_NESTING`) dumps within Python's default
    recursion limit.
    """
    if isinstance(node, tuple | list):
        return [dump(item, positions=positions) for item in node]
    if not isinstance(node, n.Node):
        return node
    out: dict[str, Any] = {"type": type(node).__name__}
    for f in fields(node):
        if f.name in ("span", "source", "head", "bound_at"):
            continue
        value = getattr(node, f.name)
        if isinstance(value, tuple | list):
            items: list[Any] = []
            for item in value:
                items.append(dump(item, positions=positions))
            out[f.name] = items
        else:
            out[f.name] = dump(value, positions=positions)
    if positions and node.span.line:
        span = node.span
        out["span"] = f"{span.line}:{span.column}-{span.end_line}:{span.end_column}"
    return out
