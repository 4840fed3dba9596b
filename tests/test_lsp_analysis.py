"""The language server's pieces in process: positions, the quick pass, the symbol index."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from prose.check.registry import all_rules
from prose.check.rule import CheckContext
from prose.lsp.diagnostics import convert, shift
from prose.lsp.documents import DEFERRED, analyse
from prose.lsp.positions import LineIndex, char_column, utf16_column
from prose.source import Span

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = sorted((ROOT / "patterns").glob("*.prose.md"))


def test_columns_count_utf16_code_units() -> None:
    line = 'x = "😀é {name}"'
    assert utf16_column(line, 5) == 5  # before the emoji
    assert utf16_column(line, 6) == 7  # the emoji is two code units
    assert char_column(line, 7) == 6
    assert char_column(line, 99) == len(line)
    index = LineIndex("a\n" + line + "\n")
    assert index.range(Span("f", 2, 9, 2, 15)) == lsp.Range(
        start=lsp.Position(line=1, character=9), end=lsp.Position(line=1, character=15))
    assert index.point(lsp.Position(line=1, character=9)) == (2, 9)


def test_a_finding_after_an_emoji_is_placed_in_utf16() -> None:
    text = (ROOT / "patterns" / "proposer-adversary.prose.md").read_text(encoding="utf-8")
    text = text.replace("let proposal = call proposer\n  task_brief: task_brief\n",
                        'let proposal = call proposer\n  task_brief: "😀 {nowhere}"\n')
    analysis = analyse("file:///tmp/emoji.prose.md", text, 1)
    found = convert(analysis.result.diagnostics, analysis.uri, analysis.path, analysis.lines)
    undefined = next(d for d in found if d.code == "PN101")
    line = text.split("\n")[undefined.range.start.line]
    assert line == '  task_brief: "😀 {nowhere}"'
    # `{` is character 17 (0-based 16); the emoji adds one code unit before it.
    assert undefined.range.start.character == line.index("{") + 1


@pytest.mark.parametrize("path", PATTERNS, ids=lambda p: p.name)
def test_only_the_deferred_rules_need_the_provenance_analysis(path: Path) -> None:
    """The quick pass skips `DEFERRED`; every other rule must run without the flow analysis."""

    class NoFlow(CheckContext):
        @property
        def flow(self):  # type: ignore[no-untyped-def]
            raise AssertionError("this rule reads the provenance analysis: add it to DEFERRED")

        @property
        def violations(self):  # type: ignore[no-untyped-def]
            raise AssertionError("this rule reads the policy's verdicts: add it to DEFERRED")

    analysis = analyse(path.as_uri(), path.read_text(encoding="utf-8"), 1, complete=False)
    context = analysis.result.context
    assert context is not None
    quick = NoFlow(context.decl, context.program, context.model, context.spec)
    for rule in all_rules():
        if not rule.code.startswith(DEFERRED):
            list(rule.check(quick))


def test_the_quick_pass_finds_all_but_the_deferred_rules() -> None:
    path = ROOT / "patterns" / "dialectic.prose.md"
    text = path.read_text(encoding="utf-8")
    quick = analyse(path.as_uri(), text, 1, complete=False).result.diagnostics
    complete = analyse(path.as_uri(), text, 1).result.diagnostics
    assert quick == [d for d in complete if not d.code.startswith(DEFERRED)]


def test_diagnostics_move_with_the_lines_of_an_edit() -> None:
    def at(line: int) -> lsp.Diagnostic:
        return lsp.Diagnostic(range=lsp.Range(start=lsp.Position(line=line, character=0),
                                              end=lsp.Position(line=line, character=3)),
                              message=str(line))

    edit = lsp.TextDocumentContentChangePartial(
        range=lsp.Range(start=lsp.Position(line=5, character=0),
                        end=lsp.Position(line=5, character=2)),
        text="a\nb\n")
    moved = shift([at(2), at(5), at(9)], [edit])
    assert [(d.message, d.range.start.line) for d in moved] == [("2", 2), ("9", 11)]
    assert shift([at(2)], [lsp.TextDocumentContentChangeWholeDocument(text="")]) == []


def test_the_index_knows_every_kind_of_name() -> None:
    text = (ROOT / "patterns" / "proposer-adversary.prose.md").read_text(encoding="utf-8")
    program = '''```prose
use "./other.prose.md" as helper
block ask(brief, extra):
  let answer = call proposer
    task_brief: brief
  return answer
for item, position in [1, 2]:
  do ask(task_brief, item)
try:
  let proposal = call proposer
    task_brief: task_brief
catch as err:
  throw err
let attack = call adversary
  task_brief: "{task_brief}"
  proposal: proposal
return { result: { proposal: proposal, attack: attack } }
'''
    start, end = text.index("```prose"), text.index("```\n\n### Notes")
    text = text[:start] + program + text[end:]
    index = analyse("file:///tmp/kinds.prose.md", text, 1, complete=False).index
    kinds = {key: kind for key, kind in index.kinds.items()}
    assert kinds["helper"] == "alias"
    assert kinds["ask"] == "block"
    assert kinds["brief@" + str(_line(text, "block ask") + 1)] == "block parameter"
    assert kinds["item"] == "loop variable"
    assert kinds["position"] == "loop variable"
    assert kinds["err"] == "catch variable"
    assert kinds["proposer"] == "slot"
    assert kinds["task_brief"] == "parameter"
    err = [(o.span.line, o.span.column, o.definition) for o in index.of("err")]
    assert err == [(_line(text, "catch as err") + 1, 10, True), (_line(text, "throw err") + 1, 9, False)]
    ask = [(o.span.line, o.definition) for o in index.of("ask")]
    assert ask == [(_line(text, "block ask") + 1, True), (_line(text, "do ask") + 1, False)]
    interpolated = [o for o in index.of("task_brief") if o.span.line == _line(text, '"{task_brief}"') + 1]
    assert [(o.span.column, o.span.end_column) for o in interpolated] == [(17, 27)]


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n")) if needle in line)


@pytest.mark.parametrize("path", PATTERNS, ids=lambda p: p.name)
def test_parsing_piece_by_piece_gives_the_program_the_parser_gives(path: Path) -> None:
    from prose.lsp.incremental import ProgramCache
    from prose.pattern_file import pattern_from_text
    from prose.syntax.dump import dump

    text = path.read_text(encoding="utf-8")
    cache = ProgramCache()
    for step in range(4):  # the first parse, then lines inserted above pieces already parsed
        whole = pattern_from_text(text, str(path)).program
        pieces = cache.pattern(text, str(path)).program
        assert whole is not None and pieces is not None
        assert dump(pieces) == dump(whole)
        assert pieces.span == whole.span
        assert [(c.text, c.span) for c in pieces.comments] == [(c.text, c.span) for c in whole.comments]
        fence = text.index("```prose\n") + len("```prose\n")
        second = text.index("\n", text.index("\n", fence) + 1) + 1
        text = text[:second] + "\n" * step + text[second:] if step % 2 else \
            text[:fence] + "# a comment\n" + text[fence:]
