"""Run pattern tests in-process with scripted models: no model, no API key, no network.

Each test loads its instance file (bindings, config, inputs), applies the
test's overrides, refuses a pattern with lint errors (as `prose run` does,
unless `check: false`), runs the pattern with the script through the real
interpreter (`prose.runtime.run_pattern`), and compares what came back with
`expect`. A problem in the test itself (a missing file, a bad script) fails
that test with the reason; it never stops the other tests.

`expect.result` is a subset match: objects match when every expected key is
present and matches (extra keys are fine); lists match element-wise and must
have the same length; anything else must be equal (`1` equals `1.0`, but
`true` is not `1`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.lang.type_words import VALUE_WORDS, type_word, with_article
from prose.testing.model import (
    SUFFIX,
    PatternTest,
    PatternTestError,
    default_name,
    load_test_file,
)

if TYPE_CHECKING:
    from prose.pattern_file import PatternFiles


class Skip(Exception):
    """A test that cannot run: the reason is why it fails."""


@dataclass
class PatternTestOutcome:
    """How one test went: `reasons` is empty when it passed."""

    name: str
    file: Path
    reasons: list[str] = field(default_factory=list)
    exit_code: int | None = None
    trace: Path | None = None

    @property
    def passed(self) -> bool:
        return not self.reasons


def find_test_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; folders searched recursively for `*.test.yaml`, sorted. Missing: OSError."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob(f"*{SUFFIX}") if p.is_file()))
        elif path.is_file():
            out.append(path)
        else:
            raise FileNotFoundError(f"{raw}: no such file or folder")
    return list(dict.fromkeys(out))


def run_test_files(files: Iterable[Path], *, keyword: str | None = None,
                   trace_dir: Path | None = None,
                   report: Callable[[PatternTestOutcome], None] | None = None) -> list[PatternTestOutcome]:
    """Run every test in `files` (those whose name contains `keyword`), in order."""
    from prose.llm import event_loop

    return event_loop.run(_run_all(list(files), keyword, trace_dir, report))


async def _run_all(files: list[Path], keyword: str | None, trace_dir: Path | None,
                   report: Callable[[PatternTestOutcome], None] | None) -> list[PatternTestOutcome]:
    from prose.pattern_file import PatternFiles

    outcomes: list[PatternTestOutcome] = []
    lint_cache: dict[str, str | None] = {}
    patterns = PatternFiles()  # each pattern file is read, loaded and parsed once for all tests
    for file in files:
        try:
            tests = load_test_file(file)
        except PatternTestError as error:
            found = [PatternTestOutcome(default_name(file), file, [str(error)])]
        else:
            found = [await run_test(test, trace_dir=trace_dir, lint_cache=lint_cache,
                                    patterns=patterns)
                     for test in tests if keyword is None or keyword in test.name]
        for outcome in found:
            outcomes.append(outcome)
            if report is not None:
                report(outcome)
    return outcomes


async def run_test(test: PatternTest, *, trace_dir: Path | None = None,
                   lint_cache: dict[str, str | None] | None = None,
                   patterns: PatternFiles | None = None) -> PatternTestOutcome:
    """Run one test and compare; never raises for a problem in the test or the pattern."""
    from prose.errors import ProseError
    from prose.pattern_file import PatternFile, PatternFiles
    from prose.runtime import RunOptions, run_pattern
    from prose.runtime.budget import Limits

    outcome = PatternTestOutcome(test.name, test.file)
    patterns = patterns if patterns is not None else PatternFiles()
    try:
        path, bindings, config, inputs = _instance(test, patterns)
        if test.check:
            problem = _lint_problem(path, lint_cache if lint_cache is not None else {}, patterns)
            if problem is not None:
                raise Skip(f"the pattern has lint errors: {problem} (use `check: false` to run anyway)")
        script = _script(test)
    except Skip as why:
        outcome.reasons.append(str(why))
        return outcome
    if trace_dir is not None:
        outcome.trace = trace_dir / (re.sub(r"[^A-Za-z0-9_.-]+", "-", test.name).strip("-") + ".jsonl")
    limits = Limits(**{key: test.limits[key] for key in test.limits})
    pattern: str | PatternFile = path
    try:
        pattern = patterns.get(path)
    except ProseError:
        pass  # the run reports it, as a run of the path would
    if isinstance(pattern, PatternFile):
        problems = _name_problems(test, script, pattern, bindings, patterns)
        if problems:
            outcome.reasons.extend(problems)
            return outcome
    try:
        result = await run_pattern(pattern, RunOptions(
            inputs={**inputs, **test.inputs}, config={**config, **test.config}, bindings=bindings,
            script=script, limits=limits, write_trace=outcome.trace is not None,
            trace_path=outcome.trace, require_distinct_models=test.require_distinct_models,
            files=patterns,
        ))
    except Exception as error:  # a crash in the runtime fails this test, not the whole run
        outcome.reasons.append(f"the run crashed: {type(error).__name__}: {error}")
        return outcome
    outcome.exit_code = result.exit_code
    outcome.reasons.extend(compare(test, result))
    return outcome


def compare(test: PatternTest, result: Any) -> list[str]:
    """Why `result` (a RunResult) does not meet the test's expectations."""
    expect = test.expect
    reasons: list[str] = []
    message = result.error.message if result.error is not None else None
    expected_code = expect.exit_code if expect.exit_code is not None else (
        None if expect.status is not None else 0)
    because = f" ({result.error.kind}: {message})" if message else ""
    if expected_code is not None and result.exit_code != expected_code:
        reasons.append(f"exit code {result.exit_code}, expected {expected_code}{because}")
        because = ""
    if expect.status is not None and result.status != expect.status:
        reasons.append(f"status `{result.status}`, expected `{expect.status}`{because}")
    if expect.error is not None:
        if message is None:
            reasons.append(f"no error, expected one containing {expect.error!r}")
        elif expect.error.lower() not in message.lower():
            reasons.append(f"the error {message!r} does not contain {expect.error!r}")
    if expect.has_result:
        reasons.extend(mismatches(expect.result, result.value))
    if expect.calls is not None:
        counts = call_counts(result.events)
        for slot, want in expect.calls.items():
            if counts.get(slot, 0) != want:
                reasons.append(f"`{slot}` was called {counts.get(slot, 0)} time(s), expected {want}")
    return reasons


def call_counts(events: Iterable[Any]) -> Counter[str]:
    """Call attempts per slot, and per `slot[i]` for list-valued slots."""
    counts: Counter[str] = Counter()
    for event in events:
        if getattr(event, "type", None) != "call":
            continue
        counts[event.slot] += 1
        if event.index is not None:
            counts[f"{event.slot}[{event.index}]"] += 1
    return counts


def _name_problems(test: PatternTest, script: Any, pattern: Any, bindings: Mapping[str, Any],
                   patterns: PatternFiles) -> list[str]:
    """Script keys and `calls:` keys that name no slot (with the likely one), before the run."""
    from prose.llm.errors import ScriptFormatError
    from prose.llm.script import check_script_slots
    from prose.testing.script_keys import check_call_names, pattern_names

    slots, nested = pattern_names(pattern, bindings, patterns)
    problems: list[str] = []
    try:
        check_script_slots(script, slots, nested)
    except ScriptFormatError as error:
        problems.append(f"script: {error}")
    if test.expect.calls is not None:
        problems += check_call_names(test.expect.calls, slots, nested)
    return problems


def _instance(
    test: PatternTest, patterns: PatternFiles
) -> tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The pattern path and the instance's bindings, config and inputs."""
    from prose.errors import InputReadError
    from prose.runtime.errors import ProseRuntimeError
    from prose.runtime.loading import from_instance_binding
    from prose.spec.instance_loader import load_instance_file

    try:
        loaded = load_instance_file(test.instance, patterns.spec_result)
    except InputReadError as error:
        raise Skip(f"instance: {error}") from None
    instance = loaded.instance
    problems = loaded.errors
    if instance is None or problems or instance.pattern_path is None:
        first = problems[0] if problems else None
        detail = f"{first.span}: {first.message}" if first is not None else "no pattern found"
        raise Skip(f"the instance {test.instance} cannot be run: {detail}")
    base = test.instance.parent
    try:
        bindings = {name: from_instance_binding(b.value, base, b.keys) for name, b in instance.bindings.items()}
    except ProseRuntimeError as error:
        raise Skip(f"the instance {test.instance} cannot be run: {error.message}") from None
    return instance.pattern_path, bindings, dict(instance.config_values), dict(instance.input_values)


def _script(test: PatternTest) -> Any:
    from prose.errors import InputReadError
    from prose.llm import Script
    from prose.llm.errors import ScriptFormatError

    try:
        if isinstance(test.script, Mapping):
            return Script.from_mapping(test.script)
        return Script.from_file(test.script)  # bounded, and names the file and line
    except InputReadError as error:
        raise Skip(f"script: {error}") from None
    except ScriptFormatError as error:
        raise Skip(f"script: {error}") from None


def _lint_problem(pattern: str, cache: dict[str, str | None], patterns: PatternFiles) -> str | None:
    """The first lint error of the pattern file (cached per file), or None."""
    if pattern in cache:
        return cache[pattern]
    from prose.check import lint_pattern
    from prose.diagnostics.model import Severity
    from prose.errors import ProseError

    try:
        loaded = patterns.get(pattern)
    except ProseError as error:
        cache[pattern] = str(error)
        return cache[pattern]
    errors = [d for d in lint_pattern(loaded).diagnostics if d.severity is Severity.ERROR]
    cache[pattern] = f"{errors[0].span}: {errors[0].code} {errors[0].message}" if errors else None
    return cache[pattern]


# --- subset matching of `expect.result` ------------------------------------------

MAX_SHOWN = 60


def shown(value: Any) -> str:
    """A value as JSON, cut to a readable length."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def _kind(value: Any) -> str:
    word = type_word(value)
    if word not in VALUE_WORDS:
        return word
    return with_article("number" if word == "integer" else word)


def _equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    return bool(expected == actual)


def mismatches(expected: Any, actual: Any, path: str = "result") -> list[str]:
    """Every place where `actual` does not contain `expected`, as `path: what differs`."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return [f"{path}: expected an object, got {_kind(actual)} {shown(actual)}"]
        out: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{path}.{key}: missing (the object has {shown(sorted(actual))})")
            else:
                out.extend(mismatches(value, actual[key], f"{path}.{key}"))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list | tuple):
            return [f"{path}: expected a list, got {_kind(actual)} {shown(actual)}"]
        if len(expected) != len(actual):
            return [f"{path}: expected a list of {len(expected)}, got a list of {len(actual)}"]
        return [problem for index, (want, got) in enumerate(zip(expected, actual, strict=True))
                for problem in mismatches(want, got, f"{path}[{index}]")]
    if not _equal(expected, actual):
        return [f"{path}: expected {shown(expected)}, got {shown(actual)}"]
    return []
