"""A `RunReport` as one self-contained HTML page.

The page loads nothing: its CSS and JavaScript are inlined (package data in
`prose/report/assets/`), the graph is inline SVG, and its Content Security
Policy forbids every fetch and allows only the one script whose sha256 it
names. The trace is untrusted input (a model's reply may hold `<script>`):
the parts written here are HTML-escaped, and the steps go to the script as
JSON in a `<script type="application/json">` block with `<`, `>` and `&`
written as `\\u003c`, `\\u003e` and `\\u0026`, which the script puts into
the page with `textContent` only.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from prose.ledger.trace_file import slot_label
from prose.report.graph import explain_pattern, flow_graph, render_svg
from prose.report.model import RunReport, Step

STATUS_WORDS = {"ok": "finished", "error": "stopped by an error", "budget": "stopped by a budget",
                "violation": "stopped: information-hiding violation",
                "interrupted": "interrupted"}


def asset(name: str) -> str:
    """The text of a file in `prose/report/assets/`."""
    return resources.files("prose.report").joinpath("assets", name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """`data` as JSON that cannot end the `<script>` element it is written into."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def render_html(report: RunReport) -> str:
    """The whole page."""
    script = asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    name = report.trace.pattern_name or "run"
    body = [
        _banner(report), _header(report), _timeline(report), _people(report), _transcripts(),
        _graph(report),
        _policy(report), _budget(report), _stats(report), _domain(report), _result(report),
        f'<footer>Written by <code>prose report</code> from {escape(str(report.trace.path))} '
        f"({report.trace.line_count} lines) on "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.</footer>",
    ]
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{escape(csp)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(name)}: prose run {escape(report.trace.run_id)}</title>",
        f"<style>{asset('report.css')}</style></head><body><main>",
        *body,
        '</main><aside id="detail" hidden aria-label="call details"><header>'
        '<h3 id="detail-title"></h3><button id="detail-close" class="close">close (Esc)</button>'
        '</header><div id="detail-body"></div></aside>',
        f'<script type="application/json" id="run-data">{script_json(_payload(report))}</script>',
        f"<script>{script}</script></body></html>",
    ])


# --- the data the script renders --------------------------------------------------------------


def _payload(report: RunReport) -> dict[str, Any]:
    lines = (report.pattern_text or "").splitlines()
    same_file = _same_file(report)
    tools = tool_calls(report)
    steps = [_step(step, report, lines if same_file(step) else []) for step in report.steps]
    for step in steps:
        if step["k"] == "call" and step["id"] in tools:
            step["tools"] = tools[step["id"]]
    return {"steps": steps, "wall": report.wall_ms, "lanes": report.lanes,
            "policies": slot_policies(report)}


def tool_calls(report: RunReport) -> dict[str, list[dict[str, Any]]]:
    """An agent's tool calls by the id of the call they were made in, in order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for line in report.trace.of_type("tool"):
        event = line.event
        out.setdefault(str(event.get("call")), []).append({
            "tool": str(event.get("tool") or ""), "turn": int(event.get("turn") or 0),
            "args": _text(event.get("arguments")), "out": _text(event.get("output")),
            "err": str(event.get("error") or ""), "d": float(event.get("duration_ms") or 0.0),
            "iso": str(event.get("isolation") or ""), "tline": line.number})
    return out


def slot_policies(report: RunReport) -> dict[str, dict[str, list[str]]]:
    """Per slot, what the recorded policy lets it see: `requires`, `sees_only` and the texts of
    the invariants that hide other slots from it (`hidden`)."""
    slots = report.policy.get("slots")
    out: dict[str, dict[str, list[str]]] = {}
    for name, policy in (slots.items() if isinstance(slots, Mapping) else ()):
        if not isinstance(policy, Mapping):
            continue
        hidden = [str(h.get("text") or h.get("other")) if isinstance(h, Mapping) else str(h)
                  for h in policy.get("hidden") or []]
        out[str(name)] = {"requires": [str(r) for r in policy.get("requires") or []],
                          "sees_only": [str(r) for r in policy.get("sees_only") or []],
                          "hidden": list(dict.fromkeys(hidden))}
    return out


def _same_file(report: RunReport) -> Any:
    pattern = report.pattern_path.resolve() if report.pattern_path is not None else None

    def check(step: Step) -> bool:
        file = str(step.event.get("file") or "")
        return pattern is not None and bool(file) and Path(file).resolve() == pattern

    return check


def _step(step: Step, report: RunReport, source: Sequence[str]) -> dict[str, Any]:
    event = step.event
    usage = event.get("usage") or {}
    line = int(event.get("line") or 0)
    error = event.get("error")
    out: dict[str, Any] = {
        "k": step.kind, "id": step.id, "slot": step.slot, "tline": step.line,
        "label": slot_label(event) if step.kind == "call" else "judge",
        "model": event.get("model") or "", "t": round(step.start_ms, 3),
        "d": round(step.duration_ms, 3), "lane": step.lane,
        "attempt": int(event.get("attempt") or 1), "retry": step.retry, "failed": step.failed,
        "cut": step.cut,
        "err": _error_text(error) if error else "", "cache": bool(event.get("cache_hit")),
        "pin": int(usage.get("prompt_tokens") or 0), "pout": int(usage.get("completion_tokens") or 0),
        "cost": float(event.get("cost_usd") or 0.0), "requests": event.get("requests") or "",
        "file": event.get("file") or "", "line": line, "col": int(event.get("column") or 0),
        "src": source[line - 1].strip() if 0 < line <= len(source) else "",
        "path": event.get("path") or "",
        "branch": "/".join(event.get("branch") or []) if step.kind == "call" else "",
        "msgs": [{"role": str(m.get("role", "")), "content": _text(m.get("content"))}
                 for m in event.get("messages") or [] if isinstance(m, Mapping)],
    }
    if step.kind == "call":
        out.update(out=_text(event.get("output")), prov=list(event.get("provenance") or []),
                   trans=list(event.get("transitive") or []), verdict=_verdict(step, report),
                   by=_answered(event.get("answered")))
    else:
        out.update(kind=event.get("kind"), text=event.get("text") or "",
                   decision=event.get("decision"), reason=event.get("reason") or "",
                   values=_text(event.get("values")) if event.get("values") else "", prov=[],
                   trans=[])
    return out


def _answered(answered: Any) -> str:
    """Who answered a person's question, how and when (docs/people.md), as one line."""
    if not isinstance(answered, Mapping):
        return ""
    how = ", ".join(str(answered[key]) for key in ("via", "at") if answered.get(key))
    note = f"; note: {answered['note']}" if answered.get("note") else ""
    return f"{answered.get('by') or '?'}" + (f" ({how})" if how else "") + note


def _people(report: RunReport) -> str:
    """The questions put to people: each answer with who gave it, and those still waiting."""
    rows = []
    for step in report.steps:
        event = step.event
        if step.kind != "call" or not str(event.get("service", "")).startswith("person:"):
            continue
        error = event.get("error")
        waiting = isinstance(error, Mapping) and error.get("kind") == "waiting"
        state = ("waiting" if waiting else _error_text(error) if error
                 else _answered(event.get("answered")))
        rows.append((step.id, step.slot, str(event.get("service", "")).removeprefix("person:"),
                     state, _text(event.get("output")) if not error else ""))
    if not rows:
        return ""
    end = report.end or {}
    result = end.get("result")  # a waiting run's result lists its questions
    listed = result.get("waiting") if isinstance(result, Mapping) else None
    waiting = [w for w in listed or [] if isinstance(w, Mapping)]
    note = (f"<p>The run is waiting for {len(waiting)} answer(s): <code>prose pending</code> lists "
            "them, <code>prose answer RUN CALL</code> gives one, then <code>--resume</code>.</p>"
            if waiting else "")
    return "\n".join([
        '<section id="people"><h2>Questions to people</h2>', note,
        _table(("call", "slot", "person", "answered by", "answer"), rows, "people-table"),
        "</section>",
    ])


def _verdict(step: Step, report: RunReport) -> str:
    found = report.policy_verdicts.get(step.id)
    if found:
        return "VIOLATED: " + "; ".join(found)
    if step.id in report.unchecked_calls:
        return "not checked (see the audit notes)"
    return "held (re-checked by prose audit)"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        kind = error.get("kind") or error.get("code") or "error"
        return f"{kind}: {error.get('message', '')}"
    return str(error)


# --- the sections written here ----------------------------------------------------------------


def _banner(report: RunReport) -> str:
    integrity = report.integrity
    if integrity.tampered:
        return (f'<div class="banner bad" id="integrity" data-state="tampered">This trace was '
                f"altered or cut after the run wrote it: {escape(integrity.summary)}. Do not trust "
                "what follows from that line on.</div>")
    state = "warn" if integrity.findings or integrity.error else "ok"
    return (f'<div class="banner {state}" id="integrity" data-state="{state}">'
            f"Audit: {escape(integrity.summary)}</div>")


def _card(key: str, value: Any, klass: str = "") -> str:
    return (f'<div class="card"><div class="k">{escape(key)}</div>'
            f'<div class="v {klass}">{escape(str(value))}</div></div>')


def _header(report: RunReport) -> str:
    start, end = report.start, report.end
    totals = (end or {}).get("totals") or {}
    status = str(end.get("status")) if end is not None else "unfinished"
    calls = sum(1 for s in report.steps if s.kind == "call")
    judges = len(report.steps) - calls
    tokens = sum(int((s.event.get("usage") or {}).get("total_tokens") or 0) for s in report.steps)
    cost = sum(float(s.event.get("cost_usd") or 0.0) for s in report.steps)
    cut = sum(1 for s in report.steps if s.cut)
    started = datetime.fromtimestamp(float(start.get("time") or 0), UTC)
    cards = [
        _card("status", f"{status} (exit {end.get('exit_code')})" if end else status,
              "status-ok" if status == "ok" else "status-bad"),
        _card("exit reason", _exit_reason(end)),
        _card("calls", f"{calls} ({sum(1 for s in report.steps if s.failed)} failed, "
                       f"{sum(1 for s in report.steps if s.retry)} retries)"),
        *([_card("cut at the token cap", f"{cut} repl{'y' if cut == 1 else 'ies'} (raise the "
                 "slot's max_tokens)", "status-bad")] if cut else []),
        _card("judge decisions", judges),
        _card("tokens", f"{tokens:,}"),
        _card("cost", f"${cost:.6f}"),
        _card("wall time", f"{float(totals.get('seconds') or report.wall_ms / 1000):.2f} s"),
        _card("audit", "chain intact" if report.integrity.chain_ok
              else f"chain broken at line {report.integrity.first_bad_line}",
              "status-ok" if not report.integrity.tampered else "status-bad"),
    ]
    bindings = start.get("bindings") or {}
    instance = ", ".join(f"{slot} = {_binding(b)}" for slot, b in bindings.items()) or "-"
    return "\n".join([
        f'<h1 id="title">{escape(report.trace.pattern_name or "?")}</h1>',
        f'<p class="lead">run <code>{escape(report.trace.run_id)}</code> started '
        f"{started.strftime('%Y-%m-%d %H:%M:%S UTC')} · pattern file "
        f"<code>{escape(str(start.get('pattern', '?')))}</code></p>",
        f'<div class="header" id="summary" data-calls="{calls}">{"".join(cards)}</div>',
        f'<p><b>Instance</b> (slot bindings): {escape(instance)}</p>',
        '<details class="inputs" open><summary><b>Inputs and config</b></summary>',
        _kv_table({**{f"input {k}": v for k, v in (start.get("inputs") or {}).items()},
                   **{f"config {k}": v for k, v in (start.get("config") or {}).items()}}),
        "</details>",
    ])


def _binding(binding: Any) -> str:
    if isinstance(binding, Mapping):
        return str(binding.get("model") or binding.get("python") or binding.get("pattern")
                   or binding.get("kind") or "?")
    return str(binding)


def _exit_reason(end: Mapping[str, Any] | None) -> str:
    if end is None:
        return "the trace ends before the run did (no run_end)"
    error = end.get("error")
    if isinstance(error, Mapping) and error.get("message"):
        return str(error["message"])
    return STATUS_WORDS.get(str(end.get("status")), str(end.get("status")))


def _kv_table(items: Mapping[str, Any]) -> str:
    if not items:
        return "<p>none</p>"
    rows = "".join(f"<tr><th>{escape(k)}</th><td><pre>{escape(_text(v))}</pre></td></tr>"
                   for k, v in items.items())
    return f"<table>{rows}</table>"


def _timeline(report: RunReport) -> str:
    return "\n".join([
        '<h2 id="timeline">Timeline</h2>',
        '<p class="lead">Every call attempt and judge decision, to scale; calls that ran at the '
        "same time are on separate lanes. Click a bar or a row to see the exact messages sent, "
        "the reply, tokens, cost, latency and source line.</p>",
        '<div class="legend"><span><i style="background:#3f7fbf"></i>call</span>'
        '<span><i style="background:#ef8f00"></i>retry</span><span><i style="background:#c62828">'
        '</i>failed</span><span><i style="background:#8e6ac8"></i>judge</span></div>',
        f'<canvas id="lanes" aria-label="{report.lanes} lane(s) over {report.wall_ms / 1000:.2f} s">'
        "</canvas>",
        '<div class="list-head"><span>id</span><span>slot</span><span>model</span>'
        f"<span>0 … {report.wall_ms / 1000:.2f} s</span><span>latency</span><span>tokens</span>"
        "<span>flags</span></div>",
        '<div id="steps" tabindex="0"></div>',
    ])


def _transcripts() -> str:
    return ('<h2 id="transcripts">Transcripts per slot</h2><p class="lead">Everything one slot '
            "saw and produced, in order, and whose outputs its inputs carried.</p>"
            '<div id="transcript-tabs" role="tablist"></div><div id="transcript"></div>')


def _graph(report: RunReport) -> str:
    head = '<h2 id="flow">Data flow</h2>'
    if report.pattern_file is None:
        return head + "<p>The pattern file is not at hand, so the graph cannot be drawn (pass " \
                      "<code>--pattern FILE</code>).</p>"
    explanation = explain_pattern(report.pattern_file)
    if explanation is None:
        return head + "<p>The pattern file does not lint far enough to draw its graph.</p>"
    graph = flow_graph(explanation, (s.event for s in report.steps if s.kind == "call"))
    note = ("" if report.pattern_sha_matches else
            "<p><b>Note:</b> the pattern file changed since the run (its sha256 differs).</p>")
    return "\n".join([
        head, '<p class="lead">The graph of <code>prose explain --mermaid</code>; each arrow says '
        "which inputs it carries and how many values crossed it in this run (dashed: none).</p>",
        note, render_svg(graph),
        f"<details><summary>mermaid source</summary><pre>{escape(graph.mermaid)}</pre></details>",
    ])


def _policy(report: RunReport) -> str:
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{escape(', '.join(p['requires']))}</td>"
        f"<td>{escape(', '.join(p['sees_only']) or '-')}</td>"
        f"<td>{escape('; '.join(p['hidden']) or '-')}</td>"
        f"<td>{_slot_verdict(name, report)}</td></tr>"
        for name, p in slot_policies(report).items())
    out = ['<h2 id="policy">Policy and audit</h2>',
           f"<p>Policy: {escape(report.integrity.policy_source or 'not checked')}. Each call's "
           "verdict is in its details.</p>"]
    if rows:
        out.append("<table><tr><th>slot</th><th>requires</th><th>sees only</th>"
                   f"<th>hidden by</th><th>verdict</th></tr>{rows}</table>")
    findings = report.integrity.findings
    if report.integrity.error:
        out.append(f"<p>The audit could not check the policy: {escape(report.integrity.error)}</p>")
    if findings:
        out.append('<ul class="findings">' + "".join(
            f"<li>trace line {f.line}: <b>{escape(f.rule)}</b> "
            f"{escape(f.call + ' ' if f.call else '')}{escape(f.message)}</li>" for f in findings)
            + "</ul>")
    if report.integrity.notes:
        out.append("<ul>" + "".join(f"<li>note: {escape(n)}</li>"
                                    for n in report.integrity.notes) + "</ul>")
    return "\n".join(out)


def _slot_verdict(slot: str, report: RunReport) -> str:
    calls = [s for s in report.steps if s.kind == "call" and s.slot == slot]
    bad = sum(1 for s in calls if s.id in report.policy_verdicts)
    if bad:
        return f'<b class="status-bad">{bad} of {len(calls)} call(s) violated it</b>'
    if report.integrity.error or any(s.id in report.unchecked_calls for s in calls):
        return "not checked"
    return f'<span class="status-ok">held on all {len(calls)} call(s)</span>'


def _budget(report: RunReport) -> str:
    limits = ((report.start.get("models") or {}).get("limits") or {})
    totals = ((report.end or {}).get("totals") or {})
    used = {"max_calls": totals.get("calls", sum(1 for s in report.steps if s.kind == "call")),
            "max_tokens": totals.get("total_tokens", 0), "max_cost": totals.get("cost_usd", 0.0),
            "timeout": totals.get("seconds", report.wall_ms / 1000)}
    names = {"max_calls": "calls", "max_tokens": "tokens", "max_cost": "cost (USD)",
             "timeout": "time (s)"}
    rows = []
    for key, label in names.items():
        limit, value = limits.get(key), float(used[key] or 0)
        if limit:
            share = value / float(limit)
            meter = (f'<span class="meter"><i class="{"over" if share >= 1 else ""}" '
                     f'style="width:{min(100.0, share * 100):.1f}%"></i></span> {share:.0%}')
        else:
            meter = "no limit"
        rows.append(f"<tr><td>{label}</td><td class='num'>{_number(value)}</td>"
                    f"<td class='num'>{_number(limit) if limit else '-'}</td><td>{meter}</td></tr>")
    return ('<h2 id="budget">Budget</h2><table><tr><th>measure</th><th class="num">used</th>'
            f'<th class="num">limit</th><th></th></tr>{"".join(rows)}</table>')


def _number(value: Any) -> str:
    number = float(value)
    return f"{int(number):,}" if number.is_integer() else f"{number:,.4f}"


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]], ident: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(
        f"<td class='num'>{escape(str(c))}</td>" if isinstance(c, int | float) and not
        isinstance(c, bool) else f"<td>{escape('-' if c is None else _cell(c))}</td>"
        for c in row) + "</tr>" for row in rows)
    return f'<table{f" id={chr(34)}{ident}{chr(34)}" if ident else ""}><tr>{head}</tr>{body}</table>'


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return "; ".join(_cell(v) for v in value) or "-"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _stats(report: RunReport) -> str:
    stats = report.stats
    out = ['<h2 id="stats">Spend per slot</h2><p class="lead">As <code>prose stats</code> '
           "computes it.</p>",
           _table(("slot", "calls", "failed", "prompt", "completion", "cost USD", "latency mean ms",
                   "latency p95 ms", "rounds"),
                  ([s["slot"], s["calls"], s["failed"], s["prompt_tokens"], s["completion_tokens"],
                    s["cost_usd"], s["latency_mean_ms"], s["latency_p95_ms"], s["rounds"]]
                   for s in stats["slots"]), "slot-stats")]
    judgements = stats["judgements"]
    if judgements["total"]:
        out.append(f"<p>Judge decisions: {judgements['total']} (true {judgements['true']}, false "
                   f"{judgements['false']}, failed {judgements['failed']})</p>")
    if stats["critics"]:
        out += ['<h2 id="critics">Critic metrics (C3)</h2>',
                _table(("critic", "verdicts", "issues", "issues per round", "issues per turn",
                        "empty verdict share", "converged at round", "severities"),
                       ([c["slot"], c["verdicts"], c["issues"],
                         " ".join(f"r{r['round']}={r['issues']}" for r in c["issues_per_round"]),
                         c["issues_per_turn"], c["empty_verdict_share"],
                         c["convergence"] if c["convergence"] is not None else "never",
                         ", ".join(f"{k} {v}" for k, v in c["severities"].items()) or "-"]
                        for c in stats["critics"]), "critics")]
    return "\n".join(out)


def _domain(report: RunReport) -> str:
    """The seed patterns' own views of their result: the two-reviewer ledger, the conformance
    verdict table (read from the result the run recorded, when it has that shape)."""
    result = (report.end or {}).get("result")
    if not isinstance(result, Mapping):
        return ""
    out = []
    ledger = result.get("ledger")
    if isinstance(ledger, list) and ledger and all(isinstance(r, Mapping) for r in ledger):
        keys = [k for k in ("version", "reviewer", "verdict", "passed", "findings")
                if any(k in r for r in ledger)]
        out += ['<h2 id="ledger">Two-reviewer ledger</h2>',
                f"<p>Outcome: <b>{escape(str(result.get('status', '?')))}</b> after "
                f"{escape(str(result.get('versions', '?')))} version(s).</p>",
                _table(keys, ([r.get(k) for k in keys] for r in ledger), "ledger-table")]
    verdicts = result.get("criterion_verdicts")
    if isinstance(verdicts, list) and verdicts and all(isinstance(r, Mapping) for r in verdicts):
        verdict = result.get("result") or (result.get("report") or {}).get("verdict")
        out += ['<h2 id="conformance">Conformance verdicts</h2>',
                f"<p>Verdict: <b>{escape(str(verdict))}</b></p>",
                _table(("criterion", "status", "tests", "evidence", "gate"),
                       ([r.get("criterion"), r.get("status"), r.get("tests"), r.get("evidence"),
                         r.get("gate") or "-"] for r in verdicts), "conformance-table")]
    return "\n".join(out)


def _result(report: RunReport) -> str:
    end = report.end
    if end is None:
        return ""
    return (f'<h2 id="result">Result</h2><pre>{escape(_text(end.get("result")))}</pre>')
