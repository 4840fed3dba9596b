"""Send a run's spans (`prose.otel.spans`) over OTLP: the only module that imports OpenTelemetry.

The exporter is configured the standard way, by the `OTEL_EXPORTER_OTLP_*`
variables (endpoint, headers, timeout, protocol) and `OTEL_SERVICE_NAME` /
`OTEL_RESOURCE_ATTRIBUTES` (the service name defaults to `prose`). The
protocol is OTLP/HTTP with protobuf (`opentelemetry-exporter-otlp-proto-http`,
in the `otel` extra); `grpc` works when `opentelemetry-exporter-otlp-proto-grpc`
is installed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prose.errors import ProseError
from prose.otel.spans import SpanData, run_spans

INSTALL = "pip install 'prose-patterns[otel]'"


class OtelError(ProseError):
    """OpenTelemetry is not installed, or the collector did not take the spans (exit code 2)."""


@dataclass(frozen=True)
class Exported:
    """What was sent: the number of spans and the run's trace id (hex)."""

    spans: int
    trace_id: str


def _exporter() -> Any:
    protocol = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf")
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter as GrpcExporter,
            )

            return GrpcExporter()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    except ImportError as error:
        package = ("opentelemetry-exporter-otlp-proto-grpc" if protocol == "grpc"
                   else "the otel extra")
        raise OtelError(f"--otel needs {package} ({INSTALL}): {error}") from None


def export_spans(root: SpanData) -> Exported:
    """Export `root` and its children as one OpenTelemetry trace; raises OtelError when the
    packages are missing or the collector refuses (or cannot be reached)."""
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
        from opentelemetry.sdk.trace.export import (
            SimpleSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )
    except ImportError as error:
        raise OtelError(f"--otel needs the OpenTelemetry SDK ({INSTALL}): {error}") from None

    inner = _exporter()
    failures: list[str] = []
    collected: list[ReadableSpan] = []

    class Collect(SpanExporter):  # the spans are sent in one request, after the run's ends
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            collected.extend(spans)
            return SpanExportResult.SUCCESS

    provider = TracerProvider(resource=Resource.create(
        {"service.name": os.environ.get("OTEL_SERVICE_NAME") or "prose"}))
    provider.add_span_processor(SimpleSpanProcessor(Collect()))
    tracer = provider.get_tracer("prose")
    kinds = {"internal": trace.SpanKind.INTERNAL, "client": trace.SpanKind.CLIENT}

    def emit(data: SpanData, parent: Any) -> trace.Span:
        span = tracer.start_span(data.name, context=parent, kind=kinds[data.kind],
                                 attributes=data.attributes, start_time=data.start_ns)
        if data.error is not None:
            span.set_status(trace.Status(trace.StatusCode.ERROR, data.error))
        context = trace.set_span_in_context(span)
        for child in data.children:
            emit(child, context)
        span.end(end_time=data.end_ns)
        return span

    trace_id = format(emit(root, None).get_span_context().trace_id, "032x")
    try:
        for start in range(0, len(collected), 512):
            if inner.export(collected[start:start + 512]) is not SpanExportResult.SUCCESS:
                failures.append(f"spans {start + 1}-{min(len(collected), start + 512)}")
    finally:
        inner.shutdown()
        provider.shutdown()
    if failures:
        endpoint = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                    or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://localhost:4318")
        raise OtelError(f"the OTLP collector at {endpoint} did not take "
                        f"{', '.join(failures)} of {len(collected)}")
    return Exported(len(collected), trace_id)


def export_trace(path: str | Path) -> Exported:
    """Read the trace at `path` and export its spans. Raises TraceReadError, OtelError."""
    from prose.ledger import load_trace

    return export_spans(run_spans(load_trace(path)))
