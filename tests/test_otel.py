"""--otel: the run's spans reach a real OTLP/HTTP receiver on 127.0.0.1, decoded with
opentelemetry-proto, with the GenAI conventions' names, parents and attributes."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_prose, run_prose_in_process

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

EXAMPLE = ROOT / "examples" / "two-reviewer-gate.yaml"
SCRIPT = ROOT / "examples" / "two-reviewer-gate.script.yaml"


class Receiver:
    """An OTLP/HTTP receiver: POST /v1/traces with a protobuf ExportTraceServiceRequest."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.requests.append(request)
                receiver.paths.append(self.path)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def spans(self) -> list[tuple[Any, dict[str, Any], dict[str, Any]]]:
        """(span, its attributes, its resource's attributes) for every span received."""
        out = []
        for request in self.requests:
            for resource_spans in request.resource_spans:
                resource = _attributes(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    out.extend((span, _attributes(span.attributes), resource)
                               for span in scope.spans)
        return out


def _attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        value = item.value
        out[item.key] = getattr(value, value.WhichOneof("value"))
    return out


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    found.thread.start()
    yield found
    found.server.shutdown()
    found.server.server_close()


def _check_gate_spans(receiver: Receiver) -> None:
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    spans = receiver.spans()
    assert len(spans) == 9  # the run, six calls, the worker's two `write` tool calls
    roots = [(s, a) for s, a, _ in spans if not s.parent_span_id]
    assert len(roots) == 1
    root, root_attributes = roots[0]
    assert root.name == "invoke_workflow two-reviewer-gate"
    assert root_attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root_attributes["prose.status"] == "ok"
    assert spans[0][2]["service.name"] == "prose"
    calls = [(s, a) for s, a, _ in spans if s.parent_span_id
             and a["gen_ai.operation.name"] != "execute_tool"]
    assert len(calls) == 6
    assert all(s.parent_span_id == root.span_id and s.trace_id == root.trace_id for s, _ in calls)
    assert all(root.start_time_unix_nano <= s.start_time_unix_nano <= s.end_time_unix_nano
               <= root.end_time_unix_nano for s, _ in calls)
    by_id = {a["prose.call.id"]: (s, a) for s, a in calls}
    span, attributes = by_id["c3"]
    assert span.name == "chat prose-script/slot:reviewer_b#ticket-3"  # the worker took two turns
    assert span.kind == 3  # SPAN_KIND_CLIENT
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "prose-script"
    assert attributes["gen_ai.agent.name"] == "reviewer_b"
    assert attributes["gen_ai.usage.input_tokens"] > 0
    assert attributes["gen_ai.usage.output_tokens"] > 0
    lines = (ROOT / "patterns" / "two-reviewer-gate.prose.md").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "= call reviewer_b" in text)
    assert attributes["code.line.number"] == line
    assert attributes["code.column.number"] == lines[line - 1].index("call reviewer_b") + 1
    assert attributes["code.file.path"].endswith("two-reviewer-gate.prose.md")
    assert "prose.cost_usd" in attributes and attributes["prose.attempt"] == 1
    assert sum(a["gen_ai.usage.input_tokens"] for _, a in calls) == \
        root_attributes["gen_ai.usage.input_tokens"]
    sent = "".join(str(a) for _, a, _ in spans)
    assert "You try to disprove" not in sent and "def median" not in sent  # no content


def test_prose_export_otel_sends_the_runs_spans(receiver: Receiver, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    done = run_prose_in_process("run", str(EXAMPLE), "--script", str(SCRIPT), "--trace",
                                str(trace), "-q", "--json")
    assert done.code == 0, done.output
    done = run_prose("export", "--otel", str(trace),
                     env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    assert done.code == 0, done.output
    assert done.stdout.startswith("otel: 9 spans sent (trace id ")
    _check_gate_spans(receiver)


def test_prose_run_otel_sends_the_runs_spans(receiver: Receiver, tmp_path: Path) -> None:
    done = run_prose_in_process("run", str(EXAMPLE), "--script", str(SCRIPT), "--trace",
                                str(tmp_path / "trace.jsonl"), "-q", "--json", "--otel",
                                env={"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":
                                     receiver.endpoint + "/v1/traces"})
    assert done.code == 0, done.output
    assert "otel: 9 spans sent" in done.stderr
    _check_gate_spans(receiver)


def test_a_collector_that_is_not_there_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    run_prose_in_process("run", str(EXAMPLE), "--script", str(SCRIPT), "--trace", str(trace),
                         "-q", "--json")
    done = run_prose("export", "--otel", str(trace),
                     env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
                          "OTEL_EXPORTER_OTLP_TIMEOUT": "1"})
    assert done.code == 2
    assert "did not take" in done.stderr and "127.0.0.1:9" in done.stderr


def test_opentelemetry_is_imported_only_on_the_otel_path() -> None:
    import subprocess
    import sys

    code = ("import sys; import prose.cli.main, prose.cli.run_cmd, prose.cli.export_cmd, "
            "prose.report, prose.otel.spans; "
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_an_agent_s_tool_calls_are_execute_tool_spans_inside_its_call(
        receiver: Receiver, tmp_path: Path) -> None:
    example = ROOT / "examples" / "code-review"
    trace = tmp_path / "trace.jsonl"
    done = run_prose_in_process("run", str(example / "gate.yaml"), "--script",
                                str(example / "gate.script.yaml"), "--trace", str(trace),
                                "-q", "--json")
    assert done.code == 0, done.output
    done = run_prose("export", "--otel", str(trace),
                     env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    assert done.code == 0, done.output
    spans = receiver.spans()
    tools = [(s, a) for s, a, _ in spans if a["gen_ai.operation.name"] == "execute_tool"]
    # the worker writes each version's three files, the reviewers inspect them
    assert [a["gen_ai.tool.name"] for _, a in tools] == [
        "write", "write", "write", "list", "read", "cli:check", "write", "write", "write",
        "cli:check", "grep", "cli:check"]
    by_span = {s.span_id: (s, a) for s, a, _ in spans}
    for span, attributes in tools:
        assert span.name == f"execute_tool {attributes['gen_ai.tool.name']}"
        assert span.kind == 1  # SPAN_KIND_INTERNAL
        parent, parent_attributes = by_span[span.parent_span_id]
        assert parent.name.startswith("chat ")  # the agent's call
        assert parent_attributes["prose.call.id"] == attributes["prose.call.id"]
        assert parent_attributes["gen_ai.agent.name"] == attributes["gen_ai.agent.name"]
        assert parent.start_time_unix_nano <= span.start_time_unix_nano \
            <= span.end_time_unix_nano <= parent.end_time_unix_nano
        assert attributes["gen_ai.tool.type"] == "function" and attributes["gen_ai.tool.call.id"]
        assert len(attributes["prose.tool.output_sha256"]) == 64
    first_check = tools[5][1]
    assert first_check["prose.tool.exit_code"] == 1
    assert first_check["prose.tool.isolation"] in ("bwrap", "context-only")
    assert "prose.tool.isolation" not in tools[0][1]  # a workspace tool runs in-process
    sent = "".join(str(a) for _, a, _ in spans)
    assert "items[1:]" not in sent and "1 failed" not in sent  # no arguments, no output
