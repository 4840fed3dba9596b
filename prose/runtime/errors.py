"""Run-time errors: each has a stable code, a source span, a code frame and an exit code.

Exit codes (the CLI's contract): 1 a pattern or input error, 3 a budget stop,
4 a model or provider failure, 5 an information-hiding violation, 6 waiting for a
person to answer (not a failure: `prose answer`, then `prose run --resume`). Which
errors a `try`/`catch` may handle is decided here too (`catchable`): a
violation, a budget stop, an exhausted script and a refused node end the run
whatever the program says.
"""

from __future__ import annotations

from typing import Any

from prose.errors import ProseError
from prose.lang import error_kinds as kinds
from prose.lang.flows import NO_LABEL, Label
from prose.source import Span, code_frame

EXIT_OK = 0
EXIT_PATTERN = 1
EXIT_USAGE = 2
EXIT_BUDGET = 3
EXIT_MODEL = 4
EXIT_HIDING = 5
EXIT_WAITING = 6

# Stable codes of run-time errors (documented in docs/language-runtime-decisions.md).
CODES: dict[str, str] = {
    "R001": "the interpreter does not know this node",
    "R002": "a name that is not defined",
    "R003": "an assignment to a read-only name",
    "R004": "a value of the wrong type for the operation",
    "R005": "a member or index read of a value that has none",
    "R006": "a parallel branch assigning an outer variable",
    "R007": "an error raised by `throw`",
    "R008": "a call failed",
    "R009": "a judge failed to decide a condition or a choice",
    "R010": "an information-hiding violation",
    "R011": "a budget stop",
    "R012": "an input, config or binding error",
    "R013": "the scripted model ran out of responses",
    "R014": "too few parallel branches succeeded",
    "R015": "a `break` or `continue` outside a loop",
    "R016": "a checkable invariant broken at run time (`NAME only grows`)",
    "R017": "`--resume` of a damaged trace",
    "R018": "a call to a model the pattern named and the person running it did not grant",
    "R019": "the run waits for a person to answer (exit 6; docs/people.md)",
    "R030": "a tool a slot declares is not provided, or one provided is not declared",
    "R031": "an agent took `max_turns` turns without a final answer",
    "R032": "`--require-sandbox` on a machine without an OS sandbox (exit 2)",
    "R033": "a read-only agent's call changed or removed a file it was given: its answer "
            "is discarded",
    "R040": "an arithmetic error: a division by zero, a number past its bound",
    "R041": "a string or list a built-in or operator would build past its bound",
    "R042": "a `matches` pattern RE2 cannot use",
    "R043": "a condition written as code that is not an expression (never a judge call)",
    "R060": "a call a control-flow invariant forbids (`runs only if`, `runs only after`, "
            "`gets the same`, `at most one of`): the run stops before it",
    "R061": "a returned result that breaks a `the result satisfies` invariant: the run fails",
}


class ProseRuntimeError(ProseError):
    """An error while running a pattern, at a source position.

    `kind` is what `catch as err` sees in `err.kind`; `slot` names the slot of
    a failed call; `value` is the thrown value for `throw`. `label` is what
    the error carries into `catch as err` (`prose.lang.flows`): a failed
    call's slot, a thrown value's label.
    """

    code = "R004"
    kind = "runtime"
    exit_code = EXIT_PATTERN
    catchable = True

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        *,
        source: str | None = None,
        slot: str | None = None,
        kind: str | None = None,
        value: Any = None,
        provenance: frozenset[str] = frozenset(),
        transitive: frozenset[str] = frozenset(),
        label: Label = NO_LABEL,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.slot = slot
        self.value = value
        if provenance or transitive:
            label = label | Label(provenance, transitive | provenance)
        self.label = label
        if kind is not None:
            self.kind = kind
        self.frame = code_frame(source, span) if source and span and span.line > 0 else ""

    @property
    def provenance(self) -> frozenset[str]:
        return self.label.provenance

    @property
    def transitive(self) -> frozenset[str]:
        return self.label.transitive

    def at(self, span: Span, source: str | None) -> ProseRuntimeError:
        """This error placed at `span` when it has no position yet."""
        if self.span is None or self.span.line <= 0:
            self.span = span
        if not self.frame and source and self.span is not None and self.span.line > 0:
            self.frame = code_frame(source, self.span)
        return self

    def location(self) -> str:
        return str(self.span) if self.span is not None and self.span.line > 0 else "error"

    def format(self) -> str:
        """`file:line:col: CODE message` (`error: CODE message` without a position) and the frame."""
        head = f"{self.location()}: {self.code} {self.message}"
        return f"{head}\n{self.frame}" if self.frame else head

    def to_dict(self) -> dict[str, Any]:
        span = self.span
        return {
            "code": self.code,
            "kind": self.kind,
            "message": self.message,
            "slot": self.slot,
            "file": span.file if span else None,
            "line": span.line if span else None,
            "column": span.column if span else None,
        }


class UnknownNodeError(ProseRuntimeError):
    code = "R001"
    kind = "internal"
    catchable = False


class ConditionNotCode(ProseRuntimeError):
    """A condition that reads as code but does not parse (`prose.syntax.code_conditions`):
    refused, never sent to a judge, and not catchable (the program is wrong)."""

    code = "R043"
    kind = "syntax"
    catchable = False


class NameNotDefined(ProseRuntimeError):
    code = "R002"
    kind = "name"


class ReadOnlyName(ProseRuntimeError):
    code = "R003"
    kind = "name"


class ValueTypeError(ProseRuntimeError):
    code = "R004"
    kind = "type"


class MemberError(ProseRuntimeError):
    code = "R005"
    kind = "type"


class ParallelRace(ProseRuntimeError):
    code = "R006"
    kind = "race"


class ThrownError(ProseRuntimeError):
    code = "R007"
    kind = "thrown"


class CallFailed(ProseRuntimeError):
    """A call failed after its attempts; `kind` is the model error's kind."""

    code = "R008"
    kind = "call"
    exit_code = EXIT_MODEL


class JudgeFailed(ProseRuntimeError):
    code = "R009"
    kind = "judge"
    exit_code = EXIT_MODEL


class InformationHidingViolation(ProseRuntimeError):
    """A call would send a slot what the policy forbids: the run stops, the call is not sent."""

    code = "R010"
    kind = "information-hiding"
    exit_code = EXIT_HIDING
    catchable = False

    def __init__(self, message: str, span: Span | None = None, **kwargs: Any) -> None:
        self.rules: list[str] = kwargs.pop("rules", [])
        super().__init__(message, span, **kwargs)


class BudgetExceeded(ProseRuntimeError):
    """A budget would be exceeded by the next call: the run stops before it."""

    code = "R011"
    kind = "budget"
    exit_code = EXIT_BUDGET
    catchable = False

    def __init__(self, message: str, span: Span | None = None, **kwargs: Any) -> None:
        self.budget: str = kwargs.pop("budget", "")
        super().__init__(message, span, **kwargs)


class InputError(ProseRuntimeError):
    """Inputs, config or bindings that do not fit the pattern (found before anything runs)."""

    code = "R012"
    kind = "input"
    catchable = False


class ScriptExhausted(ProseRuntimeError):
    code = "R013"
    kind = kinds.SCRIPT_EXHAUSTED
    catchable = False


class TooFewSuccesses(ProseRuntimeError):
    code = "R014"
    kind = "parallel"


class LoopControlError(ProseRuntimeError):
    code = "R015"
    kind = "control"
    catchable = False


class InvariantBroken(ProseRuntimeError):
    """A checkable invariant that is not about what a call receives failed (`only grows`)."""

    code = "R016"
    kind = "invariant"
    catchable = False


class ResultBroken(InvariantBroken):
    """The program returned a result that a `` the result satisfies `EXPR` `` invariant
    says it must not (`prose.runtime.results`): the run fails at the invariant's line."""

    code = "R061"


class ResumeRefused(InputError):
    """The trace to resume is damaged: its chain, an output digest or its seal fails."""

    code = "R017"
    kind = "resume"


class ModelNotGranted(ProseRuntimeError):
    """A call would go to a model the pattern file named (an agent's, a call's or a session's
    `model:`) that the person running it did not grant (`prose.lang.model_choice`): the
    run stops at that call, before it is sent."""

    code = "R018"
    kind = "model-not-granted"
    catchable = False


class RunIOError(InputError):
    """A file the run needs cannot be read or written (a trace, a resumed trace): exit 2."""

    exit_code = EXIT_USAGE


class WaitingForPerson(ProseRuntimeError):
    """A slot bound to a person has a question nobody has answered yet: the run stops
    (the questions are written beside the trace) and resumes once they are answered."""

    code = "R019"
    kind = "waiting"
    exit_code = EXIT_WAITING
    catchable = False


class ToolsMismatch(InputError):
    """A `cli:`/`mcp:` tool declared and not provided, or provided and not declared."""

    code = "R030"


class SandboxRequired(InputError):
    """`--require-sandbox` and no OS sandbox to run commands in."""

    code = "R032"
    exit_code = EXIT_USAGE
class GateViolation(ProseRuntimeError):
    """A call that a control-flow invariant forbids now (`runs only if`, `runs only after`,
    `gets the same`, `at most one of`, `prose.lang.gates`): the run stops before it is
    made, as for an information-hiding violation (exit 5)."""

    code = "R060"
    kind = kinds.GATE
    exit_code = EXIT_HIDING
    catchable = False

    def __init__(self, message: str, span: Span | None = None, **kwargs: Any) -> None:
        self.rules: list[str] = kwargs.pop("rules", [])
        super().__init__(message, span, **kwargs)
