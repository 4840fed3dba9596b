"""A Python callable the leak fixtures bind as an external tool (`mcp:notes`, `mcp:memory`):
it keeps what it is given, as a shared notes server would."""

from __future__ import annotations

NOTES: list[str] = []


def note(text: str = "") -> dict[str, object]:
    """Keep `text`; return every note kept so far."""
    if text:
        NOTES.append(text)
    return {"notes": list(NOTES)}
