"""Disk caches of what Python compiles from text at import: dataclass methods and regexes.

A cold `prose lint` spent a third of its time compiling text that is the same in every
process (docs/benchmarks.md, cold lint):

- `@dataclass` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__` (and, when
  frozen, `__setattr__` and `__delattr__`) as source text and compiles it with `exec`
  whenever the class is created: about 180 frozen dataclasses, 900-odd methods;
- `re` parses and compiles every pattern a module compiles at import (the invariant forms,
  YAML's reader) and every lexer Lark builds for the grammar's parser states.

So both are kept on disk, as Python keeps a module's code in a `.pyc`: keyed by the text
itself (and a regex's flags), in files named for the interpreter's version, and a process
compiles only text it has not seen. What is run is what the text compiles to:

- a method's code is `compile(text)` with no inherited flags (the `dataclasses` module's
  own code has none), called as `exec` would; only classes of `prose.*` modules;
- a regex is what `re` builds from the program `re._compiler._code` wrote for it: the
  cache keeps that program (a list of numbers, checked again by `_sre.compile`); only
  patterns prose, Lark and YAML compile.

The caches are installed by the command line (`prose.cli.main`, imported before any of
prose's classes in a `prose` process), not by `import prose`: a program that uses the
library keeps `dataclasses` and `re` untouched. They are read at install and written when the
process ends, if it compiled anything new, unless Python is told not to write bytecode
(`PYTHONDONTWRITEBYTECODE`, `-B`). A cache that cannot be read or written is no cache:
nothing fails because of it.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import atexit
import dataclasses
import marshal
import os
import sys
from re import _compiler, _parser  # type: ignore[attr-defined]
from types import CodeType
from typing import Any

# Past this many entries (text of old versions of the code piles up) a file is rewritten
# with only what the writing process used.
_MOST_ENTRIES = 4000


class DiskCache:
    """Entries `key -> compiled` kept in one marshal file, written at exit if it grew."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.entries: dict[Any, Any] = {}
        self.used: set[Any] = set()
        self.fresh = 0  # entries this process compiled: the file needs writing

    def path(self) -> str:
        """Where the entries are kept (per user, per interpreter version)."""
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        version = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{_sre.MAGIC}"
        return os.path.join(base, "prose", f"{self.name}-{version}.marshal")

    def read(self) -> dict[Any, Any]:
        try:
            with open(self.path(), "rb") as stream:
                # One read, then unmarshal the bytes: `marshal.load` reads a file object by
                # object, which was slower than the compiling it saves.
                loaded = marshal.loads(stream.read())
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        return loaded if isinstance(loaded, dict) else {}

    def write(self) -> None:
        """Write the entries (at exit), if this process compiled any; Ctrl-C while it writes
        leaves the file as it was, quietly (the command's own exit stands)."""
        if not self.fresh or sys.dont_write_bytecode:
            return
        try:
            self._write()
        except KeyboardInterrupt:
            pass

    def _write(self) -> None:
        path = self.path()
        entries = {**self.read(), **self.entries}
        if len(entries) > _MOST_ENTRIES:
            entries = {key: value for key, value in self.entries.items() if key in self.used}
        temporary = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(temporary, "wb") as stream:
                marshal.dump(entries, stream)
            os.replace(temporary, path)  # readers see the old file or the new one, never half
        except (OSError, ValueError):
            try:
                os.unlink(temporary)
            except OSError:
                pass


METHODS = DiskCache("dataclass-methods")
REGEXES = DiskCache("regexes")


def _exec(source: Any, globals_: dict[str, Any] | None = None,
          locals_: dict[str, Any] | None = None, /) -> None:
    """`exec` as the `dataclasses` module calls it, the compiling cached for prose's classes."""
    if (isinstance(source, str) and globals_ is not None
            and str(globals_.get("__name__", "")).startswith("prose.")):
        code = METHODS.entries.get(source)
        if not isinstance(code, CodeType):
            code = METHODS.entries[source] = compile(source, "<string>", "exec",
                                                     dont_inherit=True)
            METHODS.fresh += 1
        METHODS.used.add(source)
        exec(code, globals_, locals_)
        return
    exec(source, globals_, locals_)


_compile_regex = _compiler.compile


def _regex_program(pattern: str | bytes, flags: int) -> tuple[int, list[int], int,
                                                              dict[str, int],
                                                              tuple[str | None, ...]]:
    """What `re._compiler.compile` hands `_sre.compile` for a pattern (its own steps)."""
    parsed = _parser.parse(pattern, flags)
    # Opcodes are named int constants, which marshal cannot write: their numbers.
    code = [int(item) for item in _compiler._code(parsed, flags)]
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex,
            tuple(indexgroup))


# The packages whose regexes are cached: prose and what its lint path compiles at start
# (Lark's lexers, YAML's reader). Others' (a model provider's, at run time) are left out,
# so the file stays the size of what a lint needs.
_REGEX_OWNERS = ("prose.", "lark.", "yaml.")


def _compiled_for() -> str:
    """The module that asked `re` for a pattern (the first caller outside `re`)."""
    frame = sys._getframe(2)
    while frame is not None and _inside_re(str(frame.f_globals.get("__name__", ""))):
        frame = frame.f_back  # type: ignore[assignment]
    return str(frame.f_globals.get("__name__", "")) if frame is not None else ""


def _inside_re(module: str) -> bool:
    return module == "re" or module.startswith("re.")


def _regex(pattern: Any, flags: int = 0) -> Any:
    """`re._compiler.compile`, the program of a text pattern taken from the cache."""
    if (type(pattern) not in (str, bytes) or flags & _compiler.SRE_FLAG_DEBUG
            or not _compiled_for().startswith(_REGEX_OWNERS)):
        return _compile_regex(pattern, flags)
    key = (pattern, int(flags))
    REGEXES.used.add(key)
    program = REGEXES.entries.get(key)
    if program is not None:
        try:
            return _sre.compile(pattern, *program)
        except Exception:  # not a program this `_sre` takes: compiled again below
            pass
    try:
        program = _regex_program(pattern, int(flags))
        compiled = _sre.compile(pattern, *program)
    except Exception:  # an `re` whose steps differ (another Python): compiled as it does
        return _compile_regex(pattern, flags)
    REGEXES.entries[key] = program
    REGEXES.fresh += 1
    return compiled


def install() -> None:
    """Route the compiling of dataclass methods and regexes through the caches (once)."""
    if getattr(dataclasses, "exec", None) is _exec:
        return
    if not (hasattr(_compiler, "_code") and hasattr(_parser, "parse")):
        return  # an interpreter whose `re` is built otherwise: no caches
    METHODS.entries.update(METHODS.read())
    REGEXES.entries.update(REGEXES.read())
    # The `dataclasses` module looks `exec` up in its globals before the builtins: this name
    # shadows the builtin for that module alone. `re` calls `_compiler.compile` by name.
    setattr(dataclasses, "exec", _exec)  # noqa: B010  (no such attribute to type-check)
    _compiler.compile = _regex
    atexit.register(METHODS.write)
    atexit.register(REGEXES.write)
