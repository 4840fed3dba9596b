"""Generic tree operations written once (issue 36): `map_spans` moves every position of a
tree (the predicate mover of the builder and the LSP's reuse of moved pieces are it), and
`contains` answers "is there a node of this class" for the flow rules."""

from __future__ import annotations

from prose.lang import flows
from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.parser import parse_program
from prose.syntax.walk import children, contains, find_all, map_spans

SOURCE = """\
let drafts = []
for topic in ["a", "b"]:
  if topic == "a":
    break
  let draft = call writer
    brief: "about {topic}"
  record draft in drafts
let summary = session "summarise"
return { result: drafts }
"""


def _spans(tree: object) -> list[Span]:
    found: list[Span] = []
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, Span):
            found.append(item)
        elif isinstance(item, tuple):
            stack.extend(item)
        elif isinstance(item, n.Node):
            stack.extend(getattr(item, name) for name in item.__dataclass_fields__)
    return found


def test_map_spans_moves_every_position_and_keeps_the_rest() -> None:
    program = parse_program(SOURCE, "p.prose")
    down = map_spans(program, lambda s: Span(s.file, s.line + 3, s.column, s.end_line + 3,
                                             s.end_column))
    before, after = _spans(program), _spans(down)
    assert len(before) == len(after) > 20
    assert all(b.line + 3 == a.line and b.column == a.column for b, a in zip(before, after, strict=True))
    back = map_spans(down, lambda s: Span(s.file, s.line - 3, s.column, s.end_line - 3,
                                          s.end_column))
    assert back == program and _spans(back) == before  # nothing but positions changed
    assert [type(node) for node in find_all(down, n.Node)] == [
        type(node) for node in find_all(program, n.Node)]


def test_contains_looks_into_bodies_and_expressions() -> None:
    program = parse_program(SOURCE, "p.prose")
    loop = next(find_all(program, n.For))
    assert contains(loop, n.Break) and contains(loop.body, n.Break)
    assert not contains(loop, n.Throw)
    arm = next(find_all(program, n.If))
    assert flows.exits_early(arm) and not flows.may_throw(arm)
    assert contains(program.body, n.Interpolation)
    assert list(children(loop))  # the field layout the walk reads
