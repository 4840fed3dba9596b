"""The ledger: what a reviewer does with a run trace after the run.

`audit_trace` verifies the hash chain and re-checks every recorded call
against the pattern's information-hiding policy; `export_ledger` writes a
folder of markdown files (one per call) with a `manifest.sha256`;
`trace_stats` computes calls, tokens, cost, latency, rounds and critic
metrics per slot. None of it needs a model or imports litellm.
"""

from __future__ import annotations

from prose.ledger.audit import AuditError, AuditReport, Finding, audit_trace
from prose.ledger.trace_file import LoadedTrace, TraceLine, TraceReadError, load_trace

__all__ = [
    "AuditError",
    "AuditReport",
    "Finding",
    "LoadedTrace",
    "TraceLine",
    "TraceReadError",
    "audit_trace",
    "load_trace",
]
