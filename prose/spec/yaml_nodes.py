"""YAML with positions: compose once, keep the node tree for lines, construct the values.

Used for the frontmatter of pattern files and for instance files. Uses the
C loader when PyYAML has one (faster), else the pure-Python safe loader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from prose.source import Span

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class YamlDocument:
    """A parsed YAML text: its root node (None when empty) and constructed value."""

    node: yaml.Node | None
    value: Any


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """Why a YAML text could not be read, at a 1-based line and column of that text."""

    line: int
    column: int
    message: str


def compose(text: str) -> YamlDocument | YamlProblem:
    """Parse `text` (one document) into nodes and values; never raises for bad YAML."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        value = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = (error.problem or error.context or "invalid YAML").strip()
        return YamlProblem(line, column, problem)
    except (yaml.YAMLError, TypeError, ValueError) as error:
        return YamlProblem(1, 1, str(error).splitlines()[0] if str(error) else "invalid YAML")
    finally:
        loader.dispose()
    return YamlDocument(node, value)


def node_span(node: yaml.Node, file: str, line_offset: int = 0) -> Span:
    """The span of `node`; `line_offset` is the number of file lines before the YAML text.

    A block value's end mark sits at the start of the next line; the span then
    ends at the end of the node's first line instead.
    """
    start, end = node.start_mark, node.end_mark
    line = start.line + 1 + line_offset
    end_line = end.line + 1 + line_offset
    end_column = end.column + 1
    if end_line > line and end.column == 0:
        end_line, end_column = line, start.column + 2
    return Span(file, line, start.column + 1, end_line, end_column)


def mapping_items(node: yaml.Node | None) -> list[tuple[yaml.ScalarNode, yaml.Node]]:
    """The `(key, value)` node pairs of a mapping node with scalar keys; [] otherwise."""
    if not isinstance(node, yaml.MappingNode):
        return []
    return [(key, value) for key, value in node.value if isinstance(key, yaml.ScalarNode)]


def key_nodes(node: yaml.Node | None) -> dict[str, tuple[yaml.ScalarNode, yaml.Node]]:
    """A mapping node's pairs by key text (the last occurrence wins, as in the values)."""
    out: dict[str, tuple[yaml.ScalarNode, yaml.Node]] = {}
    for key, value in mapping_items(node):
        out[str(key.value)] = (key, value)
    return out
