"""The `github` format: GitHub Actions workflow commands that annotate the diff.

::

    ::error file=flow.prose,line=4,col=9,endLine=4,endColumn=14,title=PN002::`draft` is used before it is assigned

The runner unescapes ``%25``, ``%0D`` and ``%0A`` in a command's message, and
also ``%3A`` and ``%2C`` in its properties (where ``:`` and ``,`` would end
the value). Escaping ``:`` or ``,`` in the message would show ``%3A`` to the
reader, so they are escaped in properties only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prose.diagnostics.model import Diagnostic, Severity
from prose.diagnostics.summary import Summary, ordered

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render_github(
    diagnostics: Sequence[Diagnostic], sources: Mapping[str, str], summary: Summary
) -> str:
    """One ``::error``/``::warning``/``::notice`` command per diagnostic.

    Paths are printed with forward slashes. `sources` and `summary` are not
    used (an empty list renders as an empty string).
    """
    return "".join(_command(d) + "\n" for d in ordered(diagnostics))


def _command(diagnostic: Diagnostic) -> str:
    span = diagnostic.span
    properties = {
        "file": span.file.replace("\\", "/"),
        "line": span.line,
        "col": span.column,
        "endLine": span.end_line,
        "endColumn": span.end_column,
        "title": diagnostic.code,
    }
    listed = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    command = _COMMANDS[diagnostic.severity]
    return f"::{command} {listed}::{escape_data(diagnostic.message)}"


def escape_data(text: str) -> str:
    """`text` made safe as a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """`text` made safe as a workflow command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
