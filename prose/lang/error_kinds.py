"""The kinds of errors a program can catch (`err.kind`), spelled once.

The LLM layer's error classes take their `kind` from here, the interpreter
its own kinds, and `retry:` the kinds another attempt cannot fix.
"""

from __future__ import annotations

AUTH = "auth"
RATE_LIMIT = "rate-limit"
TIMEOUT = "timeout"
CONTEXT_WINDOW = "context-window"
BAD_REQUEST = "bad-request"
PROVIDER = "provider"
EMPTY_REPLY = "empty-reply"
SCHEMA = "schema"
SCRIPT_EXHAUSTED = "script-exhausted"
LLM = "llm"
PYTHON = "python"
THROWN = "thrown"
CANCELLED = "cancelled"
CONFIG = "config"
# Not an error of the program: a person has not answered yet, and the run waits for them
# (docs/people.md). Never caught by `catch`; the run ends with exit code 6.
WAITING = "waiting"
# A control-flow invariant (`runs only if`, `runs only after`, `at most one of`) would be
# broken by the next call: the run stops before it (R060). Never caught by `catch`.
GATE = "gate"
# Recorded in a trace's failed call, never caught by `catch`: the run's budget ran out
# mid-agent (its turns so far were sent and are counted).
BUDGET = "budget"
# An agent ran `max_turns` turns without a final answer (R031).
MAX_TURNS = "max_turns"
# A read-only agent's call changed or removed a file it was given: its answer is not a
# review of what it was given (R033; `prose.lang.tools.altered_inputs`).
INPUTS_ALTERED = "inputs-altered"

# A model error of these kinds fails the same way on every attempt: `retry:` skips them.
NOT_RETRIED = frozenset({AUTH, BAD_REQUEST, CONTEXT_WINDOW})

MODEL_KINDS = (
    AUTH, RATE_LIMIT, TIMEOUT, CONTEXT_WINDOW, BAD_REQUEST, PROVIDER, EMPTY_REPLY, SCHEMA
)
