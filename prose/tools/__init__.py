"""Deterministic tools that instance files bind to pattern slots with `python:`.

A pattern file is data and never names code; an instance file does. These are
the functions the library's plan-conformance pattern binds:

- `prose.tools.verification:run_checks`, the `verifier`: runs the verification
  commands declared in the instance file, once, and records the results;
- `prose.tools.conformance:criterion_gate`, the `gate`: the evidence rule for
  one criterion verdict (MET needs cited evidence and a proving test);
- `prose.tools.conformance:conformance_verdict`, the `verdict`: CONFORMS or
  DIVERGES, fail-closed.

Every function takes the call's inputs as keyword arguments (JSON-like values)
and returns JSON-like values, so its output goes to the trace like a model's.
"""

from __future__ import annotations

from prose.tools.markers import PIPELINE_FAULT, is_fault

__all__ = ["PIPELINE_FAULT", "is_fault"]
