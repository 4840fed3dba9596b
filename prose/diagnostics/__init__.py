"""Diagnostics: what the linter and the parser report, and how it is rendered."""

from prose.diagnostics.convert import SYNTAX_CODE, from_syntax_error
from prose.diagnostics.model import CATEGORIES, Diagnostic, Label, Severity
from prose.diagnostics.render import RENDERERS, Renderer, render
from prose.diagnostics.render_github import render_github
from prose.diagnostics.render_json import render_json
from prose.diagnostics.render_sarif import RuleInfo, render_sarif
from prose.diagnostics.render_text import render_concise, render_full
from prose.diagnostics.summary import Summary

__all__ = [
    "CATEGORIES",
    "RENDERERS",
    "SYNTAX_CODE",
    "Diagnostic",
    "Label",
    "Renderer",
    "RuleInfo",
    "Severity",
    "Summary",
    "from_syntax_error",
    "render",
    "render_concise",
    "render_full",
    "render_github",
    "render_json",
    "render_sarif",
]
