"""Bound names have spans (issue 36): the parser records where a loop's variables, a
`catch as` name, a block's and a `reduce`'s parameters and a `use` alias are written
(`bound_at`), and the LSP defines them there, with no search over the source lines."""

from __future__ import annotations

from prose.lsp.symbols import build_index
from prose.syntax import nodes as n
from prose.syntax.dump import dump
from prose.syntax.parser import parse_program
from prose.syntax.walk import find_all

SOURCE = """\
use "std/evals/inspector" as insp
block attempt(task, hint):
  return task
for d, i in [1, 2]:
  repeat 2 as r:
    loop until r (max: 3) as k:
      break
try:
  throw "x"
# a comment that says catch as err
catch as err:
  let y = err
let t = [1] | reduce(acc, x):
  return acc
loop for each q in [1] (max: 2):
  break
return { result: t }
"""

EXPECTED = {  # name -> (line, column, kind)
    "insp": (1, 30, "alias"), "task": (2, 15, "block parameter"),
    "hint": (2, 21, "block parameter"), "d": (4, 5, "loop variable"),
    "i": (4, 8, "loop variable"), "r": (5, 15, "loop variable"),
    "k": (6, 30, "loop variable"), "err": (11, 10, "catch variable"),
    "acc": (13, 22, "loop variable"), "x": (13, 27, "loop variable"),
    "q": (15, 15, "loop variable"),
}


def test_the_parser_records_where_each_bound_name_is_written() -> None:
    program = parse_program(SOURCE, "p.prose")
    lines = SOURCE.split("\n")
    written = {}
    for cls in (n.Use, n.BlockDef, n.For, n.Repeat, n.Loop, n.Try, n.Stage):
        for node in find_all(program, cls):
            for span in node.bound_at:
                name = lines[span.line - 1][span.column - 1:span.end_column - 1]
                written[name] = (span.line, span.column)
    assert written == {name: at[:2] for name, at in EXPECTED.items()}
    assert "bound_at" not in str(dump(program))  # positions are no part of the AST's value


def test_the_lsp_defines_bound_names_where_the_parser_saw_them() -> None:
    index = build_index(SOURCE, None, parse_program(SOURCE, "p.prose"))
    for name, (line, column, kind) in EXPECTED.items():
        found = [o for o in index.occurrences if o.name == name and o.definition]
        assert [(o.span.line, o.span.column, o.kind) for o in found] == [(line, column, kind)], name
