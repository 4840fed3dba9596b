"""The run a report shows, read from its trace alone (plus the pattern file, for the graph).

Nothing here is computed twice: the audit is `prose audit`'s (`audit_trace`),
the spend and critic metrics are `prose stats`'s (`trace_stats`), the graph is
`prose explain`'s (`prose.report.graph`). What this module adds is the shape
a page needs: one `Step` per call attempt or judge decision, placed in time
(an event's `time` is when the attempt started; its `latency_ms` how long it
took) and on a lane, so that calls that overlapped in time (parallel
branches) sit side by side.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.errors import ProseError
from prose.ledger.audit import AuditReport, Finding, audit_trace
from prose.ledger.stats import trace_stats
from prose.ledger.trace_file import LoadedTrace, TraceLine, load_trace, slot_label
from prose.runtime.trace import sha256_text

if TYPE_CHECKING:
    from prose.pattern_file import PatternFile, PatternFiles

# The audit's rules that say the file changed after the run wrote it (not a policy finding).
DAMAGE_RULES = ("chain", "seal", "output-digest", "totals", "structure")


@dataclass(frozen=True)
class Integrity:
    """What the audit says about the trace, in the words the page's banner uses."""

    chain_ok: bool
    first_bad_line: int | None
    reason: str | None
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    policy_source: str
    error: str | None = None  # the audit could not run (no policy, no pattern file)

    @property
    def tampered(self) -> bool:
        return not self.chain_ok or any(f.rule in DAMAGE_RULES for f in self.findings)

    @property
    def summary(self) -> str:
        if not self.chain_ok:
            return f"hash chain BROKEN at line {self.first_bad_line}: {self.reason}"
        if self.tampered:
            first = next(f for f in self.findings if f.rule in DAMAGE_RULES)
            return f"trace DAMAGED at line {first.line}: {first.message}"
        if self.error is not None:
            return f"hash chain intact; policy not checked: {self.error}"
        if self.findings:
            return f"hash chain intact; {len(self.findings)} audit finding(s)"
        return "hash chain intact; every call within the policy"


@dataclass(frozen=True)
class Step:
    """One call attempt or judge decision, as the timeline and the transcripts show it."""

    kind: str  # "call" or "judge"
    line: int  # its line in the trace
    event: Mapping[str, Any]
    start_ms: float  # since the run started
    duration_ms: float
    lane: int = 0

    @property
    def id(self) -> str:
        return str(self.event.get("id", ""))

    @property
    def failed(self) -> bool:
        return bool(self.event.get("error"))

    @property
    def retry(self) -> bool:
        return int(self.event.get("attempt") or 1) > 1

    @property
    def cut(self) -> bool:
        """Whether the reply stopped at the token cap (the provider's finish reason `length`)."""
        return self.event.get("finish_reason") == "length"

    @property
    def slot(self) -> str:
        return slot_label(self.event, index=False) if self.kind == "call" else "judge"


@dataclass
class RunReport:
    """Everything the HTML page shows about one run."""

    trace: LoadedTrace
    integrity: Integrity
    steps: list[Step]
    lanes: int
    wall_ms: float
    stats: dict[str, Any]
    policy_verdicts: dict[str, list[str]]  # call id -> audit findings about it
    pattern_path: Path | None
    pattern_text: str | None
    unchecked_calls: set[str] = field(default_factory=set)
    pattern_file: PatternFile | None = None  # read, loaded and parsed once (the graph's)

    @property
    def start(self) -> Mapping[str, Any]:
        line = self.trace.run_start
        return line.event if line is not None else {}

    @property
    def end(self) -> Mapping[str, Any] | None:
        line = self.trace.run_end
        return line.event if line is not None else None

    @property
    def pattern_sha_matches(self) -> bool:
        """Whether the pattern file at hand is the one the run used (its sha256 is recorded)."""
        if self.pattern_text is None:
            return False
        return sha256_text(self.pattern_text) == self.start.get("pattern_sha256")

    @property
    def policy(self) -> Mapping[str, Any]:
        policy = self.start.get("policy")
        return policy if isinstance(policy, Mapping) else {}


def read_run(trace_path: str | Path, pattern: str | Path | None = None,
             files: PatternFiles | None = None) -> RunReport:
    """Read and audit the trace at `trace_path`. Raises TraceReadError when it is no trace.

    The pattern file is read once, through `files` (the run's own when `prose run
    --report` writes the page), for the audit and the graph alike."""
    from prose.pattern_file import PatternFiles

    files = files if files is not None else PatternFiles()
    trace, integrity = _audited(trace_path, pattern, files)
    steps, lanes = _steps(trace)
    end = trace.run_end
    begin = trace.run_start
    wall_ms = max((s.start_ms + s.duration_ms for s in steps), default=0.0)
    if begin is not None and end is not None:
        wall_ms = max(wall_ms, (float(end.event.get("time") or 0) -
                                float(begin.event.get("time") or 0)) * 1000.0)
    verdicts: dict[str, list[str]] = {}
    for finding in integrity.findings:
        if finding.call:
            verdicts.setdefault(finding.call, []).append(f"{finding.rule}: {finding.message}")
    unchecked = {s.id for s in steps if s.kind == "call" and ">" in s.slot} \
        if integrity.error is None else {s.id for s in steps if s.kind == "call"}
    file = _pattern(trace, pattern, files)
    return RunReport(trace, integrity, steps, lanes, wall_ms, trace_stats(trace).to_dict(),
                     verdicts, Path(file.path) if file else None, file.text if file else None,
                     unchecked, file)


def _audited(trace_path: str | Path, pattern: str | Path | None,
             files: PatternFiles) -> tuple[LoadedTrace, Integrity]:
    """The trace and the audit's verdict; an audit that cannot run still leaves the chain's."""
    from prose.ledger.audit import AuditError

    try:
        audit: AuditReport = audit_trace(trace_path, pattern, files)
    except AuditError as error:
        trace = load_trace(trace_path)
        chain = trace.chain_break
        return trace, Integrity(chain is None, chain.line if chain else None,
                                chain.reason if chain else None, (), (), "", str(error))
    chain = audit.trace.chain_break
    return audit.trace, Integrity(chain is None, chain.line if chain else None,
                                  chain.reason if chain else None, tuple(audit.findings),
                                  tuple(audit.notes), audit.policy_source)


def _steps(trace: LoadedTrace) -> tuple[list[Step], int]:
    """Calls and judgements placed in time and on lanes (first free lane, by start time)."""
    begin = trace.run_start
    origin = float(begin.event.get("time") or 0) if begin is not None else None
    found: list[tuple[TraceLine, float, float]] = []
    for line in trace.lines:
        if line.type not in ("call", "judge"):
            continue
        started = float(line.event.get("time") or 0)
        if origin is None:
            origin = started
        found.append((line, (started - origin) * 1000.0,
                      max(0.0, float(line.event.get("latency_ms") or 0.0))))
    lane_ends: list[float] = []
    steps: list[Step] = []
    for line, start_ms, duration in sorted(found, key=lambda item: (item[1], item[0].number)):
        lane = next((i for i, ends in enumerate(lane_ends) if ends <= start_ms + 0.01), None)
        if lane is None:
            lane = len(lane_ends)
            lane_ends.append(0.0)
        lane_ends[lane] = start_ms + duration
        steps.append(Step(line.type, line.number, line.event, start_ms, duration, lane))
    steps.sort(key=lambda step: step.line)  # trace order: the order the run recorded them
    return steps, max(1, len(lane_ends))


def _pattern(trace: LoadedTrace, given: str | Path | None,
             files: PatternFiles) -> PatternFile | None:
    """The pattern file the run used, when it is at hand (the graph and source lines need it).

    A path the trace names is used only when the file there is a pattern file (the one whose
    sha256 run_start records, or one that loads as a pattern): a trace someone sends names
    what it likes (`~/.aws/credentials`), and its lines would be copied into the page."""
    from prose.ledger.audit import recorded_pattern

    start = trace.run_start
    if given is not None:
        path = Path(given)
    elif start is not None:
        path = recorded_pattern(start, trace.path)
    else:
        return None
    try:
        file = files.get(path)
    except (ProseError, RecursionError, ValueError):
        return None
    if given is None and not _is_the_pattern(file, start):
        return None
    return file


def _is_the_pattern(file: PatternFile, start: TraceLine | None) -> bool:
    """Whether `file` is the recorded pattern (by its sha256) or at least a pattern file."""
    if start is not None and sha256_text(file.text) == start.event.get("pattern_sha256"):
        return True
    return file.spec is not None and file.program is not None
