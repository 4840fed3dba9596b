"""The audit of `` the result satisfies `EXPR` ``: the recorded result, judged again.

The run time judged the object the program returned before it wrote `run_end`
(`prose.runtime.results`, R061). The audit reads the result `run_end` records and asks
the same evaluator: a trace edited afterwards (a result turned into one the invariant
forbids, its hash chain recomputed) is a finding. A run that did not finish with a result
(an error, a budget stop, a run waiting for a person) returned nothing and is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prose.lang.results import RESULT_SATISFIES, ResultRule
from prose.ledger.trace_file import LoadedTrace
from prose.runtime.results import broken_results, evaluate_now


def result_findings(trace: LoadedTrace, rules: tuple[ResultRule, ...]
                    ) -> Iterator[tuple[str, str, int, None, None, str | None]]:
    """(rule, message, trace line, call, slot, source position) per broken rule."""
    end = trace.run_end
    if not rules or end is None or end.event.get("status") != "ok":
        return
    start = trace.run_start
    pattern = str(start.event.get("pattern", "")) if start is not None else ""
    run_values: dict[str, Any] = {}
    if start is not None:  # the run's parameters and config, as `run_start` records them
        for key in ("config", "inputs"):
            recorded = start.event.get(key)
            run_values.update(recorded if isinstance(recorded, Mapping) else {})
    for broken in evaluate_now(broken_results(rules, end.event.get("result"), run_values)):
        where = f"{pattern}:{broken.rule.line}" if pattern and broken.rule.line else None
        yield (RESULT_SATISFIES, f"the recorded result breaks an invariant: {broken.message}",
               end.number, None, None, where)
