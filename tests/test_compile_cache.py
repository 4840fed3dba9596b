"""The disk caches of prose's dataclass methods and of regexes (prose/compile_cache.py): a
second process compiles nothing the first one did, and its classes and regexes behave as
`dataclasses` and `re` make them."""

from __future__ import annotations

import json
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

# Prints what the process compiled, and how the classes it made behave.
PROBE = """
import dataclasses, json, re
import prose.cli.main  # installs the caches, as the `prose` command does
from prose import compile_cache
from prose.syntax import nodes as n
from prose.source import Span

@dataclasses.dataclass(frozen=True)
class Outside:  # a class of no prose module: never cached
    outside_only_field: int

first = n.Name("a", span=Span("f", 1, 1, 1, 2))
second = n.Name("a", span=Span("f", 2, 1, 2, 2))
try:
    first.name = "b"
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
# As a prose module compiles a pattern (only prose's, Lark's and YAML's are cached), and as
# any other module does.
scope = {"__name__": "prose.probe", "re": re, "PATTERN": r"(?P<word>[a-z]+)-(\\d+)(?i:X)"}
exec("pattern = re.compile(PATTERN, re.M)", scope)
pattern = scope["pattern"]
re.compile(r"outside_only_(x)")
print(json.dumps({
    "fresh": compile_cache.METHODS.fresh,
    "regexes": compile_cache.REGEXES.fresh,
    "outside": any("outside_only_field" in text for text in compile_cache.METHODS.entries),
    "regex_outside": any(key[0] == "outside_only_(x)" for key in compile_cache.REGEXES.entries),
    "regex_cached": any(key[0] == scope["PATTERN"] for key in compile_cache.REGEXES.entries),
    "regex": [pattern.pattern, pattern.flags, pattern.groups, dict(pattern.groupindex),
              pattern.search("ab-12x ab-3Y").span(), pattern.findall("q-1X r-22x")],
    "equal": first == second, "hash": hash(first) == hash(second),
    "repr": repr(first), "frozen": frozen,
    "file": compile_cache.METHODS.path(),
    "regex_file": compile_cache.REGEXES.path(),
}))
"""


def _probe(cache_home: Path, *flags: str) -> dict[str, object]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CACHE_HOME"] = str(cache_home)
    done = subprocess.run([sys.executable, *flags, "-c", PROBE], env=env, capture_output=True,
                          text=True, check=True)
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_a_second_process_compiles_nothing_and_its_classes_are_the_same(tmp_path: Path) -> None:
    first = _probe(tmp_path)
    assert isinstance(first["fresh"], int) and first["fresh"] > 100  # every class compiled
    assert isinstance(first["regexes"], int) and first["regexes"] >= 2  # the probe's, prose's
    assert Path(str(first["file"])).is_file() and Path(str(first["regex_file"])).is_file()
    assert str(first["file"]).startswith(str(tmp_path))
    second = _probe(tmp_path)
    assert second["fresh"] == 0 and second["regexes"] == 0
    for probe in (first, second):
        assert probe["outside"] is False and probe["regex_outside"] is False
        assert probe["regex_cached"] is True
        assert probe["equal"] is True and probe["hash"] is True  # spans take no part
        assert probe["repr"] == "Name(name='a')"
        assert probe["frozen"] is True
        assert probe["regex"] == [r"(?P<word>[a-z]+)-(\d+)(?i:X)", re.M | re.U, 2, {"word": 1},
                                  [0, 6], [["q", "1"], ["r", "22"]]]


def test_nothing_is_written_when_python_writes_no_bytecode(tmp_path: Path) -> None:
    probe = _probe(tmp_path, "-B")
    assert isinstance(probe["fresh"], int) and probe["fresh"] > 100
    assert not Path(str(probe["file"])).exists()
    assert not Path(str(probe["regex_file"])).exists()


def test_an_unreadable_cache_is_no_cache(tmp_path: Path) -> None:
    unread = _probe(tmp_path, "-B")
    for name in ("file", "regex_file"):
        path = Path(str(unread[name]))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"not marshal data")
    probe = _probe(tmp_path)
    assert isinstance(probe["fresh"], int) and probe["fresh"] > 100
    assert probe["repr"] == "Name(name='a')"
    assert probe["regex"] == unread["regex"]


def test_a_cached_program_this_re_refuses_is_compiled_again(tmp_path: Path) -> None:
    path = Path(str(_probe(tmp_path)["regex_file"]))
    entries = marshal.loads(path.read_bytes())
    key = (r"(?P<word>[a-z]+)-(\d+)(?i:X)", int(re.M))
    flags, _, groups, groupindex, indexgroup = entries[key]
    entries[key] = (flags, [999, 999], groups, groupindex, indexgroup)  # no valid program
    path.write_bytes(marshal.dumps(entries))
    probe = _probe(tmp_path)
    assert probe["regexes"] == 1
    assert probe["regex"][4:] == [[0, 6], [["q", "1"], ["r", "22"]]]


def test_the_library_alone_leaves_dataclasses_and_re_untouched() -> None:
    """Only the command line installs the caches: `import prose` and its modules do not."""
    probe = ("import dataclasses, re, prose, prose.check, prose.syntax.parser\n"
             "from re import _compiler\n"
             "print(hasattr(dataclasses, 'exec'), _compiler.compile.__module__)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.split() == ["False", "re._compiler"]
