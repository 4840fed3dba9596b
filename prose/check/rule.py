"""The rule base class, the `@rule` decorator that registers one, and the context every rule receives."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, TypeVar, overload

from prose.check.declarations import Declarations
from prose.check.findings import Finding
from prose.check.semantic import SemanticModel
from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.lang.invariants import ResultSatisfies
from prose.source import Span
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.check.flow import FlowAnalysis
    from prose.check.invariant_checks import SiteViolation
    from prose.lang.policy import Policy
    from prose.spec.model import PatternSpec

DOC_SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead")


@dataclass
class CheckContext:
    """Everything a rule may look at: declarations, program and analyses."""

    decl: Declarations
    program: n.Program
    model: SemanticModel
    spec: PatternSpec | None = None
    # Strict mode for implicit flows, besides the pattern's own `flow: strict`.
    strict_flow: bool = False
    # The external tools an instance binds `separate` (a server or store per slot,
    # `prose.lang.tools.ToolUse.separate`): no channel between the slots using them.
    separate_tools: frozenset[str] = frozenset()
    _flow: FlowAnalysis | None = field(default=None, repr=False)
    _policy: Policy | None = field(default=None, repr=False)
    _violations: list[SiteViolation] | None = field(default=None, repr=False)

    @property
    def policy(self) -> Policy:
        """The pattern's compiled policy (`prose.lang.policy`), as the run time enforces it."""
        if self._policy is None:
            from prose.lang.policy import Policy, compile_policy

            self._policy = (compile_policy(self.spec, strict=self.strict_flow or None)
                            if self.spec is not None else Policy(self.decl.name))
        return self._policy

    @property
    def flow(self) -> FlowAnalysis:
        """The provenance analysis, computed on first use."""
        if self._flow is None:
            from prose.check.flow import analyse

            self._flow = analyse(self.decl, self.program, strict=self.policy.strict)
        return self._flow

    @property
    def violations(self) -> list[SiteViolation]:
        """What `Policy.violations` says of every call site the analysis found (cached)."""
        if self._violations is None:
            from prose.check.invariant_checks import site_violations

            self._violations = site_violations(self)
        return self._violations


    def invariant_coverage(self) -> tuple[int, int]:
        """(invariants in a checkable form, invariants that are prose only)."""
        # A `the result satisfies` whose expression is none (PH638) checks nothing.
        checked = sum(1 for invariant in self.decl.invariants if invariant.form is not None
                      and not (isinstance(invariant.form, ResultSatisfies) and invariant.form.problem))
        return checked, len(self.decl.invariants) - checked

    def invariants_explained(self) -> int:
        """Prose-only invariants that say why they are not checkable
        (`(not machine-checked: REASON)`)."""
        from prose.spec.invariants import unchecked_reason

        return sum(1 for invariant in self.decl.invariants
                   if invariant.form is None and unchecked_reason(invariant.text) is not None)


class Rule:
    """A lint rule. Subclasses set the class variables and implement `check`.

    The docstring is the rule's documentation; it must have the sections
    What it does / Why is this bad / Example / Use instead.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    category: ClassVar[str]
    severity: ClassVar[Severity]
    # Compat-only rules flag forms the seeds use; `--profile strict` makes them errors.
    compat_only: ClassVar[bool] = False
    # A rule that judges an invariant form: its findings point at the bullet (a secondary
    # label "invariant: ..."), and `prose explain` lists them under it (violated).
    judges_invariants: ClassVar[bool] = False

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        raise NotImplementedError

    def diagnostic(
        self,
        span: Span,
        message: str,
        *,
        secondary: Iterable[Label] = (),
        help: str | None = None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        return Diagnostic(
            code=self.code,
            severity=severity or self.severity,
            category=self.category,
            message=message,
            span=span,
            secondary=tuple(secondary),
            help=help,
        )

    @classmethod
    def summary(cls) -> str:
        """The first line of the docstring."""
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""

    @classmethod
    def documentation(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")


class FindingRule(Rule):
    """A rule that reports each finding of one class the semantic model records, in the
    finding's own words (`Finding.message`, `labels`, `help`): its code is the finding's.
    A subclass names `finding` and has no `check` of its own."""

    finding: ClassVar[type[Finding]]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "finding" in cls.__dict__:
            cls.code = cls.finding.code

    def check(self, ctx: CheckContext) -> Iterable[Diagnostic]:
        for found in ctx.model.findings_of(self.finding):
            yield self.diagnostic(found.span, found.message, secondary=found.labels,
                                  help=found.help)


RuleClass = TypeVar("RuleClass", bound=type[Rule])

# code -> rule class, filled by `@rule` as the modules of `prose.check.rules` are imported;
# `prose.check.registry` imports them and reads it.
REGISTERED: dict[str, type[Rule]] = {}


@overload
def rule(cls: RuleClass, /) -> RuleClass: ...


@overload
def rule(*, code: str | None = None, name: str, category: str, severity: Severity,
         judges_invariants: bool = False,
         compat_only: bool = False) -> Callable[[RuleClass], RuleClass]: ...


def rule(cls: RuleClass | None = None, /, *, code: str | None = None, name: str = "",
         category: str = "", severity: Severity | None = None, judges_invariants: bool = False,
         compat_only: bool = False) -> RuleClass | Callable[[RuleClass], RuleClass]:
    """Class decorator: enter a `Rule` subclass in the registry under its `code`.

    `@rule(code=..., name=..., category=..., severity=...)` gives the rule its entry in the
    table (a `FindingRule` takes its code from its finding); bare `@rule` reads the same
    from class variables the rule sets itself."""
    if cls is not None:
        return _register(cls)
    if severity is None:
        raise TypeError("a rule needs a severity")

    def register(target: RuleClass) -> RuleClass:
        if code is not None:
            target.code = code
        target.name = name
        target.category = category
        target.severity = severity
        target.judges_invariants = judges_invariants
        target.compat_only = compat_only
        return _register(target)

    return register


def _register(cls: RuleClass) -> RuleClass:
    code = cls.__dict__.get("code")
    if not isinstance(code, str):
        raise TypeError(f"rule {cls.__qualname__} sets no `code` of its own")
    taken = REGISTERED.get(code)
    if taken is not None and taken is not cls:
        raise RuntimeError(f"rule code {code} is taken twice: {taken.__qualname__} and {cls.__qualname__}")
    REGISTERED[code] = cls
    return cls
