"""YAML with positions: the node tree for lines, the values built from it.

Used for the frontmatter of pattern files, instance files and test files.
Parsing is `prose.bounded.parse_yaml` (aliases, nesting and size bounded);
here a problem becomes a `YamlProblem` the loaders turn into a diagnostic.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from prose.bounded import YamlDocument, parse_yaml
from prose.errors import ProseSyntaxError
from prose.source import Span

__all__ = ["YamlDocument", "YamlProblem", "compose", "key_nodes", "mapping_items", "node_span"]


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """Why a YAML text could not be read, at a 1-based line and column of that text."""

    line: int
    column: int
    message: str


def compose(text: str) -> YamlDocument | YamlProblem:
    """Parse `text` (one document) into nodes and values; never raises for bad YAML.

    A text past a bound of `prose.bounded` is a problem like invalid YAML.
    """
    try:
        return parse_yaml(text, "")
    except ProseSyntaxError as error:
        return YamlProblem(error.line, error.column, error.message)


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
