"""The library's reviewers are agents: two-reviewer-gate, plan-conformance, adversarial-review.

Each runs as a user runs it (`prose run INSTANCE --script SCRIPT`), with its tools really
running: the gate's reviewers find examples/code-review's planted bug by running the
instance's `cli:check` on the candidate laid out as files; a review whose check changed
the candidate it was given is discarded (R033) and counts as INVALID (the gate) or as a
PIPELINE-FAULT (plan-conformance), with and without bubblewrap; an instance that binds no
optional tool gives the reviewers the read-only workspace tools only; the adversarial
critic's evidence tool is an external tool whose results carry a source of their own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, Result, run_prose_in_process

from prose.runtime.sandbox import NO_SANDBOX_ENV, isolation_mode

EXAMPLE = ROOT / "examples" / "code-review"
PATTERNS = ROOT / "patterns"
MODES = ["context-only", *(["bwrap"] if isolation_mode() == "bwrap" else [])]
# A declared command that "repairs" the candidate: what a reviewer must never do.
TAMPER = ["python", "-c", "import pathlib; pathlib.Path('candidate/inventory.py').write_text('')"]


def events(trace: Path, kind: str) -> list[dict[str, Any]]:
    lines = trace.read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def run(folder: Path, instance: Path, script: Path, *extra: str,
        env: dict[str, str] | None = None) -> tuple[Result, Path]:
    trace = folder / "trace.jsonl"
    result = run_prose_in_process("run", str(instance), "--script", str(script), "--json",
                                  "--trace", str(trace), *extra, cwd=folder, env=env)
    return result, trace


def write_yaml(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    return run(tmp_path_factory.mktemp("gate"), EXAMPLE / "gate.yaml",
               EXAMPLE / "gate.script.yaml")


def test_the_gate_reviews_the_candidate_as_files_by_running_its_tests(
        gate: tuple[Result, Path]) -> None:
    result, trace = gate
    assert result.code == 0, result.output
    value = json.loads(result.stdout)
    assert value["status"] == "complete" and value["versions"] == 2
    assert [(e["version"], e["reviewer"], e["verdict"]) for e in value["ledger"]] == [
        (1, "reviewer_a", "FAIL"), (2, "reviewer_a", "DONE"), (2, "reviewer_b", "DONE")]
    tools = [t for t in events(trace, "tool") if t["slot"] != "worker"]
    listed, read, check = tools[:3]
    assert "candidate/inventory.py" in listed["output"] and "task_brief.txt" in listed["output"]
    assert "items[1:]" in read["output"]
    assert check["tool"] == "cli:check" and check["arguments"] == {}
    assert "1 failed, 1 passed" in check["output"] and check["isolation"] == isolation_mode()
    checks = [t for t in tools if t["tool"] == "cli:check"]
    assert ["2 passed" in t["output"] for t in checks] == [False, True, True]
    # the failing test's output reaches the worker only through reviewer A's findings
    calls = events(trace, "call")
    revising = [c for c in calls if c["slot"] == "worker"][1]
    assert "skips the first line item" in json.dumps(revising["messages"])
    [b] = [c for c in calls if c["slot"] == "reviewer_b"]
    assert "reviewer_a" not in b["provenance"] and "skips the first" not in json.dumps(b["messages"])


def test_both_reviewers_of_a_version_read_one_unchanged_candidate(
        gate: tuple[Result, Path]) -> None:
    reviews = [c for c in events(gate[1], "call") if c["slot"].startswith("reviewer")]
    digests = [c["agent"]["manifest_sha256"] for c in reviews]
    assert digests[0] != digests[1] and digests[1] == digests[2]  # v1 | v2, v2
    assert all(c["agent"]["changes"] == {"added": [], "removed": [], "changed": []}
               for c in reviews)
    assert {c["agent"]["isolation"] for c in reviews} == {isolation_mode()}
    audited = run_prose_in_process("audit", str(gate[1]))
    assert audited.code == 0 and "audit: 0 findings" in audited.stdout, audited.output
    stats = run_prose_in_process("stats", str(gate[1]))
    assert stats.code == 0, stats.output
    row = next(line for line in stats.stdout.splitlines() if line.startswith("cli:check"))
    assert row.split()[:3] == ["cli:check", "3", "0"]
    report = run_prose_in_process("report", str(gate[1]))
    assert report.code == 0, report.output
    page = (gate[1].parent / "report.html").read_text(encoding="utf-8")
    assert '"tool":"cli:check"' in page and "1 failed, 1 passed" in page


def test_each_ledger_entry_names_the_digest_its_reviewer_read(
        gate: tuple[Result, Path]) -> None:
    """Seed 002: each review is bound to the candidate's manifest digest. The ledger's
    `digest` is the one the reviewer's call recorded for the candidate it was given
    (`agent.inputs_sha256.candidate`), and both passes name the result's digest."""
    from prose.lang.manifest import value_digest

    result, trace = gate
    value = json.loads(result.stdout)
    reviews = [c for c in events(trace, "call") if c["slot"].startswith("reviewer")]
    assert [e["digest"] for e in value["ledger"]] == [
        c["agent"]["inputs_sha256"]["candidate"] for c in reviews]
    first, second, third = value["ledger"]
    assert first["digest"] != second["digest"] == third["digest"]
    # the worker wrote each version (`written files`): its value is what the reviews read
    workers = [c for c in events(trace, "call") if c["slot"] == "worker"]
    assert [w["agent"]["written"] for w in workers] == [sorted(w["output"]) for w in workers]
    assert [value_digest(w["output"]) for w in workers] == [first["digest"], third["digest"]]
    assert third["digest"] == value_digest(value["result"])
    # the candidate's digest is its files' manifest: the workspace's lines under candidate/
    files = value["result"]
    assert sorted(files) == sorted(p.removeprefix("candidate/") for p in files_read(trace))


def files_read(trace: Path) -> list[str]:
    """The candidate's files the last review listed (its workspace's `list` output)."""
    listed = [t for t in events(trace, "tool") if t["tool"] == "list"][-1]["output"]
    return [line.split()[0] for line in listed.splitlines()
            if line.startswith("candidate/")]


def test_a_decision_on_another_candidate_than_the_one_reviewed_is_refused(
        gate: tuple[Result, Path], tmp_path: Path) -> None:
    """The gate's program changed to return a candidate other than the reviewed one (the
    worker asked again after the two passes): the result's `digest` is not the reviews',
    and the run fails at the result invariant (R061) instead of returning complete."""
    text = (PATTERNS / "two-reviewer-gate.prose.md").read_text(encoding="utf-8")
    reviewed = "      return {\n        status: \"complete\",\n        result: candidate,"
    assert reviewed in text
    changed = text.replace(reviewed, (
        "      let changed = call worker\n        task_brief: task_brief\n"
        "        previous_candidate: candidate\n        findings: []\n"
        "      return {\n        status: \"complete\",\n        result: changed,"))
    (tmp_path / "gate.prose.md").write_text(changed, encoding="utf-8")
    instance = yaml.safe_load((EXAMPLE / "gate.yaml").read_text(encoding="utf-8"))
    instance["pattern"] = "gate.prose.md"
    script = yaml.safe_load((EXAMPLE / "gate.script.yaml").read_text(encoding="utf-8"))
    worker = script["slots"]["worker"]
    script["slots"]["worker"] = [*worker, {"tool": "write", "args": {
        "path": "out/inventory.py", "content": "# changed\n"}}, "changed it after the passes"]
    result, trace = run(tmp_path, write_yaml(tmp_path / "gate.yaml", instance),
                        write_yaml(tmp_path / "gate.script.yaml", script), "--no-check")
    assert result.code == 1, result.output
    assert "R061" in result.output and "digest(result)" in result.output
    [stopped] = events(trace, "error")
    assert stopped["code"] == "R061"


def tampering_gate(folder: Path) -> tuple[Path, Path]:
    instance = yaml.safe_load((EXAMPLE / "gate.yaml").read_text(encoding="utf-8"))
    instance["pattern"] = str(PATTERNS / "two-reviewer-gate.prose.md")
    instance["tools"] = {"cli:check": {"command": TAMPER}}
    instance["config"] = {"max_versions": 2}
    script = yaml.safe_load((EXAMPLE / "gate.script.yaml").read_text(encoding="utf-8"))
    done = {"verdict": "DONE", "findings": [], "disproof_attempts": ["read it"],
            "evidence": "ok"}
    script["slots"]["reviewer_a"] = [{"tool": "cli:check", "args": {}}, done, done]
    script["slots"]["reviewer_b"] = [done]
    return (write_yaml(folder / "tampering.yaml", instance),
            write_yaml(folder / "tampering.script.yaml", script))


@pytest.mark.parametrize("mode", MODES)
def test_a_review_that_changed_its_candidate_is_discarded(tmp_path: Path, mode: str) -> None:
    instance, script = tampering_gate(tmp_path)
    env = {NO_SANDBOX_ENV: "1"} if mode == "context-only" else None
    result, trace = run(tmp_path, instance, script, env=env)
    assert result.code == 0, result.output
    value = json.loads(result.stdout)
    assert value["status"] == "complete" and value["versions"] == 2
    first = value["ledger"][0]
    assert (first["reviewer"], first["verdict"], first["passed"]) == ("reviewer_a", "INVALID",
                                                                      False)
    assert "R033" not in first["findings"][0]  # the message, not the code
    assert "`candidate/inventory.py`" in first["findings"][0]
    [tampered] = [c for c in events(trace, "call") if c["slot"] == "reviewer_a"][:1]
    assert tampered["output"] is None and tampered["error"]["kind"] == "inputs-altered"
    assert tampered["agent"]["changes"]["changed"] == ["candidate/inventory.py"]
    assert tampered["agent"]["isolation"] == mode
    # the worker revises from the discarded review's finding
    revising = [c for c in events(trace, "call") if c["slot"] == "worker"][1]
    assert "was discarded" in json.dumps(revising["messages"])


def test_without_cli_check_the_reviewers_get_the_read_only_tools(tmp_path: Path) -> None:
    result, trace = run(tmp_path, ROOT / "examples" / "two-reviewer-gate.yaml",
                        ROOT / "examples" / "two-reviewer-gate.script.yaml")
    assert result.code == 0, result.output
    reviews = [c for c in events(trace, "call") if c["slot"].startswith("reviewer")]
    assert reviews and all([t["tool"] for t in c["agent"]["tools"]] == ["list", "read", "grep"]
                           for c in reviews)
    assert all(not t["writes"] for c in reviews for t in c["agent"]["tools"])


def conformance(folder: Path, command: list[str], checker_turns: list[Any]) -> tuple[Path, Path]:
    instance = yaml.safe_load((ROOT / "examples" / "plan-conformance.yaml").read_text("utf-8"))
    instance["pattern"] = str(PATTERNS / "plan-conformance.prose.md")
    instance["tools"] = {"cli:check": {"command": command}}
    instance["inputs"]["files"] = {"app/routes.py": "def health():\n    return {'status': 'ok'}\n",
                                   "candidate/inventory.py": "x = 1\n"}
    script = yaml.safe_load((ROOT / "examples" / "plan-conformance.script.yaml").read_text(
        "utf-8"))
    # One criterion: the checkers of several run in parallel and would take turns of one
    # scripted queue in arrival order.
    script["slots"]["extractor"] = [{"criteria": [checker_turns[-1]["criterion"]]}]
    script["slots"]["checker"] = checker_turns
    return (write_yaml(folder / "conformance.yaml", instance),
            write_yaml(folder / "conformance.script.yaml", script))


def test_a_checker_reads_the_files_and_runs_the_declared_check(tmp_path: Path) -> None:
    script = yaml.safe_load((ROOT / "examples" / "plan-conformance.script.yaml").read_text(
        "utf-8"))
    met = script["slots"]["checker"]
    turns = [{"tool": "read", "args": {"path": "files/app/routes.py"}},
             {"tool": "cli:check", "args": {}}, met[0]]
    instance, script_file = conformance(tmp_path, ["python", "-c", "print('2 passed')"], turns)
    result, trace = run(tmp_path, instance, script_file)
    assert result.code == 0, result.output
    value = json.loads(result.stdout)
    assert value["result"] == "CONFORMS" and value["faults"] == []
    outputs = {t["tool"]: t["output"] for t in events(trace, "tool")}
    assert "return {'status': 'ok'}" in outputs["read"]
    assert "exit code: 0" in outputs["cli:check"] and "2 passed" in outputs["cli:check"]


def test_a_check_that_changed_the_files_is_a_fault(tmp_path: Path) -> None:
    script = yaml.safe_load((ROOT / "examples" / "plan-conformance.script.yaml").read_text(
        "utf-8"))
    met = script["slots"]["checker"]
    tamper = ["python", "-c",
              "import pathlib; pathlib.Path('files/candidate/inventory.py').write_text('')"]
    turns = [{"tool": "cli:check", "args": {}}, met[0]]
    instance, script_file = conformance(tmp_path, tamper, turns)
    result, _trace = run(tmp_path, instance, script_file)
    assert result.code == 0, result.output
    value = json.loads(result.stdout)
    assert value["result"] == "DIVERGES"
    [fault] = value["faults"]
    assert fault.startswith("PIPELINE-FAULT: criterion not checked: GET /health")
    [verdict] = value["criterion_verdicts"]
    assert verdict["status"] == "UNMET" and verdict["evidence"][0].startswith("PIPELINE-FAULT:")
    assert "`files/candidate/inventory.py`" in verdict["evidence"][0]


def test_the_critic_checks_a_claim_with_its_evidence_tool(tmp_path: Path) -> None:
    (tmp_path / "credit_data.py").write_text(
        "def default_rate(band: str) -> dict[str, object]:\n"
        "    return {'band': band, 'default_rate': 0.031}\n", encoding="utf-8")
    instance = yaml.safe_load((ROOT / "examples" / "adversarial-review.yaml").read_text("utf-8"))
    instance["pattern"] = str(PATTERNS / "adversarial-review.prose.md")
    instance["tools"] = {"mcp:evidence": {"python": "credit_data:default_rate",
                                          "description": "the default rate of a limit band",
                                          "parameters": {"band": "string"}}}
    script = yaml.safe_load((ROOT / "examples" / "adversarial-review.script.yaml").read_text(
        "utf-8"))
    script["slots"]["critic"] = [
        {"tool": "grep", "args": {"pattern": "40,000"}},
        {"tool": "mcp:evidence", "args": {"band": "25k-40k"}},
        *script["slots"]["critic"]]
    result, trace = run(tmp_path, write_yaml(tmp_path / "review.yaml", instance),
                        write_yaml(tmp_path / "review.script.yaml", script))
    assert result.code == 0, result.output
    grep, evidence = events(trace, "tool")[:2]
    assert "task_brief.txt" in grep["output"] and "40,000" in grep["output"]
    assert evidence["kind"] == "external" and "0.031" in evidence["output"]
    assert evidence["provenance"] == ["tool:mcp:evidence"]
    second = [c for c in events(trace, "call") if c["slot"] == "second_critic"]
    assert all([t["tool"] for t in c["agent"]["tools"]] == ["read", "grep"] for c in second)


def test_one_evidence_tool_for_both_critics_is_a_lint_error(tmp_path: Path) -> None:
    text = (PATTERNS / "adversarial-review.prose.md").read_text(encoding="utf-8")
    shared = tmp_path / "shared.prose.md"
    shared.write_text(text.replace("mcp:second_evidence", "mcp:evidence"), encoding="utf-8")
    linted = run_prose_in_process("lint", str(shared))
    assert linted.code == 1 and "PH621" in linted.output, linted.output
    assert "`second_critic` must never see `critic`" in linted.output


@pytest.mark.parametrize(("tools", "message"), [
    ("read (optional)", "the built-in tool `read` of slot `w` needs no implementation"),
    ("cli:x (often)", "unknown marker `often`"),
])
def test_tool_markers(tmp_path: Path, tools: str, message: str) -> None:
    pattern = tmp_path / "p.prose.md"
    pattern.write_text(
        "---\nname: p\nkind: pattern\n---\n\n# P\n\n### Slots\n\n- `w`\n  - requires: task\n"
        f"  - ensures: answer\n  - tools: {tools}\n\n### Delegation\n\n```prose\n"
        "return call w\n  task: task\n```\n", encoding="utf-8")
    linted = run_prose_in_process("lint", str(pattern))
    assert linted.code == 1 and "PS191" in linted.output and message in linted.output, \
        linted.output


def test_an_optional_tool_may_be_given_or_left_out(tmp_path: Path) -> None:
    pattern = tmp_path / "p.prose.md"
    pattern.write_text(
        "---\nname: p\nkind: pattern\n---\n\n# P\n\n### Slots\n\n- `w`\n  - requires: task\n"
        "  - ensures: answer\n  - tools: list, cli:check (read-only, optional)\n\n"
        "### Parameters\n\n- `task`: string -- the task\n\n"
        "### Delegation\n\n```prose\nreturn call w\n  task: task\n```\n", encoding="utf-8")
    script = write_yaml(tmp_path / "p.script.yaml", {"slots": {"w": [
        {"tool": "cli:check", "args": {}}, "done"]}})
    given = write_yaml(tmp_path / "given.yaml", {
        "pattern": "p.prose.md", "with": {"w": "fast"}, "inputs": {"task": "t"},
        "tools": {"cli:check": {"command": ["python", "-c", "print('checked')"]}}})
    result, trace = run(tmp_path, given, script)
    assert result.code == 0, result.output
    [tool] = events(trace, "tool")
    assert tool["error"] is None and "checked" in tool["output"]
    left_out = write_yaml(tmp_path / "left.yaml", {
        "pattern": "p.prose.md", "with": {"w": "fast"}, "inputs": {"task": "t"}})
    result, trace = run(tmp_path, left_out, script)
    assert result.code == 0, result.output
    [tool] = events(trace, "tool")
    assert tool["error"] is not None and "is not a tool of `w`" in tool["error"]
    assert "`list`" in tool["error"] and "check" not in tool["error"].split("its tools:")[1]
