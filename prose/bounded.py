"""YAML and JSON read within bounds: every YAML and JSON text prose reads goes through here.

A YAML text is composed into nodes (line and column kept for diagnostics) by
a composer that refuses, before any value is built:

- a text longer than `MAX_TEXT` characters (a file: bytes, checked before it is read whole);
- nesting deeper than `MAX_DEPTH` mappings and sequences, aliases expanded;
- more than `MAX_ALIASES` alias uses in the document as expanded (an alias
  inside an anchor counts each time that anchor is used), or aliases adding
  more than `MAX_ALIAS_NODES` nodes: an "alias bomb" fits in a few lines and
  expands to billions of nodes for whatever walks the values later;
- an alias inside the node it names (`a: &a [*a]`), a value that contains itself.

The values are built only after that, by PyYAML's safe constructor. A JSON
text (`load_json`) is refused past `MAX_DEPTH` levels of nesting.

Every refusal, and every YAML or JSON syntax error, is one `ProseSyntaxError`
naming the file, line and column (exit 1). A file that cannot be read is an
`InputReadError` (exit 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from prose.errors import ProseSyntaxError
from prose.files import read_text
from prose.source import Span

MAX_TEXT = 1_000_000  # characters of a YAML text; bytes of a YAML or JSON input file
MAX_ROW_CHARS = 10_000_000  # characters of one JSONL row of `prose batch`
MAX_INPUT_TEXT = 10_000_000  # bytes of a text input file (`--input-file KEY=notes.txt`)
MAX_STREAM_BYTES = 100_000_000  # bytes of rows read from standard input or a FIFO
MAX_TRACE_BYTES = 1 << 30  # bytes of a trace file a reader reads whole (1 GiB)
MAX_DEPTH = 100  # nested mappings and sequences (YAML, aliases expanded; JSON)
MAX_ALIASES = 1_000  # alias uses in the expanded document
MAX_ALIAS_NODES = 100_000  # nodes the aliases add to the expanded document

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when present


@dataclass(frozen=True, slots=True)
class YamlDocument:
    """A parsed YAML text: its root node (None when empty) and its value."""

    node: yaml.Node | None
    value: Any


class BoundExceeded(ProseSyntaxError):
    """A YAML or JSON text past one of the bounds above (a ProseSyntaxError: exit 1)."""


@dataclass(slots=True)
class _Size:
    """What a node expands to: its height in collections, its nodes, the aliases in it."""

    height: int = 0
    nodes: int = 1
    aliases: int = 0


class _Refusal(Exception):
    """Raised inside the composer; becomes a ProseSyntaxError naming the file."""

    def __init__(self, mark: Any, message: str, *, bound: bool = True) -> None:
        super().__init__(message)
        self.mark = mark
        self.message = message
        self.bound = bound  # past a bound (BoundExceeded), else not valid YAML


class _Composer:
    """PyYAML's composer (yaml/composer.py), counting what the document expands to."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.anchors: dict[str, yaml.Node] = {}
        self.sizes: dict[int, _Size] = {}  # id(anchored node) -> its size, once composed
        self.open: set[int] = set()  # ids of the anchored collections being composed
        self.depth = 0
        self.aliases = 0
        self.alias_nodes = 0

    def single_node(self) -> yaml.Node | None:
        loader = self.loader
        loader.get_event()  # stream start
        node: yaml.Node | None = None
        if not loader.check_event(yaml.StreamEndEvent):
            loader.get_event()  # document start
            node = self.node(None, None)[0]
            loader.get_event()  # document end
        if not loader.check_event(yaml.StreamEndEvent):
            event = loader.get_event()
            raise _Refusal(
                event.start_mark, "not valid YAML: expected one document, found another", bound=False
            )
        loader.get_event()  # stream end
        return node

    def node(self, parent: yaml.Node | None, index: Any) -> tuple[yaml.Node, _Size]:
        loader = self.loader
        if loader.check_event(yaml.AliasEvent):
            return self.alias(loader.get_event())
        event = loader.peek_event()
        anchor = event.anchor
        if anchor is not None and anchor in self.anchors:
            raise _Refusal(
                event.start_mark, f"not valid YAML: the anchor `&{anchor}` is defined twice", bound=False
            )
        loader.descend_resolver(parent, index)
        if loader.check_event(yaml.ScalarEvent):
            event = loader.get_event()
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
            node: yaml.Node = yaml.ScalarNode(
                tag, event.value, event.start_mark, event.end_mark, style=event.style
            )
            size = _Size()
            if anchor is not None:
                self.anchors[anchor] = node
        else:
            node, size = self.collection(anchor)
        loader.ascend_resolver()
        if anchor is not None:
            self.sizes[id(node)] = size
        return node, size

    def collection(self, anchor: str | None) -> tuple[yaml.Node, _Size]:
        loader = self.loader
        start = loader.get_event()
        mapping = isinstance(start, yaml.MappingStartEvent)
        kind = yaml.MappingNode if mapping else yaml.SequenceNode
        tag = start.tag
        if tag is None or tag == "!":
            tag = loader.resolve(kind, None, start.implicit)
        node = kind(tag, [], start.start_mark, None, flow_style=start.flow_style)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Refusal(start.start_mark, f"nested deeper than {MAX_DEPTH} levels")
        if anchor is not None:
            self.anchors[anchor] = node
            self.open.add(id(node))
        size = _Size(height=1)
        end = yaml.MappingEndEvent if mapping else yaml.SequenceEndEvent
        index = 0
        while not loader.check_event(end):
            if mapping:
                key, key_size = self.node(node, None)
                value, value_size = self.node(node, key)
                node.value.append((key, value))
                parts: tuple[_Size, ...] = (key_size, value_size)
            else:
                item, item_size = self.node(node, index)
                node.value.append(item)
                index += 1
                parts = (item_size,)
            for part in parts:
                size.height = max(size.height, part.height + 1)
                size.nodes += part.nodes
                size.aliases += part.aliases
        node.end_mark = loader.get_event().end_mark
        self.depth -= 1
        self.open.discard(id(node))
        return node, size

    def alias(self, event: Any) -> tuple[yaml.Node, _Size]:
        name = event.anchor
        if name not in self.anchors:
            raise _Refusal(
                event.start_mark, f"not valid YAML: the alias `*{name}` names no anchor before it",
                bound=False,
            )
        node = self.anchors[name]
        if id(node) in self.open:
            raise _Refusal(
                event.start_mark, f"the alias `*{name}` is inside the node it names (it contains itself)"
            )
        target = self.sizes[id(node)]
        self.aliases += 1 + target.aliases
        self.alias_nodes += target.nodes
        if self.aliases > MAX_ALIASES:
            raise _Refusal(
                event.start_mark,
                f"the aliases expand more than {MAX_ALIASES:,} times (`*{name}` here)",
            )
        if self.alias_nodes > MAX_ALIAS_NODES:
            raise _Refusal(
                event.start_mark,
                f"the aliases add more than {MAX_ALIAS_NODES:,} nodes (`*{name}` here)",
            )
        if self.depth + target.height > MAX_DEPTH:
            raise _Refusal(
                event.start_mark, f"`*{name}` here nests the document deeper than {MAX_DEPTH} levels"
            )
        return node, _Size(target.height, target.nodes, target.aliases + 1)


def parse_yaml(text: str, file: str, *, first_line: int = 1) -> YamlDocument:
    """The nodes and value of one YAML document; `first_line` is the file line the text starts on.

    Raises ProseSyntaxError (file, line, column) for invalid YAML and past a bound.
    """
    if len(text) > MAX_TEXT:
        where = _position(text, MAX_TEXT)
        message = f"the YAML text is longer than {MAX_TEXT:,} characters"
        raise _error(file, first_line, where, message, BoundExceeded)
    loader = _Loader(text)
    building = _track_construction(loader)
    try:
        node = _Composer(loader).single_node()
        value = loader.construct_document(node) if node is not None else None
    except _Refusal as refusal:
        kind = BoundExceeded if refusal.bound else ProseSyntaxError
        raise _error(file, first_line, _mark(refusal.mark), refusal.message, kind) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = (error.problem or error.context or "invalid YAML").strip()
        raise _error(file, first_line, _mark(mark), f"not valid YAML: {problem}") from None
    except RecursionError:  # only the pure-Python parser: libyaml stops at 1,000 levels
        message = f"nested deeper than {MAX_DEPTH} levels"
        raise _error(file, first_line, (1, 1), message, BoundExceeded) from None
    except (yaml.YAMLError, TypeError, ValueError, OverflowError) as error:
        # A value its constructor refuses (a date out of range, an integer of 5,000 digits).
        problem = str(error).split(";")[0].splitlines()[0] if str(error) else "invalid YAML"
        where = _mark(building[-1].start_mark) if building else (1, 1)
        raise _error(file, first_line, where, f"not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    return YamlDocument(node, value)


def _track_construction(loader: Any) -> list[yaml.Node]:
    """The nodes whose values are being built, innermost last (where a refused value is)."""
    building: list[yaml.Node] = []
    construct = loader.construct_object

    def construct_object(node: yaml.Node, deep: bool = False) -> Any:
        building.append(node)
        value = construct(node, deep=deep)
        building.pop()
        return value

    loader.construct_object = construct_object
    return building


def load_yaml(text: str, file: str) -> Any:
    """The value of a YAML text (None when empty); raises ProseSyntaxError like `parse_yaml`."""
    return parse_yaml(text, file).value


def read_yaml(path: str | Path) -> YamlDocument:
    """Read and parse a YAML file (an empty one has no node and the value None).

    Raises InputReadError when it cannot be read, ProseSyntaxError when it is
    longer than `MAX_TEXT` bytes, not UTF-8, or not valid YAML.
    """
    return parse_yaml(read_text(path, limit=MAX_TEXT, empty_ok=True), str(path))


def key_lines(node: yaml.Node | None) -> dict[str, int]:
    """The 1-based line of each scalar key of a mapping node ({} for any other node)."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        str(key.value): key.start_mark.line + 1
        for key, _ in node.value
        if isinstance(key, yaml.ScalarNode)
    }


def load_json(text: str, file: str) -> Any:
    """The value of a JSON text. Raises ProseSyntaxError (file, line, column) when it is
    not JSON, BoundExceeded when it nests deeper than `MAX_DEPTH` levels."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise _error(file, 1, (error.lineno, error.colno), f"not valid JSON: {error.msg}") from None
    except ValueError as error:  # an integer longer than Python converts (4,300 digits)
        problem = str(error).split(";")[0]
        raise _error(file, 1, (1, 1), f"not valid JSON: {problem}", BoundExceeded) from None
    except RecursionError:
        value = None  # deeper than the interpreter's recursion limit, so deeper than ours
    else:
        if nesting_depth(value) <= MAX_DEPTH:
            return value
    where = _position(text, _too_deep_at(text))
    message = f"the JSON is nested deeper than {MAX_DEPTH} levels"
    raise _error(file, 1, where, message, BoundExceeded)


class JSONBoundError(ValueError):
    """A JSON text past a bound: nested deeper than `MAX_DEPTH`, or an integer longer than
    Python converts (4,300 digits). Its message says which, without a position."""


def loads_bounded(text: str | bytes) -> Any:
    """`json.loads(text)` within the bounds `load_json` keeps, for readers that report
    their own position (a trace's line, a batch row, a model's reply).

    Raises `json.JSONDecodeError` when the text is not JSON, `JSONBoundError` (a
    `ValueError` too) when it is past a bound; never `RecursionError`.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as error:  # an integer longer than Python converts
        raise JSONBoundError(str(error).split(";")[0].strip()) from None
    except RecursionError:  # deeper than the interpreter's limit, so deeper than ours
        raise JSONBoundError(f"nested deeper than {MAX_DEPTH} levels") from None
    if nesting_depth(value) > MAX_DEPTH:
        raise JSONBoundError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _too_deep_at(text: str) -> int:
    """The offset of the bracket that opens level `MAX_DEPTH + 1` of a JSON text (0 if none)."""
    depth, quoted, escaped = 0, False, False
    for offset, char in enumerate(text):
        if quoted:
            escaped, quoted = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return offset
        elif char in "]}":
            depth -= 1
    return 0


def nesting_depth(value: Any) -> int:
    """How many lists and mappings deep `value` goes (0 for a scalar); walks without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > MAX_DEPTH:
            return depth  # deep enough to refuse; the rest need not be walked
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest


def _mark(mark: Any) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _position(data: str | bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column of `data[offset]`."""
    newline: Any = b"\n" if isinstance(data, bytes) else "\n"
    line = data.count(newline, 0, offset) + 1
    return line, offset - (data.rfind(newline, 0, offset) + 1) + 1


def _error(
    file: str,
    first_line: int,
    where: tuple[int, int],
    message: str,
    kind: type[ProseSyntaxError] = ProseSyntaxError,
) -> ProseSyntaxError:
    line, column = where
    return kind.at(Span.point(file, line + first_line - 1, column), message)
