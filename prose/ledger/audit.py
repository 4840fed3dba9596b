"""`audit_trace`: is a trace intact, and did every recorded call respect the pattern's policy?

The run-time enforcement stops a leaking call before it is sent; the audit is
the second, independent look an auditor takes afterwards, from the trace
alone (plus the pattern file when it is at hand):

1. the hash chain (`prev` on every line) is intact, the trace starts with
   `run_start` and ends with `run_end`, and the recorded totals agree with the
   recorded calls;
2. the policy is the recorded one, or compiled from the pattern file whose
   sha256 matches the trace's; when both are there they must agree;
3. every call: its input names against `requires` / `sees only`, the
   pattern's literal text it sent against `is unaware of`, its recorded
   provenance against `never sees` (direct and indirect), its messages against
   the outputs of the slots it must never see (a check that does not trust
   the recorded provenance), and its output against its recorded sha256;
4. the control-flow invariants (`runs only if`, `runs only after`, `gets the same`,
   `at most one of`), judged again over the recorded calls in order (`prose.ledger.gates`);
5. the result `run_end` records, against `the result satisfies` (`prose.ledger.results`);
6. every answer a person gave records who gave it and when, and that person
   may answer for the slot (`prose.ledger.people`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.errors import ProseError
from prose.lang.channels import Channel, chains_from, channel_from_dict
from prose.lang.policy import Policy, Violation
from prose.lang.tools import ToolUse
from prose.ledger.call_sites import PatternSource, pattern_source
from prose.ledger.tool_audit import TOOLS_RULE, recorded_uses, refused_tool_call, tool_findings
from prose.ledger.trace_file import LoadedTrace, TraceLine, load_trace, nesting

if TYPE_CHECKING:
    from prose.pattern_file import PatternFiles

# Output text shorter than this is too likely to occur by chance to prove a leak.
MIN_LEAK_TEXT = 16
_HEADING = re.compile(r"^## ([A-Za-z_][A-Za-z0-9_-]*)$", re.M)


class AuditError(ProseError):
    """The audit cannot be carried out (no policy to check against): exit code 2."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: `line` is the trace line, `source` the call's position in the pattern."""

    rule: str
    message: str
    line: int | None = None
    call: str | None = None
    slot: str | None = None
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "line": self.line, "call": self.call,
                "slot": self.slot, "source": self.source}


@dataclass
class AuditReport:
    """What the audit found; `clean` when there is nothing."""

    trace: LoadedTrace
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked_calls: int = 0
    policy_source: str = ""

    @property
    def clean(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        chain = self.trace.chain_break
        return {
            "trace": str(self.trace.path), "run_id": self.trace.run_id,
            "events": len(self.trace.lines), "chain_ok": chain is None,
            "chain_break": {"line": chain.line, "reason": chain.reason} if chain else None,
            "checked_calls": self.checked_calls, "policy": self.policy_source,
            "findings": [finding.to_dict() for finding in self.findings], "notes": self.notes,
        }


def audit_trace(path: str | Path, pattern: str | Path | None = None,
                files: PatternFiles | None = None) -> AuditReport:
    """Audit the trace at `path`; raises TraceReadError / AuditError when it cannot be audited.

    Pattern files (the run's, and nested ones) are read through `files`: a command that
    has read them already (`prose run --report`) hands its own in, and none is read,
    loaded, parsed or analysed again."""
    from prose.pattern_file import PatternFiles

    files = files if files is not None else PatternFiles()
    trace = load_trace(path)
    report = AuditReport(trace)
    if trace.chain_break is not None:
        report.findings.append(Finding("chain", f"the hash chain is broken: {trace.chain_break.reason}",
                                       trace.chain_break.line))
    _check_structure(trace, report)
    _check_seal(trace, report)
    start = trace.run_start
    if start is None:
        return report
    policy, source = _policy(start, trace.path, pattern, report, files)
    _check_calls(trace, policy, source, report, files)
    from prose.ledger.gates import gate_findings

    report.findings.extend(Finding(*found) for found in gate_findings(trace, policy.gates))
    from prose.ledger.results import result_findings

    report.findings.extend(Finding(*found) for found in result_findings(trace, policy.results))
    from prose.ledger.people import person_findings

    report.findings.extend(Finding(*found) for found in person_findings(trace))
    _check_totals(trace, report)
    report.findings.sort(key=lambda finding: finding.line or 0)
    return report


def _check_structure(trace: LoadedTrace, report: AuditReport) -> None:
    first = trace.lines[0]
    if first.type != "run_start":
        report.findings.append(Finding("structure", "the trace does not start with `run_start`",
                                       first.number))
    starts = list(trace.of_type("run_start"))
    for extra in starts[1:]:
        report.findings.append(Finding("structure", "a second `run_start` in one trace", extra.number))
    last = trace.lines[-1]
    if last.type != "run_end":
        report.findings.append(Finding(
            "structure", "the trace does not end with `run_end`: the run did not finish, or the "
            "end of the trace was cut off", last.number))
    run_id = trace.run_id
    for line in trace.lines:
        if line.event.get("run_id") != run_id:
            report.findings.append(Finding("structure", f"the event belongs to run "
                                           f"`{line.event.get('run_id')}`, not `{run_id}`", line.number))
            break


def recorded_pattern(start: TraceLine, trace_path: Path) -> Path:
    """The pattern file run_start names: as written (relative to where the run started), or
    relative to a folder above the trace (`.prose/runs/ID/trace.jsonl` is three levels down)."""
    recorded = Path(str(start.event.get("pattern", "")))
    if recorded.is_absolute() or _is_file(recorded):
        return recorded
    for folder in list(trace_path.resolve().parents)[:4]:
        if _is_file(folder / recorded):
            return folder / recorded
    return recorded


def _is_file(path: Path) -> bool:
    """`path.is_file()`, false for a name the system refuses (too long, a NUL byte)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _source(path: Path, files: PatternFiles) -> PatternSource | None:
    """The pattern file at `path` as the audit reads it, None when it cannot be read,
    loaded or parsed."""
    try:
        return pattern_source(files.get(path))
    except ProseError:
        return None


def _policy(start: TraceLine, trace_path: Path, pattern: str | Path | None,
            report: AuditReport, files: PatternFiles) -> tuple[Policy, PatternSource | None]:
    """The policy to check against and the pattern source (for call sites) if it matches."""
    recorded_data = start.event.get("policy")
    recorded = Policy.from_dict(recorded_data) if isinstance(recorded_data, Mapping) else None
    expected_sha = str(start.event.get("pattern_sha256", ""))
    explicit = pattern is not None
    candidate = Path(pattern) if pattern is not None else recorded_pattern(start, trace_path)
    source: PatternSource | None = None
    if explicit or _is_file(candidate):
        source = _source(candidate, files)
        if source is None and explicit:
            raise AuditError(f"{candidate}: cannot read the pattern file, or it has errors")
    if source is not None and source.sha256 != expected_sha:
        if explicit:
            report.findings.append(Finding(
                "pattern", f"{candidate} is not the pattern this run used: its sha256 differs from "
                f"`pattern_sha256` in run_start", start.number))
        else:
            report.notes.append(f"{candidate} changed since the run (sha256 differs); "
                                "its call sites are not used")
        source = None
    if source is not None:
        if recorded is not None and recorded.strict:  # `--strict-flow` on the run
            source = dataclasses.replace(source, policy=source.policy.with_strict(True))
        if recorded is not None and recorded.to_dict() != source.policy.to_dict():
            report.findings.append(Finding(
                "policy", "the policy recorded in run_start is not the one compiled from the "
                f"pattern file {candidate}", start.number))
        report.policy_source = f"compiled from {candidate} (sha256 matches the trace)"
        return source.policy, source
    if recorded is not None:
        report.policy_source = "recorded in run_start"
        report.notes.append("no matching pattern file: input names are read from the message "
                            "headings (pass --pattern FILE for exact call sites)")
        return recorded, None
    raise AuditError("the trace records no policy and the pattern file is not at hand: "
                     "pass --pattern FILE")


def _check_calls(trace: LoadedTrace, policy: Policy, source: PatternSource | None,
                 report: AuditReport, files: PatternFiles) -> None:
    start = trace.run_start
    assert start is not None
    plain_values = _value_texts([start.event.get("inputs"), start.event.get("config")])
    outputs: dict[str, list[tuple[TraceLine, list[str]]]] = {}
    nested: dict[str, PatternSource | None] = {}
    for line in trace.calls:
        event = line.event
        scope = nesting(event)
        if not scope:
            report.checked_calls += 1
            report.findings.extend(_call_findings(line, policy, source, outputs, scope))
        else:
            file = str(event.get("file", ""))
            if file not in nested:
                nested[file] = _source(Path(file), files) if file else None
                report.notes.append(
                    f"calls inside the nested pattern {file} are checked against that file as it "
                    "is now (the trace records no hash for it)" if nested[file] is not None else
                    f"calls inside the nested pattern {file or '?'} are not checked: it cannot be read")
            inner = nested[file]
            if inner is not None:
                report.checked_calls += 1
                report.findings.extend(_call_findings(line, inner.policy, inner, outputs, scope))
        report.findings.extend(_digest_findings(line))
        if event.get("error") is None:
            # Text a call only echoes from its own messages (a criterion it
            # was asked about, a test name from a record it was given) is not
            # that slot's content: another slot may see it legitimately.
            own = "\n".join(str(message.get("content", "")) for message in event.get("messages") or ()
                             if isinstance(message, Mapping))
            leaves = [text for text in _leaf_texts(event.get("output"))
                      if text not in plain_values and not _occurs(text, own)]
            key = scope + str(event.get("slot", ""))
            outputs.setdefault(key, []).append((line, leaves))
    uses = recorded_uses(start.event)
    _check_tools(trace, policy, uses, report)
    for line in trace.lines:
        if line.event.get("type") == "error" and line.event.get("kind") == "information-hiding":
            _check_refused(line, policy, report, uses)


def _check_tools(trace: LoadedTrace, policy: Policy, uses: list[ToolUse],
                 report: AuditReport) -> None:
    """Every tool call that ran, judged by the policy again (`tool_audit`)."""
    for number, call, slot, message in tool_findings(trace, policy, uses):
        report.findings.append(Finding(TOOLS_RULE, message, number, call, slot))


def _check_refused(line: TraceLine, policy: Policy, report: AuditReport,
                   uses: list[ToolUse]) -> None:
    """The run stopped a call: judge the refused call again, from what the trace recorded."""
    event = line.event
    refused = event.get("refused")
    slot = str(event.get("slot") or "")
    if not isinstance(refused, Mapping) or not slot:
        report.notes.append(f"line {line.number}: the run was stopped by the run-time policy "
                            "before a leaking call was sent (the trace does not record the "
                            "refused call, so it is not judged again)")
        return
    channels = [channel_from_dict(item) for item in refused.get("channels") or ()
                if isinstance(item, Mapping)]
    branch = tuple(str(step) for step in refused.get("branch") or ())
    index = refused.get("index")
    if "tool" in refused:  # a tool call refused before it ran (`prose.lang.tools`)
        found = [TOOLS_RULE] if refused_tool_call(refused, slot, policy, uses) else []
    else:
        entry = refused.get("entry")
        found = sorted({violation.rule for violation in policy.violations(
            slot, channels, branch, int(index) if isinstance(index, int) else -1,
            entry if isinstance(entry, str) else None)})
    recorded = sorted(set(event.get("rules") or ()))
    where = f"{event.get('file')}:{event.get('line')}" if event.get("line") else None
    if found != recorded:
        report.findings.append(Finding(
            "refused", f"the run stopped the call to `{slot}` for {', '.join(recorded) or 'no rule'}"
            f", but the policy judges the recorded call as {', '.join(found) or 'allowed'}",
            line.number, None, slot, where))
        return
    report.notes.append(f"line {line.number}: the run stopped the call to `{slot}` before it "
                        f"was sent ({', '.join(found)}); the audit agrees")


def _check_seal(trace: LoadedTrace, report: AuditReport) -> None:
    """The seal written when the run closed its trace covers the last line too."""
    from prose.runtime.integrity import seal_path, seal_problem

    ended = trace.run_end is not None
    problem = seal_problem(trace.path, trace.path.read_bytes(), ended)
    if problem is not None:
        report.findings.append(Finding("seal", problem, trace.line_count if ended else None))
    elif not seal_path(trace.path).is_file():
        report.notes.append("no seal (`.sha256`) next to the trace: the run did not end, so its "
                            "last line is not covered")


def _call_findings(line: TraceLine, policy: Policy, source: PatternSource | None,
                   outputs: Mapping[str, list[tuple[TraceLine, list[str]]]],
                   scope: str) -> Iterator[Finding]:
    event = line.event
    slot = str(event.get("slot", ""))
    call_id = str(event.get("id", ""))
    where = f"{event.get('file')}:{event.get('line')}" if event.get("line") else None
    names, literal, exact = _inputs_and_literals(event, source)
    hint = "" if exact else " (input names read from the message headings)"

    def finding(rule: str, message: str) -> Finding:
        return Finding(rule, message, line.number, call_id, slot, where)

    provenance = frozenset(event.get("provenance") or ())
    transitive = frozenset(event.get("transitive") or ()) | provenance
    channels = _channels(event, names, literal, provenance, transitive)
    branch = tuple(str(step) for step in event.get("branch") or ())
    index = event.get("index")
    index = int(index) if isinstance(index, int) else -1
    entry = event.get("entry")
    for violation in _dedupe(policy.violations(slot, channels, branch, index,
                                               entry if isinstance(entry, str) else None)):
        recorded = " (recorded provenance)" if violation.other and violation.rule != "unaware-of" else ""
        yield finding(violation.rule, violation.message + (hint if violation.channel in names
                                                           else "") + recorded)
    rules = policy.slots.get(slot)
    if rules is None:
        return
    sent = "\n".join(str(message.get("content", "")) for message in event.get("messages") or ()
                     if isinstance(message, Mapping))
    for other in dict.fromkeys(hidden.other for hidden in rules.hidden):
        if other in transitive:
            continue  # already reported, or (for direct never-sees) passed on by another slot
        for earlier, leaves in outputs.get(scope + other, ()):
            if any(_occurs(text, sent) for text in leaves):
                yield finding("never-sees-content", f"the messages contain output of `{other}` "
                              f"(call {earlier.event.get('id')}, line {earlier.number}), which "
                              f"`{slot}` must never see, though the recorded provenance omits it")
                break


def _channels(event: Mapping[str, Any], names: list[str], literal: list[str],
              provenance: frozenset[str], transitive: frozenset[str]) -> list[Channel]:
    """The channels of a recorded call, as `prose.lang.channels` names them.

    A trace records one provenance per call, so every input channel gets it
    (the audit cannot tell which input carried it); the pattern's literal text
    and the system message (the slot's `ensures` and the role prompt) are
    checked for forbidden words as the run time checks them.
    """
    chains = chains_from(event.get("chains"))
    channels = [Channel(name, "input", provenance, transitive, (name,), chains) for name in names]
    if not names and (provenance or chains):
        channels.append(Channel("prompt", "prompt", provenance, transitive, (), chains))
    channels.append(Channel("literal text", "prompt", literal=tuple(literal)))
    system = [str(m.get("content", "")) for m in event.get("messages") or ()
              if isinstance(m, Mapping) and m.get("role") == "system"]
    if system:
        channels.append(Channel("system message", "role", literal=tuple(system)))
    return channels


def _dedupe(violations: list[Violation]) -> list[Violation]:
    seen: set[tuple[str, str | None, str | None, str | None]] = set()
    kept = []
    for violation in violations:
        key = (violation.rule, violation.other, violation.word,
               violation.channel if violation.rule in ("requires", "sees-only") else None)
        if key not in seen:
            seen.add(key)
            kept.append(violation)
    return kept


def _inputs_and_literals(event: Mapping[str, Any],
                         source: PatternSource | None) -> tuple[list[str], list[str], bool]:
    """The call's input names, the pattern's literal text it sent, and whether both are exact."""
    if source is not None:
        site = source.call_at(int(event.get("line") or 0), int(event.get("column") or 0))
        if site is not None:
            return list(site.inputs), [*site.inputs, *site.literals], True
    messages = [m for m in event.get("messages") or () if isinstance(m, Mapping)]
    for message in messages:
        if message.get("role") in ("arguments", "inputs"):
            try:
                data = json.loads(str(message.get("content", "")))
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict):
                names = [name for name in data if name != "prompt"]
                return names, names, True
    user = next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")
    names = list(dict.fromkeys(_HEADING.findall(user)))
    return names, names, False


def _digest_findings(line: TraceLine) -> Iterator[Finding]:
    from prose.runtime.integrity import output_problem

    problem = output_problem(line.event)
    if problem is not None:
        yield Finding("output-digest", problem, line.number, str(line.event.get("id", "")),
                      str(line.event.get("slot", "")))


def _check_totals(trace: LoadedTrace, report: AuditReport) -> None:
    end = trace.run_end
    if end is None:
        return
    totals = end.event.get("totals") or {}
    spent = [0, 0]
    for line in (*trace.calls, *trace.judgements):
        if line.event.get("cache_hit"):
            continue
        usage = line.event.get("usage") or {}
        spent[0] += int(usage.get("prompt_tokens") or 0)
        spent[1] += int(usage.get("completion_tokens") or 0)
    for index, key in enumerate(("prompt_tokens", "completion_tokens")):
        if key in totals and totals[key] != spent[index]:
            report.findings.append(Finding(
                "totals", f"run_end records {totals[key]} {key.replace('_', ' ')}, but the "
                f"recorded calls add up to {spent[index]}", end.number))


def _leaf_texts(value: Any) -> list[str]:
    """The strings inside an output that are long enough to identify it."""
    if isinstance(value, str):
        return [value] if len(value.strip()) >= MIN_LEAK_TEXT else []
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _leaf_texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _leaf_texts(item)]
    return []


def _value_texts(values: list[Any]) -> set[str]:
    return {text for value in values for text in _leaf_texts(value)}


def _occurs(text: str, sent: str) -> bool:
    """`text` appears in the messages as itself or as it reads inside rendered JSON."""
    return text in sent or json.dumps(text, ensure_ascii=False)[1:-1] in sent
