"""One list of keywords (issue 36, item 5): the grammar's, read by `prose.syntax.keywords`;
the editor server completes exactly those, and the VS Code grammar highlights each."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prose.lsp.completion import KEYWORDS
from prose.syntax.keywords import grammar_keywords

ROOT = Path(__file__).resolve().parent.parent
VSCODE = ROOT / "editors" / "vscode" / "syntaxes" / "prose.codeblock.tmLanguage.json"


def test_keywords_come_from_the_grammar() -> None:
    words = grammar_keywords()
    assert len(words) == len(set(words))
    # the words completion was missing before it read the grammar
    for word in ("agent", "session", "resume", "each", "map", "pmap", "filter", "reduce",
                 "shape", "max", "absent", "present"):
        assert word in words
    assert "name" not in words and all(re.fullmatch(r"[a-z]+", word) for word in words)


def test_completion_offers_the_grammar_s_keywords() -> None:
    assert tuple(KEYWORDS) == grammar_keywords()


def test_the_vscode_grammar_highlights_every_keyword() -> None:
    text = VSCODE.read_text(encoding="utf-8")
    json.loads(text)  # still valid JSON
    highlighted = {word for group in re.findall(r"\\\\b\(([a-z|]+)\)", text)
                   for word in group.split("|")}
    assert sorted(set(grammar_keywords()) - highlighted) == []
