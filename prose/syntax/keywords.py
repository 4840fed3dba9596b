"""The language's keywords, read from the grammar (`grammar/prose.lark`), not listed again.

A keyword is a terminal whose pattern is one lowercase word (`LET: "let"`). The editor
server completes them (`prose.lsp.completion`), and a test holds the VS Code grammar
(editors/vscode/syntaxes) to the same list. The contextual lexer reserves a keyword only
where the grammar expects it, so each is still a valid name elsewhere.
"""

from __future__ import annotations

import re
from functools import lru_cache

from prose.resources import grammar_file

_KEYWORD = re.compile(r'^([A-Z_]+):\s*"([a-z]+)"\s*$', re.M)


@lru_cache(maxsize=1)
def grammar_keywords() -> tuple[str, ...]:
    """Every keyword of the grammar, in the order the grammar declares them."""
    text = grammar_file().read_text(encoding="utf-8")
    return tuple(dict.fromkeys(match.group(2) for match in _KEYWORD.finditer(text)))
