"""The `sarif` format: a SARIF 2.1.0 log that GitHub code scanning accepts.

One run; the driver lists a rule for every code found (described from the
optional `RuleInfo` table); each result has one location and, for the
diagnostic's secondary labels, related locations. Columns are counted in
Unicode code points, as the parser counts them, and said so with
``columnKind``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import prose
from prose.diagnostics.model import Diagnostic, Severity
from prose.diagnostics.summary import Summary, ordered
from prose.source import Span

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
TOOL_NAME = "prose"
INFORMATION_URI = "https://pypi.org/project/prose-patterns/"

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# Characters left as they are in a relative URI path (RFC 3986 pchar less ":").
_URI_SAFE = "/-._~!$&'()*+,;=@"


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """What the SARIF log says about a rule code.

    `name` is a short identifier (``used-before-assigned``), `summary` one
    sentence, `help_uri` where the rule is documented, and `description` the
    longer documentation (the rule's docstring), used for the full
    description and help text when given.
    """

    name: str
    summary: str
    help_uri: str | None = None
    description: str | None = None


def render_sarif(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, str],
    summary: Summary,
    *,
    rules: Mapping[str, RuleInfo] | None = None,
) -> str:
    """A SARIF 2.1.0 log (JSON) of `diagnostics`.

    `rules` describes codes by name, summary and documentation link; a code
    not in it is described by its code and category. `sources` and `summary`
    are not used. Paths become relative URIs with forward slashes (an
    absolute path under the working directory is made relative to it).
    """
    found = ordered(diagnostics)
    table = rules or {}
    codes = sorted({d.code for d in found})
    index = {code: position for position, code in enumerate(codes)}
    descriptors = [_rule(code, [d for d in found if d.code == code], table) for code in codes]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": prose.__version__,
                        "semanticVersion": prose.__version__,
                        "informationUri": INFORMATION_URI,
                        "rules": descriptors,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index[d.code]) for d in found],
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _rule(code: str, found: list[Diagnostic], table: Mapping[str, RuleInfo]) -> dict[str, object]:
    """The reporting descriptor of `code`; GitHub wants the three texts present."""
    info = table.get(code)
    category = found[0].category
    summary = info.summary if info else f"prose {category} check {code}"
    full = info.description if info and info.description else summary
    level = _LEVELS[max((d.severity for d in found), key=lambda severity: severity.rank)]
    rule: dict[str, object] = {
        "id": code,
        "name": info.name if info else code,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": full},
        "help": {"text": full},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": [category]},
    }
    if info and info.help_uri:
        rule["helpUri"] = info.help_uri
    return rule


def _result(diagnostic: Diagnostic, rule_index: int) -> dict[str, object]:
    result: dict[str, object] = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index,
        "level": _LEVELS[diagnostic.severity],
        "message": {"text": diagnostic.message},
        "locations": [_location(diagnostic.span)],
    }
    if diagnostic.secondary:
        result["relatedLocations"] = [
            {"id": number, **_location(label.span), "message": {"text": label.message}}
            for number, label in enumerate(diagnostic.secondary, start=1)
        ]
    if diagnostic.help:
        result["properties"] = {"help": diagnostic.help}
    return result


def _location(span: Span) -> dict[str, object]:
    end_line, end_column = span.end_line, span.end_column
    if (end_line, end_column) <= (span.line, span.column):
        end_line, end_column = span.line, span.column + 1
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(span.file)},
            "region": {
                "startLine": span.line,
                "startColumn": span.column,
                "endLine": end_line,
                "endColumn": end_column,
            },
        }
    }


def artifact_uri(path: str) -> str:
    """`path` as a SARIF artifact URI: relative, forward slashes, percent-encoded.

    An absolute path under the working directory is made relative to it; one
    elsewhere becomes a ``file://`` URI.
    """
    posix = path.replace("\\", "/")
    if os.path.isabs(path):
        try:
            posix = Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            return Path(path).resolve().as_uri()
    while posix.startswith("./"):
        posix = posix[2:]
    return quote(posix, safe=_URI_SAFE)
