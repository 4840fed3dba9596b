"""The disk cache of prose's dataclass methods (prose/dataclass_cache.py): a second process
compiles nothing the first one did, and its classes behave as `dataclasses` makes them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Prints what the process compiled, and how the classes it made behave.
PROBE = """
import dataclasses, json
from prose import dataclass_cache
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
print(json.dumps({
    "fresh": len(dataclass_cache._fresh),
    "outside": any("outside_only_field" in text for text in dataclass_cache._compiled),
    "equal": first == second, "hash": hash(first) == hash(second),
    "repr": repr(first), "frozen": frozen,
    "file": dataclass_cache.cache_file(),
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
    assert Path(str(first["file"])).is_file()
    assert str(first["file"]).startswith(str(tmp_path))
    second = _probe(tmp_path)
    assert second["fresh"] == 0
    for probe in (first, second):
        assert probe["outside"] is False
        assert probe["equal"] is True and probe["hash"] is True  # spans take no part
        assert probe["repr"] == "Name(name='a')"
        assert probe["frozen"] is True


def test_nothing_is_written_when_python_writes_no_bytecode(tmp_path: Path) -> None:
    probe = _probe(tmp_path, "-B")
    assert isinstance(probe["fresh"], int) and probe["fresh"] > 100
    assert not Path(str(probe["file"])).exists()


def test_an_unreadable_cache_is_no_cache(tmp_path: Path) -> None:
    path = Path(str(_probe(tmp_path, "-B")["file"]))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not marshal data")
    probe = _probe(tmp_path)
    assert isinstance(probe["fresh"], int) and probe["fresh"] > 100
    assert probe["repr"] == "Name(name='a')"
