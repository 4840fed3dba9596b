"""Where the grammar and the pattern library live, installed or in a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    checkout = _PACKAGE.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"cannot find the `{name}` folder next to the prose package")


def grammar_file() -> Path:
    """The Lark grammar of the pattern language."""
    return _find("grammar") / "prose.lark"


def patterns_dir() -> Path:
    """The standard pattern library."""
    return _find("patterns")
