"""`prose audit`: the hash chain, the trace's structure, and information hiding re-checked.

Real traces come from `prose run --script` on the fixtures in
tests/fixtures/ledger/ (in this process: made once per module); tampered ones are edited copies (one byte), or edited
and re-chained (every `prev` recomputed) to show that the policy checks do not
depend on the chain. `prose audit` runs as a new process where its exit code is the
point (0 on real traces, 1 on a broken chain, 2 on an unreadable trace); the other
cases check what it reports, in this process.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, ROOT, run_prose, run_prose_in_process

from prose.ledger import audit_trace, load_trace

LEDGER = FIXTURES / "ledger"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real traces of the proposer-adversary and dialectic fixtures, made by `prose run`."""
    folder = tmp_path_factory.mktemp("traces")
    out = {}
    for name in ("proposer-adversary", "dialectic"):
        trace = folder / f"{name}.jsonl"
        result = run_prose_in_process("run", str(LEDGER / "pass" / f"{name}.yaml"), "--script",
                           str(LEDGER / "pass" / f"{name}.script.yaml"), "--trace", str(trace), "-q")
        assert result.code == 0, result.output
        out[name] = trace
    return out


def events_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_chained(path: Path, events: list[dict[str, Any]]) -> Path:
    """Write `events` with every `prev` recomputed, and the seal: a consistent chain and seal
    over edited content (nothing is keyed, so an attacker can do this; the policy and
    structure checks are what catch it)."""
    prev: str | None = None
    lines = []
    for event in events:
        event = {**event, "prev": prev}
        line = json.dumps(event, ensure_ascii=False)
        prev = hashlib.sha256(line.encode("utf-8")).hexdigest()
        lines.append(line)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
    return path


def edit_byte(source: Path, target: Path, line: int, old: bytes, new: bytes) -> Path:
    """A copy of `source` with the first `old` on 1-based `line` replaced by `new` (same length)."""
    assert len(old) == len(new)
    lines = source.read_bytes().split(b"\n")
    assert old in lines[line - 1], (old, lines[line - 1][:200])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    target.write_bytes(b"\n".join(lines))
    return target


# --- real traces ----------------------------------------------------------------------


def test_audit_passes_on_real_traces(traces: dict[str, Path]) -> None:
    for name, trace in traces.items():
        result = run_prose("audit", str(trace))
        assert result.code == 0, result.output
        assert "hash chain intact" in result.stdout
        assert "audit: 0 findings" in result.stdout, name
        assert "sha256 matches the trace" in result.stdout


def test_audit_json_report(traces: dict[str, Path]) -> None:
    result = run_prose_in_process("audit", str(traces["dialectic"]), "--json")
    assert result.code == 0
    report = json.loads(result.stdout)
    assert report["chain_ok"] is True
    assert report["checked_calls"] == 4
    assert report["findings"] == []


@pytest.mark.parametrize(("line", "old", "new"), [
    (2, b"token bucket", b"token bucker"),  # the proposer's call: its output
    (1, b"rate limiter", b"rate-limiter"),  # run_start: the inputs
])
def test_one_edited_byte_breaks_the_chain(traces: dict[str, Path], tmp_path: Path, line: int,
                                          old: bytes, new: bytes) -> None:
    tampered = edit_byte(traces["proposer-adversary"], tmp_path / "t.jsonl", line, old, new)
    result = run_prose("audit", str(tampered))
    assert result.code == 1, result.output
    assert f"{tampered}:{line + 1}: chain: the hash chain is broken: line {line + 1}'s `prev` is " \
           f"not the sha256 of line {line}" in result.stdout
    assert "hash chain BROKEN" in result.stdout


def test_a_byte_that_breaks_the_json_or_utf8_is_reported_at_its_line(
        traces: dict[str, Path], tmp_path: Path) -> None:
    tampered = edit_byte(traces["dialectic"], tmp_path / "t.jsonl", 3, b'"slot"', b'\xffslot"')
    result = run_prose_in_process("audit", str(tampered))
    assert result.code == 1
    assert f"{tampered}:3: chain: the hash chain is broken: line 3 is not a valid trace event" \
        in result.stdout


def test_the_output_digest_names_the_edited_call(traces: dict[str, Path], tmp_path: Path) -> None:
    tampered = edit_byte(traces["proposer-adversary"], tmp_path / "t.jsonl", 2,
                         b"token bucket", b"token bucker")
    report = audit_trace(tampered)
    digest = [f for f in report.findings if f.rule == "output-digest"]
    assert [(f.line, f.call, f.slot) for f in digest] == [(2, "c1", "proposer")]


def test_an_edited_total_on_the_last_line_is_caught(traces: dict[str, Path], tmp_path: Path) -> None:
    events = events_of(traces["dialectic"])
    total = events[-1]["totals"]["prompt_tokens"]
    other = total + 1 if len(str(total + 1)) == len(str(total)) else total - 1
    tampered = edit_byte(traces["dialectic"], tmp_path / "t.jsonl", len(events),
                         f'"prompt_tokens": {total}'.encode(), f'"prompt_tokens": {other}'.encode())
    report = audit_trace(tampered)
    assert report.trace.chain_ok  # nothing after the last line vouches for it
    # the copy has no seal, which is a finding of its own for a trace that ended (issue 14.8)
    assert [(f.rule, f.line) for f in report.findings] == [("seal", len(events)),
                                                           ("totals", len(events))]
    assert f"run_end records {other} prompt tokens, but the recorded calls add up to {total}" \
        in report.findings[1].message


def test_a_cut_off_trace_is_a_finding(traces: dict[str, Path], tmp_path: Path) -> None:
    lines = traces["dialectic"].read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]), encoding="utf-8")
    result = run_prose_in_process("audit", str(cut))
    assert result.code == 1
    assert "structure: the trace does not end with `run_end`" in result.stdout


# --- information hiding over re-chained traces ------------------------------------------


def test_recorded_provenance_that_breaks_the_policy(traces: dict[str, Path], tmp_path: Path) -> None:
    events = events_of(traces["proposer-adversary"])
    events[1]["provenance"] = ["adversary"]  # the proposer's call, as if it carried the attack
    trace = write_chained(tmp_path / "t.jsonl", events)
    result = run_prose_in_process("audit", str(trace))
    assert result.code == 1
    assert f"{trace}:2: never-sees: call c1 to `proposer` (" in result.stdout
    assert "carries output of `adversary`, which `proposer` must never see (recorded provenance)" in result.stdout
    assert "hash chain intact" in result.stdout


def test_messages_carrying_a_forbidden_output_are_found_without_provenance(
        traces: dict[str, Path], tmp_path: Path) -> None:
    events = events_of(traces["proposer-adversary"])
    attack = events[2]["output"]  # the adversary's verdict (an object)
    leak = dict(events[1])
    leak.update(id="c9", messages=[{"role": "user", "content": "## task_brief\nDesign it.\n\n"
                                    f"## task_brief\n{json.dumps(attack, indent=2)}"}])
    events.insert(3, leak)  # a later proposer call whose message holds the attack's text
    report = audit_trace(write_chained(tmp_path / "t.jsonl", events))
    found = [(f.rule, f.call, f.line) for f in report.findings if f.rule == "never-sees-content"]
    assert found == [("never-sees-content", "c9", 4)]
    message = next(f.message for f in report.findings if f.rule == "never-sees-content")
    assert "output of `adversary` (call c2, line 3)" in message


def test_without_the_pattern_input_names_come_from_the_message_headings(
        traces: dict[str, Path], tmp_path: Path) -> None:
    events = events_of(traces["proposer-adversary"])
    events[0]["pattern"] = str(tmp_path / "gone.prose.md")
    events[1]["messages"][-1]["content"] += "\n\n## notes\nsomething extra"
    report = audit_trace(write_chained(tmp_path / "t.jsonl", events))
    assert report.policy_source == "recorded in run_start"
    rules = sorted(f.rule for f in report.findings)
    assert rules == ["requires", "sees-only"]
    assert all(f.call == "c1" and f.slot == "proposer" and f.line == 2 for f in report.findings)
    assert "(input names read from the message headings)" in report.findings[0].message


def test_a_recorded_policy_that_differs_from_the_pattern(traces: dict[str, Path], tmp_path: Path) -> None:
    events = events_of(traces["proposer-adversary"])
    events[0]["policy"]["slots"]["proposer"]["hidden"] = []
    report = audit_trace(write_chained(tmp_path / "t.jsonl", events))
    assert [(f.rule, f.line) for f in report.findings] == [("policy", 1)]


def test_literal_text_naming_the_hidden_slot_is_found_at_the_call_site(tmp_path: Path) -> None:
    leaky = LEDGER / "leaky"
    trace = tmp_path / "leaky.jsonl"
    run = run_prose_in_process("run", str(leaky / "leaky.yaml"), "--script",
                               str(leaky / "leaky.script.yaml"), "--no-check", "--trace", str(trace),
                               "-q")
    assert run.code == 5, run.output
    stopped = run_prose_in_process("audit", str(trace))
    assert stopped.code == 0, stopped.output  # nothing leaked: the call was never sent
    assert "the run stopped the call to `proposer` before it was sent (unaware-of); the audit agrees" in stopped.stdout
    events = events_of(trace)
    error = next(e for e in events if e["type"] == "error")
    sent = {"type": "call", "time": error["time"], "run_id": error["run_id"], "id": "c1",
            "slot": "proposer", "service": "model:fast", "file": error["file"],
            "line": error["line"], "column": error["column"],
            "messages": [{"role": "user", "content": "An adversary will attack whatever you "
                          "propose.\n\n## task_brief\nDesign a cache."}],
            "output": "An LRU cache.", "provenance": [], "transitive": []}
    events = [e for e in events if e["type"] != "error"]
    events.insert(1, sent)
    report = audit_trace(write_chained(tmp_path / "sent.jsonl", events))
    found = [(f.rule, f.call, f.source) for f in report.findings]
    assert ("unaware-of", "c1", f"{error['file']}:{error['line']}") in found
    assert "literal text sent to `proposer` names `adversary`" in report.findings[0].message


# --- unreadable traces and the pattern option ----------------------------------------------


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read"),
    (b"", "the file is empty"),
    (b"hello\nworld\n", "no line is a prose trace event"),
])
def test_an_unreadable_trace_exits_2(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "trace.jsonl"
    if content is not None:
        path.write_bytes(content)
    result = run_prose("audit", str(path))
    assert result.code == 2
    assert message in result.stderr


def test_the_wrong_pattern_file_is_a_finding(traces: dict[str, Path]) -> None:
    result = run_prose_in_process("audit", str(traces["proposer-adversary"]), "--pattern",
                                  str(ROOT / "patterns" / "dialectic.prose.md"))
    assert result.code == 1
    assert "is not the pattern this run used: its sha256 differs" in result.stdout


def test_no_policy_and_no_pattern_cannot_be_audited(traces: dict[str, Path], tmp_path: Path) -> None:
    events = events_of(traces["dialectic"])
    events[0]["policy"] = None
    events[0]["pattern"] = "nowhere/dialectic.prose.md"
    trace = write_chained(tmp_path / "t.jsonl", events)
    result = run_prose("audit", str(trace))
    assert result.code == 2
    assert "pass --pattern FILE" in result.stderr
    copy = tmp_path / "dialectic.prose.md"
    shutil.copy(ROOT / "patterns" / "dialectic.prose.md", copy)
    assert run_prose_in_process("audit", str(trace), "--pattern", str(copy)).code == 0


def test_load_trace_numbers_lines_and_finds_the_first_break(traces: dict[str, Path],
                                                             tmp_path: Path) -> None:
    loaded = load_trace(traces["dialectic"])
    assert loaded.chain_ok and loaded.line_count == 6
    assert [line.type for line in loaded.lines] == ["run_start", "call", "call", "call", "call",
                                                    "run_end"]
    lines = traces["dialectic"].read_text(encoding="utf-8").splitlines(keepends=True)
    swapped = tmp_path / "swapped.jsonl"
    swapped.write_text("".join([lines[0], lines[2], lines[1], *lines[3:]]), encoding="utf-8")
    broken = load_trace(swapped).chain_break
    assert broken is not None and broken.line == 2


# --- contract kinds (issue 36) -------------------------------------------------------------

NEWSROOM = FIXTURES / "contracts" / "newsroom"


@pytest.mark.parametrize(("name", "script", "sites"), [
    ("headline-desk", 'slots:\n  condense: ["12 bus lines approved."]\n'
                      '  headline-writer: ["Twelve new bus lines"]\n', [(23, 13), (25, 13)]),
    ("condense", 'slots:\n  condense: [{gist: "Twelve bus lines."}]\n', None),
])
def test_a_function_run_is_audited_against_its_program(
        tmp_path: Path, name: str, script: str, sites: list[tuple[int, int]] | None) -> None:
    """`kind: function` runs are audited with the policy compiled from the file and its call
    sites, read as `prose run` reads it (before, the audit's own reader found no program in
    `### Execution` and fell back to the message headings)."""
    from prose.ledger.call_sites import pattern_source
    from prose.pattern_file import read_pattern

    (tmp_path / "script.yaml").write_text(script, encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    ran = run_prose_in_process("run", str(NEWSROOM / f"{name}.prose.md"), "--script",
                               str(tmp_path / "script.yaml"), "--input", "article=long text",
                               "-q", "--trace", str(trace))
    assert ran.code == 0, ran.output
    report = audit_trace(trace)
    assert report.clean and report.checked_calls >= 1
    assert report.policy_source.startswith("compiled from ") and "sha256 matches" in report.policy_source
    assert not [note for note in report.notes if "message headings" in note]
    source = pattern_source(read_pattern(NEWSROOM / f"{name}.prose.md"))
    assert source is not None
    if sites is not None:
        assert sorted(source.sites) == sites
        assert source.sites[(23, 13)].inputs == ("article",)


def test_a_responsibility_is_read_by_the_audit_from_its_program() -> None:
    """`kind: responsibility` cannot be run (exit 2), but the audit's view of it is its
    `### Execution` program, read as any kind is: its call sites and compiled policy (before,
    the audit's own reader returned nothing for it)."""
    from prose.ledger.call_sites import pattern_source
    from prose.pattern_file import read_pattern

    source = pattern_source(read_pattern(NEWSROOM / "front-page.prose.md"))
    assert source is not None
    assert sorted(source.sites) == [(32, 11)]
    assert source.sites[(32, 11)].inputs == ("article",)
    assert source.policy.pattern == "front-page"


def test_the_audit_has_one_reader_of_pattern_files() -> None:
    import prose.ledger.call_sites as call_sites

    assert not hasattr(call_sites, "read_pattern")
