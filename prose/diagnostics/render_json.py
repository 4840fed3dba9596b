"""The `json` format: every diagnostic and the totals, in a stable shape and order."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from prose.diagnostics.model import Diagnostic
from prose.diagnostics.summary import Summary, ordered
from prose.source import Span


def render_json(
    diagnostics: Sequence[Diagnostic], sources: Mapping[str, str], summary: Summary
) -> str:
    """A JSON document: ``{"diagnostics": [...], "summary": {...}}``.

    Each diagnostic has ``path``, ``line``, ``column``, ``end_line``,
    ``end_column``, ``code``, ``severity``, ``category``, ``message``, ``help``
    (null when absent) and ``related`` (its secondary labels, each with a
    position and a ``message``), in that key order. Diagnostics are sorted by
    file and position. `sources` is not used.
    """
    payload = {
        "diagnostics": [_diagnostic(d) for d in ordered(diagnostics)],
        "summary": {
            "files": summary.files,
            "errors": summary.errors,
            "warnings": summary.warnings,
            "infos": summary.infos,
        },
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _diagnostic(diagnostic: Diagnostic) -> dict[str, object]:
    return {
        **_position(diagnostic.span),
        "code": diagnostic.code,
        "severity": diagnostic.severity.value,
        "category": diagnostic.category,
        "message": diagnostic.message,
        "help": diagnostic.help,
        "related": [
            {**_position(label.span), "message": label.message} for label in diagnostic.secondary
        ],
    }


def _position(span: Span) -> dict[str, object]:
    return {
        "path": span.file,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
    }
