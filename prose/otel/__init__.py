"""OpenTelemetry export of a run (`prose run --otel`, `prose export --otel`).

`spans.py` turns a trace into spans following the GenAI semantic conventions
(pure data, no OpenTelemetry import); `export.py` sends them over OTLP with
the SDK, configured by the standard `OTEL_EXPORTER_OTLP_*` variables. The
OpenTelemetry packages are the `otel` extra and are imported on that path only.
"""
