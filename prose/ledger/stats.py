"""`trace_stats`: what a run spent and how its critics behaved, per slot and per run.

Spend: calls (every attempt, failed ones included), tokens, cost, latency
(mean and p95, nearest rank). Rounds: the iterations of the outermost loop a
slot was called in, read from each call's loop path
(`/loop@60:3#2` is the third iteration of the loop at 60:3); a slot called
outside any loop counts one round per call.

Critic metrics (the calibration metrics of the C3 adversarial-review paper)
come from outputs that are objects with an `issues` list (or a `findings`
list, as the two-reviewer gate's reviewers return) and/or a `no_issues_found`
flag: issues per round, issues per turn (per verdict), the
share of empty verdicts (no issues, or `no_issues_found: true`), and
convergence, the round of the first empty verdict (None: never converged).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prose.ledger.trace_file import LoadedTrace, TraceLine, slot_label

_SEGMENT = re.compile(r"^(loop|repeat|for)@(\d+):(\d+)#(\d+)$")


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (`share` in 0..1) of `values`; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def loop_segments(path: str) -> list[tuple[str, int]]:
    """(loop site, iteration index) for each loop in a call's path, outermost first."""
    out: list[tuple[str, int]] = []
    for part in path.split("/"):
        match = _SEGMENT.match(part)
        if match:
            out.append((f"{match[1]}@{match[2]}:{match[3]}", int(match[4])))
    return out


def loop_words(path: str) -> str:
    """A call's loop path in the language's own numbering: `loop` and `repeat` iterations
    count from 1 (as `round` in `loop ... as round` and `repeat N as i`), a `for` item's
    index from 0 (as `i` in `for x, i in xs`). `"top level"` outside any loop.

    The trace keeps its path as the run time writes it (`/loop@60:3#0`: iteration
    indexes from 0), because resuming a run matches calls by it.
    """
    parts = []
    for site, index in loop_segments(path):
        kind, _, where = site.partition("@")
        parts.append(f"`{kind}` at {where} item {index}" if kind == "for"
                     else f"`{kind}` at {where} round {index + 1}")
    return ", ".join(parts) if parts else "top level"


def _round(event: Mapping[str, Any]) -> tuple[str, int] | None:
    """The outermost loop iteration a call ran in: (site, 1-based round)."""
    segments = loop_segments(str(event.get("path") or ""))
    return (segments[0][0], segments[0][1] + 1) if segments else None


@dataclass
class SlotStats:
    """The spend of one slot in one run (or over several runs)."""

    slot: str
    calls: int = 0
    failed: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latencies: list[float] = field(default_factory=list)
    rounds: set[tuple[int, str, int]] = field(default_factory=set)  # (run, site or "", round)

    def add(self, event: Mapping[str, Any], run: int) -> None:
        usage = event.get("usage") or {}
        self.calls += 1
        self.failed += 1 if event.get("error") else 0
        self.cache_hits += 1 if event.get("cache_hit") else 0
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.cost_usd += float(event.get("cost_usd") or 0.0)
        self.latencies.append(float(event.get("latency_ms") or 0.0))
        found = _round(event)
        self.rounds.add((run, *found) if found else (run, "", self.calls))

    def to_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot, "calls": self.calls, "failed": self.failed,
            "cache_hits": self.cache_hits, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "cost_usd": round(self.cost_usd, 8),
            "latency_mean_ms": _rounded(mean(self.latencies)),
            "latency_p95_ms": _rounded(percentile(self.latencies, 0.95)),
            "rounds": len(self.rounds),
        }


@dataclass
class CriticStats:
    """The verdicts of one slot whose outputs are review verdicts."""

    slot: str
    issues_by_round: dict[int, int] = field(default_factory=dict)
    severities: dict[str, int] = field(default_factory=dict)
    verdicts: int = 0
    empty: int = 0
    issues: int = 0
    convergence: list[int | None] = field(default_factory=list)  # one per run

    def to_dict(self) -> dict[str, Any]:
        converged = [c for c in self.convergence if c is not None]
        return {
            "slot": self.slot, "verdicts": self.verdicts, "issues": self.issues,
            "issues_per_round": [{"round": r, "issues": self.issues_by_round[r]}
                                 for r in sorted(self.issues_by_round)],
            "issues_per_turn": _rounded(self.issues / self.verdicts if self.verdicts else None),
            "empty_verdict_share": _rounded(self.empty / self.verdicts if self.verdicts else None),
            "severities": dict(sorted(self.severities.items())),
            "convergence": (self.convergence[0] if len(self.convergence) == 1
                            else _rounded(mean([float(c) for c in converged]))),
            "converged_runs": len(converged), "runs": len(self.convergence),
        }


def verdict_issues(output: Any) -> list[Any] | None:
    """The issues of a review verdict (its `issues` list, else its `findings` list), or None
    when the output is no verdict."""
    if not isinstance(output, Mapping):
        return None
    for key in ("issues", "findings"):
        if isinstance(output.get(key), list):
            return list(output[key])
    if "no_issues_found" in output:
        return []
    return None


def is_empty_verdict(output: Mapping[str, Any], issues: list[Any]) -> bool:
    return output.get("no_issues_found") is True or not issues


@dataclass
class RunStats:
    """Everything `prose stats` reports about one trace (or, merged, about several)."""

    traces: list[str]
    run_ids: list[str]
    pattern: str
    status: str
    slots: dict[str, SlotStats] = field(default_factory=dict)
    critics: dict[str, CriticStats] = field(default_factory=dict)
    loops: dict[str, int] = field(default_factory=dict)
    loops_at_max: list[str] = field(default_factory=list)
    judgements: dict[str, int] = field(default_factory=lambda: {"total": 0, "true": 0,
                                                                 "false": 0, "failed": 0})
    # Agents' tool calls (docs/agents.md): per tool, how many, how many failed or were
    # refused, and their total time.
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def rounds(self) -> int | None:
        """The outermost loop's iterations (the most, over loops), else the most calls to a slot."""
        top = [count for site, count in self.loops.items() if "/" not in site]
        if top:
            return max(top)
        return max((slot.calls for slot in self.slots.values()), default=None)

    def totals(self) -> SlotStats:
        total = SlotStats("total")
        for slot in self.slots.values():
            total.calls += slot.calls
            total.failed += slot.failed
            total.cache_hits += slot.cache_hits
            total.prompt_tokens += slot.prompt_tokens
            total.completion_tokens += slot.completion_tokens
            total.cost_usd += slot.cost_usd
            total.latencies += slot.latencies
        return total

    def to_dict(self) -> dict[str, Any]:
        totals = self.totals().to_dict()
        del totals["slot"], totals["rounds"]
        return {
            "traces": self.traces, "run_ids": self.run_ids, "pattern": self.pattern,
            "status": self.status, "rounds": self.rounds, "totals": totals,
            "slots": [slot.to_dict() for slot in self.slots.values()],
            "loops": [{"site": site, "iterations": count, "reached_max": site in self.loops_at_max}
                      for site, count in self.loops.items()],
            "judgements": dict(self.judgements),
            "critics": [critic.to_dict() for critic in self.critics.values()],
            "tools": [{"tool": name, **counts} for name, counts in self.tools.items()],
        }


def trace_stats(trace: LoadedTrace) -> RunStats:
    """The statistics of one run."""
    return merge_stats([trace])


def merge_stats(traces: Iterable[LoadedTrace]) -> RunStats:
    """The statistics of several runs together (per slot, summed; critics per run)."""
    items = list(traces)
    statuses = {_status(trace) for trace in items}
    patterns = {trace.pattern_name for trace in items}
    stats = RunStats([str(t.path) for t in items], [t.run_id for t in items],
                     ", ".join(sorted(patterns)), ", ".join(sorted(statuses)))
    for run, trace in enumerate(items):
        _add_run(stats, run, trace)
    return stats


def _status(trace: LoadedTrace) -> str:
    end = trace.run_end
    return str(end.event.get("status")) if end is not None else "unfinished"


def _add_run(stats: RunStats, run: int, trace: LoadedTrace) -> None:
    iterations: dict[str, set[str]] = {}
    verdicts: dict[str, list[tuple[int, Mapping[str, Any], list[Any]]]] = {}
    for line in trace.calls:
        event = line.event
        slot = slot_label(event, index=False)
        stats.slots.setdefault(slot, SlotStats(slot)).add(event, run)
        _count_iterations(str(event.get("path") or ""), iterations)
        issues = verdict_issues(event.get("output")) if not event.get("error") else None
        if issues is not None:
            found = _round(event)
            order = found[1] if found else len(verdicts.get(slot, ())) + 1
            verdicts.setdefault(slot, []).append((order, event["output"], issues))
    for site, seen in iterations.items():
        stats.loops[site] = stats.loops.get(site, 0) + len(seen)
    for line in trace.of_type("note"):
        if line.event.get("what") == "loop_max":
            site = _site_of(str((line.event.get("detail") or {}).get("path", "")))
            if site and site not in stats.loops_at_max:
                stats.loops_at_max.append(site)
    _add_judgements(stats, trace.judgements)
    for line in trace.of_type("tool"):
        event = line.event
        counts = stats.tools.setdefault(str(event.get("tool")), {
            "calls": 0, "failed": 0, "duration_ms": 0.0, "isolation": []})
        counts["calls"] += 1
        counts["failed"] += 1 if event.get("error") else 0
        counts["duration_ms"] = round(counts["duration_ms"] + float(event.get("duration_ms")
                                                                     or 0), 3)
        if event.get("isolation") and event["isolation"] not in counts["isolation"]:
            counts["isolation"].append(event["isolation"])
    for slot, slot_verdicts in verdicts.items():
        _add_critic(stats.critics.setdefault(slot, CriticStats(slot)), slot_verdicts)


def _count_iterations(path: str, iterations: dict[str, set[str]]) -> None:
    """Record each loop iteration on `path`; a nested loop's site is written `outer/inner`."""
    sites: list[str] = []
    prefix = ""
    for part in path.split("/"):
        if not part:
            continue
        prefix += "/" + part
        match = _SEGMENT.match(part)
        if match:
            sites.append(f"{match[1]}@{match[2]}:{match[3]}")
            iterations.setdefault("/".join(sites), set()).add(prefix)


def _site_of(path: str) -> str:
    """The nested site name (`outer/inner`) of the loop a `loop_max` note's path names."""
    sites = [site for site, _ in loop_segments(path + "#0")]
    return "/".join(sites)


def _add_judgements(stats: RunStats, judgements: list[TraceLine]) -> None:
    for line in judgements:
        event = line.event
        stats.judgements["total"] += 1
        if event.get("error"):
            stats.judgements["failed"] += 1
        elif event.get("decision") is True:
            stats.judgements["true"] += 1
        elif event.get("decision") is False:
            stats.judgements["false"] += 1
        else:
            key = f"choice:{event.get('decision')}"
            stats.judgements[key] = stats.judgements.get(key, 0) + 1


def _add_critic(critic: CriticStats, found: list[tuple[int, Mapping[str, Any], list[Any]]]) -> None:
    convergence: int | None = None
    for order, output, issues in found:
        critic.verdicts += 1
        critic.issues += len(issues)
        critic.issues_by_round[order] = critic.issues_by_round.get(order, 0) + len(issues)
        for issue in issues:
            severity = issue.get("severity") if isinstance(issue, Mapping) else None
            if isinstance(severity, str):
                critic.severities[severity] = critic.severities.get(severity, 0) + 1
        if is_empty_verdict(output, issues):
            critic.empty += 1
            if convergence is None:
                convergence = order
    critic.convergence.append(convergence)


def _rounded(value: float | None) -> float | None:
    return round(value, 3) if value is not None else None


# --- plain-text tables (no colour, no rich: safe to paste and to diff) ----------

SLOT_COLUMNS = ("slot", "calls", "failed", "prompt", "completion", "tokens", "cost_usd",
                "lat_mean_ms", "lat_p95_ms", "rounds")


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$|^-$")


def _fixed(value: Any, digits: int) -> str:
    return "-" if value is None else f"{float(value):.{digits}f}"


def grid(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned, text left-aligned."""
    cells = [["-" if cell is None else str(cell) for cell in row] for row in rows]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    numeric = [bool(cells) and all(_NUMBER.match(row[i]) for row in cells)
               for i in range(len(headers))]

    def line(items: Sequence[str]) -> str:
        parts = [item.rjust(widths[i]) if numeric[i] else item.ljust(widths[i])
                 for i, item in enumerate(items)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def render_run(stats: RunStats, title: str) -> str:
    """One run (or the merged runs) as a header, a slot table, loops, judgements and critics."""
    data = stats.to_dict()
    out = [title]
    rows = [_slot_row(slot, slot["rounds"]) for slot in data["slots"]]
    rows.append(_slot_row({**data["totals"], "slot": "total"}, data["rounds"]))
    out += ["", grid(SLOT_COLUMNS, rows)]
    if data["loops"]:
        out += ["", "loops:"]
        out += [f"  {loop['site']}: {loop['iterations']} iteration(s)"
                + (" (reached its max)" if loop["reached_max"] else "") for loop in data["loops"]]
    judgements = data["judgements"]
    extra = "".join(f", {key.removeprefix('choice:')}: {count}" for key, count in judgements.items()
                    if key.startswith("choice:"))
    out += ["", f"judgements: {judgements['total']} (true {judgements['true']}, false "
                f"{judgements['false']}, failed {judgements['failed']}{extra})"]
    if data["tools"]:
        out += ["", "tool calls:", ""]
        out.append(grid(("tool", "calls", "failed", "duration_ms", "isolation"), [
            [t["tool"], t["calls"], t["failed"], _fixed(t["duration_ms"], 1),
             ", ".join(t["isolation"]) or "-"] for t in data["tools"]]))
    if data["critics"]:
        out += ["", "critic findings:", ""]
        out.append(grid(("critic", "verdicts", "issues", "per_round", "per_turn", "empty_share",
                         "converged_at", "severities"), [_critic_row(c) for c in data["critics"]]))
    return "\n".join(out)


def _slot_row(slot: dict[str, Any], rounds: Any) -> list[Any]:
    return [slot["slot"], slot["calls"], slot["failed"], slot["prompt_tokens"],
            slot["completion_tokens"], slot["total_tokens"], _fixed(slot["cost_usd"], 6),
            _fixed(slot["latency_mean_ms"], 1), _fixed(slot["latency_p95_ms"], 1), rounds]


def _critic_row(critic: dict[str, Any]) -> list[Any]:
    severities = ", ".join(f"{k} {v}" for k, v in critic["severities"].items()) or "-"
    convergence = critic["convergence"]
    if critic["runs"] > 1:
        converged = f"{convergence if convergence is not None else '-'} " \
                    f"({critic['converged_runs']}/{critic['runs']} runs)"
    else:
        converged = f"round {convergence}" if convergence is not None else "never"
    return [critic["slot"], critic["verdicts"], critic["issues"],
            " ".join(f"r{item['round']}={item['issues']}" for item in critic["issues_per_round"]),
            _fixed(critic["issues_per_turn"], 2), _fixed(critic["empty_verdict_share"], 2),
            converged, severities]


def run_title(stats: RunStats) -> str:
    return (f"run {', '.join(stats.run_ids)}  pattern {stats.pattern}  status {stats.status}  "
            f"({', '.join(stats.traces)})")
