"""The examples: every library pattern has an instance, a script and tests in examples/.

- `prose test` (no argument: it finds `examples/`) passes;
- `prose run examples/<p>.yaml --script examples/<p>.script.yaml --json` runs every
  pattern with no other argument and exits 0;
- `prose audit` passes on each of those traces, and fails once one byte of a
  trace is edited; the same holds for the traces of the two-reviewer gate's
  acceptance scenarios.

The commands run in this process (`run_prose_in_process`), one after the other:
LiteLLM is imported once, not once per example. tests/test_runtime_cli.py runs
`prose run` in a new process.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, Result, run_prose_in_process

EXAMPLES = ROOT / "examples"
PATTERNS = sorted(path.name.removesuffix(".prose.md") for path in (ROOT / "patterns").glob("*.prose.md"))


def test_the_library_is_all_there() -> None:
    assert len(PATTERNS) == 24


@pytest.mark.parametrize("name", PATTERNS)
def test_every_pattern_has_an_instance_a_script_and_tests(name: str) -> None:
    instance = EXAMPLES / f"{name}.yaml"
    data = yaml.safe_load(instance.read_text(encoding="utf-8"))
    assert (instance.parent / data["pattern"]).resolve() == ROOT / "patterns" / f"{name}.prose.md"
    assert data.get("inputs"), "the instance supplies its inputs"
    assert (EXAMPLES / f"{name}.script.yaml").is_file()
    tests = yaml.safe_load((EXAMPLES / f"{name}.test.yaml").read_text(encoding="utf-8"))
    assert tests["instance"] == f"{name}.yaml"
    assert tests["script"] == f"{name}.script.yaml"
    assert len(tests.get("tests", [tests])) >= 2, "more than one path through the pattern"


@pytest.fixture(scope="module")
def tested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    """`prose test` run once in the checkout (it tests `examples/`), keeping every test's trace."""
    traces = tmp_path_factory.mktemp("test-traces")
    return run_prose_in_process("test", "--trace-dir", str(traces), cwd=ROOT), traces


def test_prose_test_examples_passes(tested: tuple[Result, Path]) -> None:
    result = tested[0]
    assert result.code == 0, result.output
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"\d+ passed, 0 failed", lines[-1]), lines[-1]
    assert all(line.startswith("PASS ") for line in lines[:-1]), result.stdout
    tested_patterns = {line.removeprefix("PASS ").split(":")[0] for line in lines[:-1]}
    assert set(PATTERNS) <= tested_patterns
    # Besides one test file per pattern, an instance variant may have its own (a person
    # as the decision owner): each names an example instance.
    assert all((EXAMPLES / f"{name}.yaml").is_file() for name in tested_patterns - set(PATTERNS))


@pytest.mark.parametrize("scenario", [
    "two-reviewer-gate: (a) A DONE, B DONE on the first version -> complete",
    "two-reviewer-gate: (b) A DONE, B FAIL -> revision, then two fresh DONEs on the new version -> complete",
    "two-reviewer-gate: (c) reviewer A fails every version -> blocked at the ceiling, no result",
    "two-reviewer-gate: (c) reviewer B fails every version A passes -> blocked at the ceiling, never complete",
    "plan-conformance: one criterion's check errors -> DIVERGES with that criterion's fault named",
    "plan-conformance: a criterion marked MET without a test is downgraded to PARTIAL by the gate -> DIVERGES",
    "plan-conformance: a missing plan -> DIVERGES, no model is asked anything",
    "adversarial-review: issues, a revision, a clean review confirmed by the second critic, then a decision",
    "adversarial-review: the second critic runs when the first finds nothing, and its issues send the proposal back",
])
def test_the_acceptance_scenarios_are_tests_that_pass(scenario: str, tested: tuple[Result, Path]) -> None:
    assert f"PASS {scenario}" in tested[0].stdout.splitlines()


# --- prose run, then prose audit ----------------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Result, Path | None]]:
    """Every example run by `prose run INSTANCE --script SCRIPT --json`, each in its own
    folder (where the default trace `.prose/runs/RUN_ID/trace.jsonl` is written)."""
    base = tmp_path_factory.mktemp("runs")

    def run_one(name: str) -> tuple[Result, Path | None]:
        folder = base / name
        folder.mkdir()
        result = run_prose_in_process("run", str(EXAMPLES / f"{name}.yaml"), "--script",
                                      str(EXAMPLES / f"{name}.script.yaml"), "--json", cwd=folder)
        traces = sorted(folder.glob(".prose/runs/*/trace.jsonl"))
        return result, traces[0] if len(traces) == 1 else None

    return {name: run_one(name) for name in PATTERNS}


@pytest.mark.parametrize("name", PATTERNS)
def test_every_example_runs_with_its_script_alone(
        name: str, runs: dict[str, tuple[Result, Path | None]]) -> None:
    result, trace = runs[name]
    assert result.code == 0, result.output
    assert isinstance(json.loads(result.stdout), dict)
    assert trace is not None and trace.is_file()


@pytest.mark.parametrize("name", PATTERNS)
def test_audit_passes_on_every_example_trace(
        name: str, runs: dict[str, tuple[Result, Path | None]]) -> None:
    trace = runs[name][1]
    assert trace is not None
    audited = run_prose_in_process("audit", str(trace))
    assert audited.code == 0, audited.output
    assert "hash chain intact" in audited.stdout
    assert "audit: 0 findings" in audited.stdout


@pytest.mark.parametrize("name", PATTERNS)
def test_audit_fails_after_one_byte_of_the_trace_is_edited(
        name: str, runs: dict[str, tuple[Result, Path | None]], tmp_path: Path) -> None:
    trace = runs[name][1]
    assert trace is not None
    tampered = edit_one_byte(trace, tmp_path / "tampered.jsonl")
    audited = run_prose_in_process("audit", str(tampered))
    assert audited.code == 1, audited.output
    assert "hash chain BROKEN" in audited.stdout


def edit_one_byte(source: Path, target: Path) -> Path:
    """A copy of `source` with one digit of the second line's timestamp changed: still
    valid JSON, so only the hash chain can tell."""
    data = bytearray(source.read_bytes())
    second = data.index(b"\n") + 1
    digit = data.index(b'"time": ', second) + len(b'"time": ')
    assert chr(data[digit]).isdigit()
    data[digit] = ord("1") if data[digit] != ord("1") else ord("2")
    assert sum(a != b for a, b in zip(data, source.read_bytes(), strict=True)) == 1
    target.write_bytes(bytes(data))
    return target


def test_the_two_reviewer_gate_scenario_traces_audit_clean_and_are_tamper_evident(
        tested: tuple[Result, Path], tmp_path: Path) -> None:
    files = sorted(tested[1].glob("two-reviewer-gate-*.jsonl"))
    scenarios = [line for line in tested[0].stdout.splitlines()
                 if line.startswith("PASS two-reviewer-gate: ")]
    assert len(files) == len(scenarios) >= 4
    for trace in files:
        audited = run_prose_in_process("audit", str(trace))
        assert audited.code == 0, audited.output
        assert "audit: 0 findings" in audited.stdout
        tampered = edit_one_byte(trace, tmp_path / f"{trace.stem}.tampered.jsonl")
        assert run_prose_in_process("audit", str(tampered)).code == 1
