"""The runtime: an async interpreter that runs patterns against an LLM client.

    from prose.runtime import RunOptions, run_pattern
    result = await run_pattern("patterns/dialectic.prose.md",
                               RunOptions(inputs={"task_brief": "..."}, script=script))

It talks to the `prose.llm` client protocol, never to LiteLLM, and enforces
the information-hiding policy (`prose.lang.policy`) before every call.
"""

from prose.runtime.budget import Budget, Limits
from prose.runtime.errors import (
    BudgetExceeded,
    CallFailed,
    InformationHidingViolation,
    InputError,
    ProseRuntimeError,
)
from prose.runtime.runner import RunOptions, RunResult, run_pattern
from prose.runtime.trace import read_events, verify_chain
from prose.runtime.values import Value

__all__ = [
    "Budget",
    "BudgetExceeded",
    "CallFailed",
    "InformationHidingViolation",
    "InputError",
    "Limits",
    "ProseRuntimeError",
    "RunOptions",
    "RunResult",
    "Value",
    "read_events",
    "run_pattern",
    "verify_chain",
]
