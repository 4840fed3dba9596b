"""`export_ledger`: a trace as a folder of markdown a reviewer can read without this tool.

    DIR/README.md                 the run: pattern, status, inputs, totals, result, call index
    DIR/calls/<slot>/NNN-<id>.md  one file per recorded call: messages, output, usage, provenance
    DIR/judgements.md             every judge decision with the values it saw
    DIR/trace.jsonl               the trace itself, byte for byte (its hash chain can be re-checked)
    DIR/manifest.sha256           `sha256sum -c manifest.sha256` verifies every file above

Nothing is summarised away: every message and every output is written as it
was recorded, with the secrets the exporting process knows of masked (those
of its environment; the run masked its own in the trace).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prose.errors import ProseError
from prose.ledger.stats import loop_words
from prose.ledger.trace_file import LoadedTrace, TraceLine, load_trace, slot_label
from prose.llm.redact import redact, run_secrets

MANIFEST = "manifest.sha256"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_BACKTICKS = re.compile(r"`+")


class ExportError(ProseError):
    """The ledger folder cannot be written (exit code 2)."""


@dataclass
class ExportResult:
    """The files written, relative to the folder, with their sha256."""

    folder: Path
    files: dict[str, str] = field(default_factory=dict)
    chain_ok: bool = True


def export_ledger(
    trace_path: str | Path, folder: str | Path, secrets: Iterable[str] = ()
) -> ExportResult:
    """Write the ledger of the trace at `trace_path` into `folder` (new or empty).

    The markdown is written with `secrets` and the environment's masked
    (`prose.llm.redact`), as the run masked its trace; `trace.jsonl` is the
    trace byte for byte, so that its hash chain can be checked.
    """
    trace = masked(load_trace(trace_path), secrets)
    out = Path(folder)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out}: exists and is not an empty folder; choose a new one")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ExportError(f"{out}: cannot create: {error.strerror or error}") from None
    result = ExportResult(out, chain_ok=trace.chain_ok)
    call_files = _call_files(trace)
    for line in trace.calls:
        _write(result, call_files[line.number], render_call(line))
    _write(result, "judgements.md", render_judgements(trace))
    _write(result, "README.md", render_readme(trace, call_files))
    _write_bytes(result, "trace.jsonl", Path(trace_path).read_bytes())
    manifest = "".join(f"{digest}  {name}\n" for name, digest in sorted(result.files.items()))
    (out / MANIFEST).write_text(manifest, encoding="utf-8")
    return result


def masked(trace: LoadedTrace, secrets: Iterable[str] = ()) -> LoadedTrace:
    """`trace` with each event's secrets masked (`prose.llm.redact.redact`)."""
    known = run_secrets(secrets)
    lines = tuple(TraceLine(line.number, redact(line.event, known)) for line in trace.lines)
    return replace(trace, lines=lines)


def _write(result: ExportResult, name: str, text: str) -> None:
    _write_bytes(result, name, text.encode("utf-8"))


def _write_bytes(result: ExportResult, name: str, data: bytes) -> None:
    target = result.folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    result.files[name] = hashlib.sha256(data).hexdigest()


def _safe(name: str) -> str:
    return _UNSAFE.sub("-", name).strip("-.") or "slot"


def _call_files(trace: LoadedTrace) -> dict[int, str]:
    """Trace line number -> file name (`calls/<slot>/<NNN>-<id>.md`) of every call."""
    names: dict[int, str] = {}
    for position, line in enumerate(trace.calls, start=1):
        event = line.event
        slot = _safe(slot_label(event, index=False))
        names[line.number] = f"calls/{slot}/{position:03d}-{_safe(str(event.get('id', 'call')))}.md"
    return names


def _names(items: Any) -> str:
    return ", ".join(f"`{item}`" for item in items) if items else "none"


def render_call(line: TraceLine) -> str:
    """One call as markdown: what was sent, what came back, and what it cost."""
    event = line.event
    usage = event.get("usage") or {}
    where = f"{event.get('file')}:{event.get('line')}:{event.get('column')}"
    rows = [
        ("slot", f"`{slot_label(event)}`"),
        ("service", str(event.get("service", ""))),
        ("model", str(event.get("model") or "-")),
        ("call site", where),
        ("loop", loop_words(str(event.get("path") or ""))),
        ("loop path", f"`{event.get('path')}` (as traced: iterations from 0)"
                      if event.get("path") else "-"),
        ("attempt", str(event.get("attempt", 1))),
        ("status", "failed" if event.get("error") else "ok"),
        ("tokens", f"{usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} "
                   f"completion = {usage.get('total_tokens', 0)}"),
        ("cost", f"${float(event.get('cost_usd') or 0):.6f}"),
        ("latency", f"{float(event.get('latency_ms') or 0):.1f} ms"),
        ("cache", "hit (not sent)" if event.get("cache_hit") else "miss"),
        ("provenance", _names(event.get("provenance"))),
        ("derived from", _names(event.get("transitive"))),
        ("output sha256", f"`{event.get('sha256')}`" if event.get("sha256") else "-"),
        ("trace line", str(line.number)),
    ]
    out = [f"# Call {event.get('id')}: `{slot_label(event)}`", "",
           "Provenance: the slots whose outputs this call was given; derived from: the slots "
           "those outputs themselves came from.", "", table(("", ""), rows), "", "## Messages", ""]
    messages = event.get("messages") or []
    if not messages:
        out += ["(none recorded)", ""]
    for number, message in enumerate(messages, start=1):
        out += [f"### {number}. {message.get('role', '?')}", "",
                fenced(str(message.get("content", "")), "text"), ""]
    if event.get("error"):
        error = event["error"]
        out += ["## Error", "", f"**{error.get('kind')}**: {error.get('message')}", ""]
    else:
        out += ["## Output", "", _value_block(event.get("output")), ""]
    return "\n".join(out)


def _value_block(value: Any) -> str:
    return fenced(value, "text") if isinstance(value, str) else json_block(value)


def render_judgements(trace: LoadedTrace) -> str:
    out = ["# Judgements", ""]
    judgements = trace.judgements
    if not judgements:
        out += ["The run made no judgements (every condition was a deterministic predicate).", ""]
    for line in judgements:
        event = line.event
        out += [f"## {event.get('id')}: {event.get('kind')} at line {event.get('line')}", "",
                f"Text: {fenced(str(event.get('text', '')), '')}" if "\n" in str(event.get("text"))
                else f"Text: `{event.get('text')}`", ""]
        if event.get("options"):
            out += ["Options: " + ", ".join(f"`{o}`" for o in event["options"]), ""]
        if event.get("error"):
            error = event["error"]
            out += [f"Failed: **{error.get('kind')}**: {error.get('message')}", ""]
        else:
            out += [f"Decision: `{json.dumps(event.get('decision'), ensure_ascii=False)}`",
                    "", f"Reason: {event.get('reason') or '(none given)'}", ""]
        out += [f"Model `{event.get('model')}`, trace line {line.number}, "
                f"{loop_words(str(event.get('path') or ''))}.", "", "Values the judge saw:", "",
                json_block(event.get("values") or {}), ""]
    return "\n".join(out)


def render_readme(trace: LoadedTrace, call_files: dict[int, str]) -> str:
    """The run summary and an index of every call."""
    start = trace.run_start.event if trace.run_start else {}
    end = trace.run_end.event if trace.run_end else {}
    broken = trace.chain_break
    chain = "intact" if broken is None else f"BROKEN at line {broken.line}: {broken.reason}"
    totals = end.get("totals") or {}
    rows = [
        ("run", f"`{trace.run_id}`"),
        ("pattern", f"`{trace.pattern_name}` ({start.get('pattern', '?')})"),
        ("pattern sha256", f"`{start.get('pattern_sha256', '?')}`"),
        ("status", f"{end.get('status', 'did not finish')} (exit code {end.get('exit_code', '-')})"),
        ("calls", f"{len(trace.calls)} recorded, {len(trace.judgements)} judgements"),
        ("tokens", f"{totals.get('prompt_tokens', 0)} prompt + {totals.get('completion_tokens', 0)} "
                   f"completion"),
        ("cost", f"${float(totals.get('cost_usd') or 0):.6f}"),
        ("hash chain", chain),
    ]
    out = [f"# Ledger of run {trace.run_id}", "",
           "Exported from a prose trace. Every file here is listed with its sha256 in "
           f"`{MANIFEST}` (check with `sha256sum -c {MANIFEST}`); `trace.jsonl` is the original "
           "trace, in which every line carries the sha256 of the line before it.", "",
           table(("", ""), rows), ""]
    if end.get("error"):
        error = end["error"]
        out += ["## Error", "", f"**{error.get('kind')}**: {error.get('message')}", ""]
    out += ["## Calls", "", _call_index(trace, call_files), "",
            f"Judgements: [judgements.md](judgements.md) ({len(trace.judgements)}).", ""]
    notes = [line for line in trace.lines if line.type in ("note", "error")]
    if notes:
        out += ["## Notes and errors", ""]
        out += [f"- line {line.number}: {line.type} `{line.event.get('what') or line.event.get('kind')}`: "
                f"{line.event.get('message')}" for line in notes]
        out += [""]
    out += ["## Inputs", "", json_block(start.get("inputs") or {}), "",
            "## Config", "", json_block(start.get("config") or {}), "",
            "## Bindings", "", json_block(start.get("bindings") or {}), "",
            "## Information-hiding policy enforced", "", json_block(start.get("policy")), "",
            "## Result", "", _value_block(end.get("result")), ""]
    return "\n".join(out)


def _call_index(trace: LoadedTrace, call_files: dict[int, str]) -> str:
    rows = []
    for line in trace.calls:
        event = line.event
        usage = event.get("usage") or {}
        status = f"failed: {event['error'].get('kind')}" if event.get("error") else "ok"
        rows.append((f"[{event.get('id')}]({call_files[line.number]})", f"`{slot_label(event)}`",
                     str(event.get("line", "")), loop_words(str(event.get("path") or "")), status,
                     str(usage.get("total_tokens", 0))))
    if not rows:
        return "(no calls were recorded)"
    return table(("call", "slot", "pattern line", "loop", "status", "tokens"), rows)


def fenced(text: str, language: str = "") -> str:
    """`text` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def json_block(value: Any) -> str:
    return fenced(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False), "json")


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured markdown table (pipes and newlines in cells escaped)."""
    out = ["| " + " | ".join(_cell(h) for h in headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(out)
