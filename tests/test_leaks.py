"""Information-leak fixtures: one per channel a slot's output can travel through.

Each YAML file in tests/fixtures/leaks/ holds a leaking program and a clean
twin (format: tests/fixtures/leaks/README.md). The leaking
program must produce exactly the expected information-hiding diagnostics,
each at the offending property, with secondary labels on the lines the value
came from (at least the producing call). The clean twin must produce no
diagnostic of the `information-hiding` category at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from prose.check import lint_text
from prose.diagnostics.model import Diagnostic, Severity
from prose.spec import load_spec
from tests.conftest import FIXTURES
from tests.test_rules import SECTIONS, Location, PatternFile, build_pattern, locate, parse_location

LEAK_FIXTURES = FIXTURES / "leaks"
PATH = "leak.prose.md"
CATEGORY = "information-hiding"

# Slots without `requires:` so that only the invariants under test apply.
LEAK_SECTIONS: dict[str, str | None] = {
    "slots": (
        "- `proposer` (primary)\n"
        "  - ensures: proposal text answering the brief\n"
        "- `adversary`\n"
        "  - ensures: attack listing flaws in the proposal\n"
        "- `summariser`\n"
        "  - ensures: summary of a text"
    ),
    "config": "- `rounds` (integer, default: 2): how many rounds to run",
    "invariants": "- `proposer` never sees `adversary`",
    "parameters": "- `task_brief`: string -- what the proposer answers",
    "returns": "- `result`: what the pattern produced",
}
# `fail` and `services` are read only by the run-time test (tests/test_runtime_hiding.py).
# `services` too: how many services a list-valued slot is bound to at run time.
# `tools` and `script` too (agents, docs/agents.md): what implements the declared tools,
# and the tool calls a slot's first scripted turns make.
FILE_KEYS = {"channel", "description", "name", "fail", "services", "people", "leak", "clean",
             "tools", "script", *SECTIONS}
# A twin may override a section, and the instance's `tools` (a tool bound `separate`).
TWIN_KEYS = {"program", "expect", "xfail", "tools", *SECTIONS}


@dataclass(frozen=True)
class Leak:
    """One expected information-hiding diagnostic of a leaking program."""

    code: str
    at: Location
    message: str | None = None
    sources: tuple[int, ...] = ()  # program lines a secondary label must point at
    xfail: str | None = None  # a known bug in what the diagnostic shows (not whether it exists)


@dataclass(frozen=True)
class Twin:
    channel: str
    kind: str  # "leak" or "clean"
    program: str
    sections: Mapping[str, str | None]
    pattern_name: str
    expect: tuple[Leak, ...] = ()
    xfail: str | None = None
    description: str = field(default="", compare=False)
    # The external tools the twin's instance binds `separate` (a server per slot).
    separate_tools: frozenset[str] = frozenset()

    def build(self) -> PatternFile:
        return build_pattern(self.program, {**LEAK_SECTIONS, **self.sections}, self.pattern_name)


def _leak(item: Mapping[str, Any]) -> Leak:
    unknown = set(item) - {"code", "at", "message", "from", "xfail"}
    if unknown or "code" not in item or "at" not in item:
        raise ValueError(f"a leak is `code` and `at` with optional `message`, `from`, `xfail`: {item!r}")
    return Leak(str(item["code"]), parse_location(str(item["at"])), item.get("message"),
                tuple(int(line) for line in item.get("from", ())), item.get("xfail"))


def _valid_fail(fail: Any) -> bool:
    """`fail: [slot, ...]` (every call fails) or `fail: {slot: [n, ...]}` (calls n, from 1)."""
    if isinstance(fail, list):
        return all(isinstance(slot, str) for slot in fail)
    return isinstance(fail, dict) and all(
        isinstance(slot, str) and isinstance(numbers, list)
        and all(isinstance(n, int) and n >= 1 for n in numbers)
        for slot, numbers in fail.items()
    )


def load_leak_fixture(path: Path) -> list[Twin]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or set(data) - FILE_KEYS:
        raise ValueError(f"{path.name}: a mapping with keys from {sorted(FILE_KEYS)}")
    if data.get("channel") != path.stem:
        raise ValueError(f"{path.name}: `channel` must be {path.stem!r}")
    if not _valid_fail(data.get("fail", [])):
        raise ValueError(f"{path.name}: `fail` is a list of slots or a mapping slot: [numbers]")
    shared = {key: data[key] for key in SECTIONS if key in data}
    twins = []
    for kind in ("leak", "clean"):
        raw = data.get(kind)
        if not isinstance(raw, dict) or "program" not in raw or set(raw) - TWIN_KEYS:
            raise ValueError(f"{path.name}: `{kind}` needs a `program` (keys {sorted(TWIN_KEYS)})")
        expect = tuple(_leak(item) for item in raw.get("expect") or [])
        sections = {**shared, **{key: raw[key] for key in SECTIONS if key in raw}}
        if (kind == "leak") != bool(expect):
            raise ValueError(f"{path.name}: the leak expects diagnostics, the clean twin none")
        tools = raw.get("tools", data.get("tools")) or {}
        apart = frozenset(name for name, tool in tools.items()
                          if isinstance(tool, dict) and tool.get("separate"))
        twins.append(Twin(data["channel"], kind, raw["program"], sections,
                          data.get("name", "fixture"), expect, raw.get("xfail"),
                          data.get("description", ""), apart))
    return twins


def leak_paths() -> list[Path]:
    return sorted(LEAK_FIXTURES.glob("*.yaml"))


def _params() -> Iterator[Any]:
    for path in leak_paths():
        try:
            twins = load_leak_fixture(path)
        except (ValueError, yaml.YAMLError):
            continue  # reported by test_leak_fixture_is_well_formed
        for twin in twins:
            marks = [pytest.mark.xfail(reason=twin.xfail, strict=True)] if twin.xfail else []
            yield pytest.param(twin, id=f"{twin.channel}:{twin.kind}", marks=marks)


def hiding_diagnostics(twin: Twin) -> tuple[PatternFile, list[Diagnostic]]:
    """Lint the twin's pattern (every rule) and keep the information-hiding findings."""
    pattern = twin.build()
    spec_errors = [d for d in load_spec(pattern.text, PATH).diagnostics if d.severity is Severity.ERROR]
    assert not spec_errors, [f"{d.code} {d.message}" for d in spec_errors]
    result = lint_text(pattern.text, PATH, separate_tools=twin.separate_tools)
    assert not [d for d in result.diagnostics if d.code == "PS001"], "the program does not parse"
    return pattern, [d for d in result.diagnostics if d.category == CATEGORY]


def _render(pattern: PatternFile, found: list[Diagnostic]) -> str:
    lines = []
    for diagnostic in found:
        labels = ", ".join(f"{locate_line(pattern, label.span.line)} {label.message}"
                           for label in diagnostic.secondary)
        lines.append(f"  {diagnostic.code} {locate(diagnostic, pattern)} {diagnostic.message} [{labels}]")
    return "\n".join(lines) or "  (none)"


def locate_line(pattern: PatternFile, line: int) -> str:
    if line >= pattern.block_start:
        return str(line - pattern.block_start + 1)
    return f"md:{line}"


def _labels_on(diagnostic: Diagnostic, pattern: PatternFile) -> set[int]:
    return {
        label.span.line - pattern.block_start + 1
        for label in diagnostic.secondary
        if label.span.line >= pattern.block_start
    }


@pytest.mark.parametrize("path", leak_paths(), ids=lambda path: path.name)
def test_leak_fixture_is_well_formed(path: Path) -> None:
    assert len(load_leak_fixture(path)) == 2


def test_there_are_enough_leak_channels() -> None:
    assert len(leak_paths()) >= 12


@pytest.mark.parametrize("twin", list(_params()))
def test_leak_twin(twin: Twin) -> None:
    pattern, found = hiding_diagnostics(twin)
    report = f"{twin.channel} ({twin.kind})\nfound:\n{_render(pattern, found)}\n--- pattern ---\n{pattern.text}"
    if twin.kind == "clean":
        assert found == [], report
        return
    left = list(found)
    for leak in twin.expect:
        match = next(
            (d for d in left if d.code == leak.code and leak.at.covers(locate(d, pattern))
             and (leak.message is None or leak.message in d.message)),
            None,
        )
        assert match is not None, f"expected {leak.code} at {leak.at}\n{report}"
        left.remove(match)
    assert left == [], f"unexpected diagnostics\n{report}"


def _path_params() -> Iterator[Any]:
    for path in leak_paths():
        try:
            twins = load_leak_fixture(path)
        except (ValueError, yaml.YAMLError):
            continue
        for twin in twins:
            if twin.xfail:
                continue
            for index, leak in enumerate(twin.expect):
                if not leak.sources:
                    continue
                marks = [pytest.mark.xfail(reason=leak.xfail, strict=True)] if leak.xfail else []
                yield pytest.param(twin, index, id=f"{twin.channel}:{leak.code}@{leak.at}",
                                   marks=marks)


@pytest.mark.parametrize(("twin", "index"), list(_path_params()))
def test_leak_secondary_labels_show_the_path(twin: Twin, index: int) -> None:
    leak = twin.expect[index]
    pattern, found = hiding_diagnostics(twin)
    candidates = [d for d in found if d.code == leak.code and leak.at.covers(locate(d, pattern))]
    assert candidates, f"no {leak.code} at {leak.at}:\n{_render(pattern, found)}"
    labelled = set().union(*(_labels_on(d, pattern) for d in candidates))
    missing = set(leak.sources) - labelled
    assert not missing, (
        f"{twin.channel}: no secondary label on program line(s) {sorted(missing)}\n"
        + _render(pattern, found)
    )
