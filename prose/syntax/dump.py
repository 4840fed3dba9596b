"""A JSON-ready dump of the AST, stable enough for golden files."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from prose.syntax import nodes as n


def dump(node: Any, *, positions: bool = True) -> Any:
    """Nodes become `{"type": ..., fields..., "span": "line:col-end_line:end_col"}`."""
    if isinstance(node, n.Node):
        out: dict[str, Any] = {"type": type(node).__name__}
        for f in fields(node):
            if f.name in ("span", "source", "head"):
                continue
            out[f.name] = dump(getattr(node, f.name), positions=positions)
        if positions and node.span.line:
            span = node.span
            out["span"] = f"{span.line}:{span.column}-{span.end_line}:{span.end_column}"
        return out
    if isinstance(node, tuple | list):
        return [dump(item, positions=positions) for item in node]
    return node
