"""The language server: diagnostics on each edit of a 1,000-line pattern.

Run: python bench/lsp.py   (writes the `lsp` section of docs/benchmarks.md)
Target: after the server is warm, the diagnostics of each edit within 20 ms (p95).

Two measures of the same edits (typing into a string, a new line, a renamed name that
leaves a name undefined, a bracket typed and removed again):
- in process: the server's own work per edit (`DocumentStore.update`, the quick
  analysis, the conversion to LSP diagnostics), as `prose lsp` runs it;
- over stdio: from sending `didChange` to receiving that version's
  `publishDiagnostics`, with the debounce set to 0, through a real `prose lsp` process.
The complete pass (the information-hiding proofs, run once typing stops) is timed too.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.lint import big_pattern
from bench.report import load_average, stamp, write_section

EDITS = 300
WARM = 20


def edits(text: str, count: int, seed: int = 18) -> list[tuple[str, int, int, int, str]]:
    """(kind, line, start, end, new text) edits, applied in order, on 0-based lines."""
    rng = random.Random(seed)
    lines = text.split("\n")
    fence = lines.index("```prose")
    closing = len(lines) - 1 - lines[::-1].index("```")
    out: list[tuple[str, int, int, int, str]] = []
    pending: tuple[int, int] | None = None
    while len(out) < count:
        if pending is not None:  # remove the bracket typed before
            line, column = pending
            out.append(("bracket removed", line, column, column + 1, ""))
            lines[line] = lines[line][:column] + lines[line][column + 1:]
            pending = None
            continue
        roll = rng.random()
        kind = ("typing in a string" if roll < 0.5 else "new line" if roll < 0.65
                else "name changed" if roll < 0.8 else "bracket typed")
        needle = {"typing in a string": '"', "name changed": "draft_"}.get(kind, "")
        candidates = [i for i in range(fence + 3, closing - 2) if needle in lines[i]]
        number = rng.choice(candidates)
        line = lines[number]
        if kind == "new line":
            out.append((kind, number, len(line), len(line), "\n"))
            lines[number:number + 1] = [line, ""]
        elif kind == "bracket typed":
            out.append((kind, number, len(line), len(line), "("))
            lines[number] = line + "("
            pending = (number, len(line))
        else:
            column = line.index(needle) + len(needle)
            out.append((kind, number, column, column, "x"))
            lines[number] = line[:column] + "x" + line[column:]
    return out


def apply(text: str, edit: tuple[str, int, int, int, str]) -> str:
    _, line, start, end, new = edit
    lines = text.split("\n")
    row = lines[line]
    lines[line] = row[:start] + new + row[end:]
    return "\n".join(lines)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def in_process(text: str, plan: list[tuple[str, int, int, int, str]]) -> tuple[dict[str, list[float]], list[float]]:
    """Milliseconds per edit (by kind) of the quick pass, and of the complete passes."""
    from prose.lsp.diagnostics import convert
    from prose.lsp.documents import DocumentStore

    store = DocumentStore()
    uri = "file:///bench/big.prose.md"
    version = 1
    store.update(uri, text, version)
    store.analysis(uri)
    timings: dict[str, list[float]] = {}
    complete: list[float] = []
    for index, edit in enumerate(plan):
        text = apply(text, edit)
        version += 1
        start = time.perf_counter()
        store.update(uri, text, version)
        analysis = store.analysis(uri, complete=False)
        assert analysis is not None
        convert(analysis.result.diagnostics, uri, analysis.path, analysis.lines)
        elapsed = (time.perf_counter() - start) * 1000
        if index >= WARM:
            timings.setdefault(edit[0], []).append(elapsed)
        if index % 25 == 0:
            start = time.perf_counter()
            store.analysis(uri)
            complete.append((time.perf_counter() - start) * 1000)
    return timings, complete


def over_stdio(text: str, plan: list[tuple[str, int, int, int, str]], folder: Path) -> list[float]:
    """Milliseconds from `didChange` to that version's diagnostics, through `prose lsp`."""
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    path = folder / "big.prose.md"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    timings: list[float] = []

    async def run() -> None:
        client = LanguageClient("bench", "1")
        arrived: dict[int, float] = {}
        event = asyncio.Event()

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(ls: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
            if params.version is not None:
                arrived.setdefault(params.version, time.perf_counter())
                event.set()

        await client.start_io(sys.executable, "-c", "from prose.cli.main import main; main()", "lsp")
        await client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            initialization_options={"quickDelay": 0, "completeDelay": 60}))
        client.initialized(lsp.InitializedParams())
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)))

        async def wait(version: int) -> None:
            while version not in arrived:
                event.clear()
                await asyncio.wait_for(event.wait(), 60)

        await wait(1)
        for index, (_, line, start, end, new) in enumerate(plan):
            version = index + 2
            sent = time.perf_counter()
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(start=lsp.Position(line=line, character=start),
                                    end=lsp.Position(line=line, character=end)),
                    text=new)]))
            await wait(version)
            if index >= WARM:
                timings.append((arrived[version] - sent) * 1000)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()

    asyncio.run(run())
    return timings


def main() -> None:
    import tempfile

    text = big_pattern(1000)
    plan = edits(text, EDITS)
    load = load_average()
    by_kind, complete = in_process(text, plan)
    everything = [t for values in by_kind.values() for t in values]
    with tempfile.TemporaryDirectory() as folder:
        stdio = over_stdio(text, plan, Path(folder))
    rows = "\n".join(
        f"| {kind} | {len(values)} | {statistics.median(values):.1f} ms | "
        f"{percentile(values, 0.95):.1f} ms |"
        for kind, values in sorted(by_kind.items()))

    def fmt(values: list[float], fraction: float) -> str:
        return f"{percentile(values, fraction):.1f} ms"

    body = f"""## Language server

{stamp()} Load average {load:.2f} at the start.

A {text.count(chr(10)):,}-line pattern, {EDITS} edits after {WARM} to warm up (seeded: typing
in a string, a new line, a name changed so that it is undefined, a bracket typed and
removed again). Each edit is followed by the quick pass (every rule but the
information-hiding proofs); the complete pass runs when typing stops.

| measure | p50 | p95 | target |
|---|---|---|---|
| quick pass per edit, in process | {fmt(everything, 0.5)} | {fmt(everything, 0.95)} | p95 <= 20 ms |
| `didChange` to `publishDiagnostics`, over stdio | {fmt(stdio, 0.5)} | {fmt(stdio, 0.95)} | |
| complete pass (with the provenance analysis) | {fmt(complete, 0.5)} | {fmt(complete, 0.95)} | |

| edit | count | p50 | p95 |
|---|---|---|---|
{rows}

`python bench/lsp.py`; the in-process row times `DocumentStore.update`, the quick
analysis and the conversion to LSP diagnostics, as the server runs them.
"""
    write_section("lsp", body)
    print(body)


if __name__ == "__main__":
    main()
