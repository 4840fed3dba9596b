"""Every rule code, the linter's and the spec loader's, with its documentation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RuleEntry:
    code: str
    name: str
    category: str
    severity: str
    summary: str
    doc: str
    compat_only: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "category": self.category,
            "severity": self.severity,
            "summary": self.summary,
            "compat_only": self.compat_only,
            "doc": self.doc,
        }


def catalogue() -> list[RuleEntry]:
    """All rules: PS001 (syntax), the spec codes, then the lint rules, by code."""
    from prose.check.registry import all_rules
    from prose.spec.codes import CATEGORY, SPEC_CODES

    entries = [
        RuleEntry(
            "PS001", "syntax-error", "syntax", "error",
            "The prose block (or the file) is not valid syntax.",
            "## What it does\nReports what the parser could not read, at its line and column, "
            "with what it expected.\n\n## Why is this bad?\nNothing else can be checked or run "
            "until the program parses.\n\n## Example\n```prose\nlet x = \"unclosed\n```\n\n"
            "## Use instead\n```prose\nlet x = \"closed\"\n```",
        )
    ]
    for row in SPEC_CODES:
        entries.append(RuleEntry(row.code, row.name, CATEGORY, row.severity.value, row.summary, row.doc))
    for rule in all_rules():
        doc = rule.documentation()
        summary, _, body = doc.partition("\n")
        entries.append(
            RuleEntry(rule.code, rule.name, rule.category, rule.severity.value, summary.strip(),
                      body.strip(), rule.compat_only)
        )
    return sorted(entries, key=lambda entry: entry.code)


def rule_infos() -> dict[str, Any]:
    """`RuleInfo` records for the SARIF renderer."""
    from prose.diagnostics.render_sarif import RuleInfo

    return {
        entry.code: RuleInfo(name=entry.name, summary=entry.summary, description=entry.doc)
        for entry in catalogue()
    }
