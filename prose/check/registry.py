"""The rule registry: one table of every lint rule, by stable code.

`prose rules` lists this table; `prose rules CODE` prints a rule's docstring.
Spec rules (PS1xx) are reported while loading the pattern file and are listed
here too, from `prose.spec.codes`.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from prose.check.rule import Rule

# code -> "module:Class" (modules under prose.check.rules)
RULE_TABLE: dict[str, str] = {
    "PN101": "undefined_name:UndefinedName",
    "PN102": "unknown_call_target:UnknownCallTarget",
    "PN103": "assignment_to_read_only:AssignmentToReadOnly",
    "PN104": "second_let:SecondLet",
    "PN105": "unused:UnusedVariable",
    "PN106": "unused:UnusedSlot",
    "PN107": "unused:UnusedConfig",
    "PN108": "block_arity:BlockArity",
    "PF201": "flow_rules:LoopControlOutsideLoop",
    "PF202": "flow_rules:OrphanClause",
    "PF203": "flow_rules:BranchResultBeforeJoin",
    "PF204": "flow_rules:ParallelSameName",
    "PF205": "flow_rules:ParallelRace",
    "PF206": "flow_rules:UnreachableCode",
    "PF207": "flow_rules:WaitForAllThenPickFirst",
    "PT301": "termination:UnboundedRepeat",
    "PT302": "termination:LoopWithoutMax",
    "PT303": "termination:InvalidMax",
    "PC401": "conditions:EmptyCondition",
    "PC402": "conditions:DiscretionWithoutNames",
    "PC403": "conditions:InvalidParallelModifiers",
    "PK501": "contract:ReturnsMismatch",
    "PK502": "contract:MissingRequiredInput",
    "PH601": "requires:UndeclaredInput",
    "PH602": "requires:StringLiteralInReturn",
    "PH603": "invariants:SeesOnlyViolated",
    "PH604": "invariants:NeverSeesViolated",
    "PH605": "invariants:NeverSeesIndirectlyViolated",
    "PH606": "invariants:UnawareOfViolated",
    "PH607": "invariants:IndependenceViolated",
    "PH608": "invariants:InvariantNotCheckable",
    "PH609": "invariants:OwnChainViolated",
    "PH610": "invariants:PredecessorViolated",
    "PT304": "structure_invariants:LoopNotBoundedByConfig",
    "PK503": "structure_invariants:OnlyGrowsViolated",
    "PK504": "structure_invariants:ReturnsMergedViolated",
    "PK505": "text_fields:FieldOfTextOutput",
}


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    """An instance of every rule, in code order."""
    rules: list[Rule] = []
    for code in sorted(RULE_TABLE):
        module_name, class_name = RULE_TABLE[code].split(":")
        module = importlib.import_module(f"prose.check.rules.{module_name}")
        rule: Rule = getattr(module, class_name)()
        if rule.code != code:
            raise RuntimeError(f"rule table says {code} but {class_name} has code {rule.code}")
        rules.append(rule)
    return tuple(rules)


def rule_by_code(code: str) -> Rule | None:
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None
