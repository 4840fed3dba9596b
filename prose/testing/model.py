"""The pattern-test file (`*.test.yaml`): what to run and what to expect.

    name: proposer-adversary returns both outputs   # optional (default: the file name)
    instance: proposer-adversary.yaml               # relative to this file
    script: proposer-adversary.script.yaml          # relative to this file, or inline
    expect:
      result: { result: { proposal: "..." } }       # a subset of the returned value
      calls: { proposer: 1, adversary: 1 }          # calls per slot (attempts)
      status: ok                                    # ok | error | budget | violation | waiting
      exit_code: 0                                  # 0 ok, 1 error, 3 budget, 4 model, 5 hiding
      error: "information hiding"                   # a substring of the error message

Optional keys: `inputs` and `config` (merged over the instance's), `limits`
(`max_calls`, `max_tokens`, `max_cost`, `timeout`), `require_distinct_models`,
`check` (false: run even if the pattern has lint errors), and `tests:`, a list
of tests that inherit every other top-level key (docs/testing.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from prose.errors import InputReadError, ProseError, ProseSyntaxError

TEST_KEYS = frozenset({"name", "description", "instance", "script", "inputs", "config", "limits",
                       "require_distinct_models", "check", "expect"})
EXPECT_KEYS = frozenset({"result", "calls", "status", "exit_code", "error"})
LIMIT_KEYS = frozenset({"max_calls", "max_tokens", "max_cost", "timeout"})
STATUSES = ("ok", "error", "budget", "violation", "interrupted", "waiting")
SUFFIX = ".test.yaml"


class PatternTestError(ProseError):
    """A test file that cannot be read or does not follow the format (the test fails)."""

    def __init__(self, file: Path, line: int, message: str, column: int | None = None) -> None:
        self.file, self.line, self.column, self.message = file, line, column, message
        where = f"{line}:{column}" if column is not None else str(line)
        super().__init__(f"{file}:{where}: {message}")


@dataclass(frozen=True)
class Expectation:
    """What a test expects; `has_result` tells an expected `result: null` from none."""

    has_result: bool = False
    result: Any = None
    calls: Mapping[str, int] | None = None
    status: str | None = None
    exit_code: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class PatternTest:
    """One test: run `instance` with `script`, compare with `expect`."""

    name: str
    file: Path
    line: int
    instance: Path
    script: Path | Mapping[str, Any]
    expect: Expectation
    inputs: Mapping[str, Any] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    limits: Mapping[str, Any] = field(default_factory=dict)
    require_distinct_models: bool = False
    check: bool = True


def default_name(path: Path) -> str:
    """The default name of a test file's test: its file name without `.test.yaml`."""
    name = path.name
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else path.stem


def load_test_file(path: str | Path) -> list[PatternTest]:
    """The tests in a test file; raises PatternTestError naming the line of the problem."""
    from prose.bounded import read_yaml

    file = Path(path)
    try:
        document = read_yaml(file)
    except InputReadError as error:
        raise PatternTestError(file, 1, str(error).removeprefix(f"{file}: ")) from None
    except ProseSyntaxError as error:
        raise PatternTestError(file, error.line, error.message, error.column) from None
    if not isinstance(document.value, Mapping) or document.node is None:
        raise PatternTestError(file, 1, "a test file is a mapping with `instance`, `script` and `expect`")
    lines = _lines(document.node)
    data = dict(document.value)
    items = data.pop("tests", None)
    if items is None:
        name = str(data.get("name") or default_name(file))
        return [_test(file, data, name, lines, False, lines.get("", 1))]
    if not isinstance(items, list) or not items:
        raise PatternTestError(file, lines.get("tests", 1), "`tests` must be a non-empty list of tests")
    base_name = str(data.pop("name", default_name(file)))
    tests = []
    for index, item in enumerate(items):
        where = lines.get(f"tests[{index}]", 1)
        if not isinstance(item, Mapping):
            raise PatternTestError(file, where, f"`tests[{index}]` must be a mapping")
        merged = {**data, **item}
        name = f"{base_name}: {item['name']}" if "name" in item else f"{base_name}[{index + 1}]"
        tests.append(_test(file, merged, name, lines, True, where))
    return tests


def _lines(node: yaml.Node) -> dict[str, int]:
    """1-based lines of the top-level keys and of each item of `tests`."""
    out: dict[str, int] = {"": node.start_mark.line + 1}
    if not isinstance(node, yaml.MappingNode):
        return out
    for key, value in node.value:
        out[str(key.value)] = key.start_mark.line + 1
        if key.value == "tests" and isinstance(value, yaml.SequenceNode):
            for index, item in enumerate(value.value):
                out[f"tests[{index}]"] = item.start_mark.line + 1
    return out


def _test(file: Path, data: Mapping[str, Any], name: str, lines: Mapping[str, int],
          listed: bool, line: int) -> PatternTest:
    def fail(key: str, message: str) -> PatternTestError:
        return PatternTestError(file, line if listed or key not in lines else lines[key], message)

    unknown = sorted(set(data) - TEST_KEYS)
    if unknown:
        known = ", ".join(f"`{key}`" for key in sorted(TEST_KEYS | {"tests"}))
        raise fail(unknown[0], f"unknown key `{unknown[0]}` (known keys: {known})")
    for key in ("instance", "script", "expect"):
        if key not in data:
            raise fail("", f"missing `{key}`")
    instance = data["instance"]
    if not isinstance(instance, str) or not instance:
        raise fail("instance", "`instance` must be the path of an instance file")
    script = data["script"]
    if isinstance(script, str) and script:
        script_value: Path | Mapping[str, Any] = file.parent / script
    elif isinstance(script, Mapping):
        script_value = script
    else:
        raise fail("script", "`script` must be the path of a script file or an inline script")
    return PatternTest(
        name=name,
        file=file, line=line, instance=file.parent / instance, script=script_value,
        expect=_expectation(data["expect"], fail),
        inputs=_mapping(data, "inputs", fail), config=_mapping(data, "config", fail),
        limits=_limits(data, fail),
        require_distinct_models=_flag(data, "require_distinct_models", False, fail),
        check=_flag(data, "check", True, fail),
    )


def _mapping(data: Mapping[str, Any], key: str, fail: Any) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise fail(key, f"`{key}` must be a mapping")
    return dict(value)


def _flag(data: Mapping[str, Any], key: str, default: bool, fail: Any) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise fail(key, f"`{key}` must be true or false")
    return value


def _limits(data: Mapping[str, Any], fail: Any) -> dict[str, Any]:
    limits = _mapping(data, "limits", fail)
    for key, value in limits.items():
        if key not in LIMIT_KEYS:
            raise fail("limits", f"unknown limit `{key}` (use {', '.join(sorted(LIMIT_KEYS))})")
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise fail("limits", f"limit `{key}` must be a number >= 0")
    return limits


def _expectation(raw: Any, fail: Any) -> Expectation:
    if not isinstance(raw, Mapping):
        raise fail("expect", "`expect` must be a mapping (`result`, `calls`, `status`, "
                             "`exit_code`, `error`)")
    unknown = sorted(set(raw) - EXPECT_KEYS)
    if unknown:
        raise fail("expect", f"unknown expectation `{unknown[0]}` (use "
                             f"{', '.join(f'`{k}`' for k in sorted(EXPECT_KEYS))})")
    calls = raw.get("calls")
    if calls is not None and (not isinstance(calls, Mapping) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in calls.values())):
        raise fail("expect", "`expect.calls` must map slot names to call counts")
    status = raw.get("status")
    if status is not None and status not in STATUSES:
        raise fail("expect", f"`expect.status` must be one of {', '.join(STATUSES)}")
    exit_code = raw.get("exit_code")
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        raise fail("expect", "`expect.exit_code` must be an integer")
    error = raw.get("error")
    if error is not None and not isinstance(error, str):
        raise fail("expect", "`expect.error` must be text (a part of the error message)")
    return Expectation("result" in raw, raw.get("result"),
                       {str(k): int(v) for k, v in calls.items()} if calls is not None else None,
                       status, exit_code, error)
