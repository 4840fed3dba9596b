"""A disk cache of the methods `dataclasses` writes for prose's own classes.

`@dataclass` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__` (and, when
frozen, `__setattr__` and `__delattr__`) as source text and compiles it with `exec` every
time the class is created. A cold `prose lint` creates about 180 frozen dataclasses, and
compiling their 900-odd methods was a sixth of its time (docs/benchmarks.md, cold lint).
The text is the same from one process to the next, so its compiled code is kept on disk,
as Python keeps a module's in a `.pyc`: keyed by the text itself, in a file named for the
interpreter's version, and a process compiles only text it has not seen. The code run is
what `exec` would have compiled from that text (`compile` with no inherited flags, as the
`dataclasses` module's own code has none), so the classes are the same.

Only classes of `prose.*` modules go through the cache; every other `exec` the
`dataclasses` module makes is left as it was. The cache is read when `prose` is imported
and written when the process ends, if it compiled anything new, unless Python is told not
to write bytecode (`PYTHONDONTWRITEBYTECODE`, `-B`). A cache that cannot be read or
written is no cache: nothing fails because of it.
"""

from __future__ import annotations

import atexit
import dataclasses
import marshal
import os
import sys
from types import CodeType
from typing import Any

# Past this many entries (text of old versions of the classes piles up) the file is
# rewritten with only what the writing process used.
_MOST_ENTRIES = 4000

_compiled: dict[str, CodeType] = {}
_used: set[str] = set()
_fresh: list[str] = []  # compiled by this process: the file needs writing


def cache_file() -> str:
    """Where the compiled methods are kept (per user, per interpreter version)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    version = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
    return os.path.join(base, "prose", f"dataclass-methods-{version}.marshal")


def _read(path: str) -> dict[str, CodeType]:
    try:
        with open(path, "rb") as stream:
            loaded = marshal.loads(stream.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {text: code for text, code in loaded.items()
            if isinstance(text, str) and isinstance(code, CodeType)}


def _exec(source: Any, globals_: dict[str, Any] | None = None,
          locals_: dict[str, Any] | None = None, /) -> None:
    """`exec` as the `dataclasses` module calls it, the compiling cached for prose's classes."""
    if (isinstance(source, str) and globals_ is not None
            and str(globals_.get("__name__", "")).startswith("prose.")):
        code = _compiled.get(source)
        if code is None:
            code = _compiled[source] = compile(source, "<string>", "exec", dont_inherit=True)
            _fresh.append(source)
        _used.add(source)
        exec(code, globals_, locals_)
        return
    exec(source, globals_, locals_)


def _write() -> None:
    if not _fresh or sys.dont_write_bytecode:
        return
    path = cache_file()
    entries = {**_read(path), **_compiled}
    if len(entries) > _MOST_ENTRIES:
        entries = {text: code for text, code in _compiled.items() if text in _used}
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(temporary, "wb") as stream:
            marshal.dump(entries, stream)
        os.replace(temporary, path)  # readers see the old file or the new one, never half
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def install() -> None:
    """Route the `dataclasses` module's compiling through the cache (once per process)."""
    if getattr(dataclasses, "exec", None) is _exec:
        return
    _compiled.update(_read(cache_file()))
    # The module looks `exec` up in its globals before the builtins: this name shadows the
    # builtin for `dataclasses` alone.
    setattr(dataclasses, "exec", _exec)  # noqa: B010  (no such attribute to type-check)
    atexit.register(_write)
