"""The pattern's data-flow graph, as `prose explain --mermaid` draws it, laid out as inline SVG.

The edges are explain's: (source slot or `inputs`, target slot, input name)
for every input of every call site. A run adds a count to each: how many
values crossed it, that is the calls through that call site whose recorded
provenance (the runtime's, in the trace) carried the source's output; for
an edge from the parameters and config, every call through the site.

The layout is a plain layered one (no mermaid.js, no network): a node's
column is its distance from `inputs` along the edges, first reached first;
an edge back to an earlier column (a loop: the reviewers' findings going
back to the worker) is drawn as an arc below the nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

from prose.check.explain import Explanation

if TYPE_CHECKING:
    from prose.pattern_file import PatternFile

INPUTS = "inputs"
RESULT = "result"
_NODE_W, _NODE_H, _COL_GAP, _ROW_GAP, _TOP = 160, 40, 150, 40, 40


@dataclass(frozen=True)
class FlowEdge:
    """Values of one input name going from `source` to `target`, `count` times in the run."""

    source: str
    target: str
    name: str
    count: int


@dataclass(frozen=True)
class FlowGraph:
    """The graph of a pattern with the run's counts; `mermaid` is explain's text for it."""

    nodes: tuple[str, ...]
    edges: tuple[FlowEdge, ...]
    returns: tuple[str, ...]
    mermaid: str


def explain_pattern(pattern: PatternFile) -> Explanation | None:
    """`prose explain`'s explanation of a pattern file, or None when it does not lint far
    enough. The file's lint is the one kept on it (`prose.check.lint.lint_pattern`): after
    `prose run`'s lint gate, the graph analyses nothing again."""
    from prose.check import lint_pattern
    from prose.check.explain import explain

    result = lint_pattern(pattern)
    return explain(result) if result.context is not None else None


def flow_graph(explanation: Explanation, calls: Iterable[Mapping[str, Any]]) -> FlowGraph:
    """Explain's edges, each with how many values crossed it in the run of `calls`."""
    from prose.check.explain import mermaid

    sites: dict[tuple[int, int], list[tuple[str, str, str]]] = {}
    for call in explanation.calls:
        for entry in call.inputs:
            for source in entry.provenance or [INPUTS]:
                sites.setdefault((call.line, call.column), []).extend(
                    (source, slot, entry.name) for slot in call.slots)
    counts: dict[tuple[str, str, str], int] = {edge: 0 for site in sites.values() for edge in site}
    for event in calls:
        if str(event.get("path") or "").split("/", 1)[0].endswith(">"):
            continue  # a nested pattern's call: its sites are in another file
        carried = set(event.get("provenance") or ())
        slot = str(event.get("slot", ""))
        for source, target, name in sites.get((int(event.get("line") or 0),
                                               int(event.get("column") or 0)), ()):
            if target == slot and (source == INPUTS or source in carried):
                counts[(source, target, name)] += 1
    # The slots in the order the program first calls them, so the layout reads like the program.
    slots = list(dict.fromkeys(slot for call in explanation.calls for slot in call.slots))
    edges = tuple(FlowEdge(s, t, n, c) for (s, t, n), c in sorted(counts.items()))
    return FlowGraph((INPUTS, *slots, RESULT), edges, tuple(explanation.returns),
                     mermaid(explanation))


def _columns(graph: FlowGraph) -> dict[str, int]:
    """Each node's column: the longest path from `inputs` once the edges that close a loop are
    set aside (found depth-first, visiting slots in the order the program first calls them)."""
    rank = {node: i for i, node in enumerate(graph.nodes)}
    targets: dict[str, list[str]] = {}
    for edge in graph.edges:
        targets.setdefault(edge.source, []).append(edge.target)
    forward: set[tuple[str, str]] = set()
    state: dict[str, int] = {}  # 1 on the stack, 2 done

    def visit(node: str) -> None:
        state[node] = 1
        for target in sorted(set(targets.get(node, ())), key=lambda t: rank.get(t, 0)):
            if state.get(target) != 1:
                forward.add((node, target))
            if target not in state:
                visit(target)
        state[node] = 2

    for node in graph.nodes:
        if node not in state:
            visit(node)
    column = dict.fromkeys(graph.nodes, 0)
    for _ in graph.nodes:  # longest path over the forward edges (a DAG): at most one pass a node
        for source, target in forward:
            column[target] = max(column[target], column[source] + 1)
    column[INPUTS] = 0
    column[RESULT] = max(column[n] for n in graph.nodes if n != RESULT) + 1
    return column


def render_svg(graph: FlowGraph) -> str:
    """The graph as an inline SVG element: nodes in columns, one arrow per (source, target) pair
    labelled with its input names and the number of values that crossed it."""
    column = _columns(graph)
    rows: dict[int, list[str]] = {}
    for node in graph.nodes:
        rows.setdefault(column[node], []).append(node)
    height = max(len(items) for items in rows.values()) * (_NODE_H + _ROW_GAP) + 90 + _TOP
    width = (max(rows) + 1) * (_NODE_W + _COL_GAP)
    place: dict[str, tuple[float, float]] = {}
    for col, items in rows.items():
        top = (height - 90 - len(items) * (_NODE_H + _ROW_GAP) + _ROW_GAP) / 2 + _TOP
        for i, node in enumerate(items):
            place[node] = (20 + col * (_NODE_W + _COL_GAP), top + i * (_NODE_H + _ROW_GAP))
    pairs: dict[tuple[str, str], list[FlowEdge]] = {}
    for edge in graph.edges:
        pairs.setdefault((edge.source, edge.target), []).append(edge)
    out = [f'<svg class="flow" role="img" aria-label="data flow between slots" '
           f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           'xmlns="http://www.w3.org/2000/svg">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>'
           '</defs>']
    over = 0  # edges drawn over the top get their labels one under another
    for (source, target), edges in sorted(pairs.items()):
        out.append(_edge(place[source], place[target], edges, height, over))
        over += place[target][0] - place[source][0] > _NODE_W + _COL_GAP + 1
    for slot in graph.returns:
        if slot in place:
            out.append(_edge(place[slot], place[RESULT], [], height, over))
    for node, (x, y) in place.items():
        shape = "terminal" if node in (INPUTS, RESULT) else "slot"
        label = "parameters and config" if node == INPUTS else node
        out.append(f'<g class="node {shape}" data-node="{escape(node)}"><rect x="{x}" y="{y}" '
                   f'width="{_NODE_W}" height="{_NODE_H}" rx="{18 if shape == "terminal" else 6}"/>'
                   f'<text x="{x + _NODE_W / 2}" y="{y + _NODE_H / 2 + 5}">{escape(label)}</text></g>')
    out.append("</svg>")
    return "".join(out)


def _edge(a: tuple[float, float], b: tuple[float, float], edges: list[FlowEdge],
          height: float, over: int = 0) -> str:
    (ax, ay), (bx, by) = a, b
    count = sum(edge.count for edge in edges)
    names = ", ".join(sorted({edge.name for edge in edges}))
    title = f"{names}: {count} value(s) crossed in this run" if edges else "returned"
    if bx > ax:  # forwards: right side to left side
        x1, y1, x2, y2 = ax + _NODE_W, ay + _NODE_H / 2, bx, by + _NODE_H / 2
        bend = (x2 - x1) / 2
        if x2 - x1 > _COL_GAP + 1:  # past a column: over the top, clear of the nodes between
            path = f"M{x1},{y1} C{x1 + bend / 2},8 {x2 - bend / 2},8 {x2},{y2}"
            lx, ly = (x1 + x2) / 2, 14.0 + 13 * over
        else:
            path = f"M{x1},{y1} C{x1 + bend},{y1} {x2 - bend},{y2} {x2},{y2}"
            lx, ly = x2 - _COL_GAP / 2, y2 - 8
    else:  # backwards or within a column: an arc below
        x1, y1, x2, y2 = ax + _NODE_W / 2, ay + _NODE_H, bx + _NODE_W / 2 + 12, by + _NODE_H
        low = height - 18
        path = f"M{x1},{y1} C{x1},{low} {x2},{low} {x2},{y2}"
        lx, ly = (x1 + x2) / 2, low - 14
    klass = "edge" if not edges or count else "edge unused"
    label = (f'<text class="edge-label" x="{lx}" y="{ly}">{escape(names)} ×{count}</text>'
             if edges else "")
    return (f'<g class="{klass}" data-count="{count}"><title>{escape(title)}</title>'
            f'<path d="{path}" marker-end="url(#arrow)"/>{label}</g>')
