"""Diagnostics: what the linter and the parser report, and how it is rendered."""

from prose.diagnostics.model import CATEGORIES, Diagnostic, Label, Severity

__all__ = ["CATEGORIES", "Diagnostic", "Label", "Severity"]
