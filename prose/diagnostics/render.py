"""Every output format by name, and one entry point that passes each its options.

Formats: ``full`` (code frames; colour on a terminal), ``concise``, ``json``,
``sarif`` (SARIF 2.1.0 for code scanning) and ``github`` (workflow commands).
Importing this module imports no third-party package; ``full`` imports rich
only when it prints in colour.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from prose.diagnostics.model import Diagnostic
from prose.diagnostics.render_github import render_github
from prose.diagnostics.render_json import render_json
from prose.diagnostics.render_sarif import RuleInfo, render_sarif
from prose.diagnostics.render_text import render_concise, render_full
from prose.diagnostics.summary import Summary

Renderer = Callable[[Sequence[Diagnostic], Mapping[str, str], Summary], str]

RENDERERS: Final[Mapping[str, Renderer]] = {
    "full": render_full,
    "concise": render_concise,
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
}


def render(
    output_format: str,
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, str],
    summary: Summary,
    *,
    rules: Mapping[str, RuleInfo] | None = None,
    color: bool | None = None,
    verbose: bool = False,
) -> str:
    """Render in the named format; `rules` goes to ``sarif``, `color` and `verbose` (a code
    frame for every note) to ``full``.

    Raises KeyError for a name not in `RENDERERS`.
    """
    if output_format == "full":
        return render_full(diagnostics, sources, summary, color=color, verbose=verbose)
    if output_format == "sarif":
        return render_sarif(diagnostics, sources, summary, rules=rules)
    return RENDERERS[output_format](diagnostics, sources, summary)
