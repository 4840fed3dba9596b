"""`prose explain`: who sees what, per call site, judge and invariant."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prose.check.lint import LintResult
from prose.check.registry import rule_table

if TYPE_CHECKING:
    from prose.spec.model import PatternSpec
from prose.diagnostics.model import Severity
from prose.lang.invariants import (
    InBindingOrder,
    NeverAfter,
    OutputsInOrder,
    ResultSatisfies,
    SameSequence,
)


def invariant_codes() -> frozenset[str]:
    """The codes of the rules that judge invariant forms (`Rule.judges_invariants`)."""
    return frozenset(code for code, rule in rule_table().items() if rule.judges_invariants)


@dataclass
class InputReport:
    name: str
    line: int
    provenance: list[str]
    transitive: list[str]


@dataclass
class CallReport:
    line: int
    column: int
    slot: str | None
    target: str
    inputs: list[InputReport] = field(default_factory=list)
    # Every slot the call may reach (a service variable or block parameter may hold several).
    slots: list[str] = field(default_factory=list)


@dataclass
class JudgeReport:
    line: int
    column: int
    text: str
    sees: dict[str, list[str]]


@dataclass
class InvariantReport:
    line: int
    text: str
    # "holds", "violated", "prose-only", "invalid", or "run-time": `the result satisfies`,
    # which the linter does not prove (the run time and the audit judge the result)
    status: str
    findings: list[str] = field(default_factory=list)


@dataclass
class ContractReport:
    """What a contract declares beyond a pattern: its kind, subscriptions, facets, callees."""

    kind: str
    subscriptions: list[dict[str, Any]] = field(default_factory=list)
    maintains: list[dict[str, Any]] = field(default_factory=list)
    continuity: str | None = None
    continuity_mode: str | None = None
    callees: dict[str, str] = field(default_factory=dict)


@dataclass
class Explanation:
    path: str
    pattern: str
    calls: list[CallReport]
    judges: list[JudgeReport]
    invariants: list[InvariantReport]
    returns: list[str] = field(default_factory=list)
    contract: ContractReport | None = None

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def contract_report(spec: PatternSpec) -> ContractReport | None:
    """The contract part of an explanation (None for a pattern)."""
    from prose.spec.contract_sections import continuity_mode

    if spec.is_pattern:
        return None
    data_flow = spec.kind in ("responsibility", "gateway", "system")
    needs = {item.name for item in spec.subscriptions}
    maintains = [
        {"name": p.name, "line": p.span.line, "facet": False, "text": p.description}
        for p in spec.parameters if p.optional and p.name not in needs
    ] if data_flow else []
    maintains += [
        {"name": f.name, "line": f.span.line, "facet": True, "text": f.text} for f in spec.facets
    ]
    return ContractReport(
        kind=spec.kind or "",
        subscriptions=[
            {"name": s.name, "line": s.span.line, "description": s.description}
            for s in spec.subscriptions
        ],
        maintains=maintains,
        continuity=spec.continuity,
        continuity_mode=continuity_mode(spec.continuity) if data_flow else None,
        callees=dict(spec.callees),
    )


def explain_contract(spec: PatternSpec) -> Explanation:
    """The explanation of a contract without a program (a responsibility, a gateway)."""
    return Explanation(spec.path, spec.name or "", [], [], [], [], contract_report(spec))


def explain(result: LintResult) -> Explanation:
    """Build the explanation of a linted file (it must have a spec and a program)."""
    context = result.context
    if context is None:
        raise ValueError("explain needs a file whose spec loads and whose program parses")
    flow = context.flow
    calls = []
    for site in sorted(flow.calls.values(), key=lambda s: (s.call.span.line, s.call.span.column)):
        report = CallReport(site.call.span.line, site.call.span.column, site.slot, site.target,
                            slots=sorted(site.slots))
        for entry in site.inputs.values():
            report.inputs.append(
                InputReport(entry.name, entry.prop.span.line, sorted(flow.provenance(entry.value)),
                            sorted(flow.transitive(entry.value)))
            )
        calls.append(report)
    judges = [
        JudgeReport(judge.condition.span.line, judge.condition.span.column, judge.condition.text,
                    {name: sorted(flow.provenance(value)) for name, value in judge.mentions.items()})
        for judge in sorted(flow.judges.values(), key=lambda j: (j.condition.span.line, j.condition.span.column))
    ]
    invariants = []
    by_invariant: dict[int, list[str]] = {}
    judging = invariant_codes()
    for diagnostic in result.diagnostics:
        if diagnostic.code not in judging:
            continue
        for label in diagnostic.secondary:
            if label.message.startswith("invariant:"):
                by_invariant.setdefault(label.span.line, []).append(
                    f"{diagnostic.span.line}:{diagnostic.span.column}: {diagnostic.message}"
                )
    invalid_lines = {
        d.span.line for d in result.diagnostics
        if d.code in ("PS150", "PS151", "PH638", "PH639") and d.severity is Severity.ERROR
    }
    for invariant in context.decl.invariants:
        line = invariant.span.line
        if invariant.form is None:
            status = "prose-only"
        elif line in invalid_lines:
            status = "invalid"
        elif line in by_invariant:
            status = "violated"
        elif isinstance(invariant.form, ResultSatisfies | NeverAfter | InBindingOrder
                        | SameSequence | OutputsInOrder):
            status = "run-time"
        else:
            status = "holds"
        invariants.append(InvariantReport(line, invariant.text.strip(), status, by_invariant.get(line, [])))
    returned: set[str] = set()
    for _, value in flow.returns:
        returned |= flow.provenance(value)
    contract = contract_report(result.spec) if result.spec is not None else None
    return Explanation(result.path, context.decl.name, calls, judges, invariants, sorted(returned),
                       contract)


def mermaid(explanation: Explanation) -> str:
    """A flowchart of the data flow between slots (paste into markdown)."""
    lines = ["flowchart LR", '  inputs(["parameters and config"])']
    slots = sorted({slot for call in explanation.calls for slot in call.slots})
    for slot in slots:
        lines.append(f"  {_node(slot)}[\"{slot}\"]")
    lines.append('  result(["result"])')
    edges: set[tuple[str, str, str]] = set()
    for call in explanation.calls:
        if not call.slots:
            continue
        for entry in call.inputs:
            sources = entry.provenance or ["inputs"]
            for source in sources:
                edges.update((source, slot, entry.name) for slot in call.slots)
    for source, target, label in sorted(edges):
        origin = "inputs" if source == "inputs" else _node(source)
        lines.append(f"  {origin} -->|{label}| {_node(target)}")
    for slot in explanation.returns:
        lines.append(f"  {_node(slot)} --> result")
    return "\n".join(lines) + "\n"


def _node(slot: str) -> str:
    return "slot_" + slot.replace("-", "_")
