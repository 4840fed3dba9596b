"""The soundness generator covers the whole language (issue 34, item 4).

tests/test_soundness.py is only as good as the programs it draws: a construct
the generator never writes is a construct whose labels nobody checks. This
test draws programs from `tests.soundness_programs.patterns` (no linting, no
running: it is cheap) and holds the generator to two tables:

- every syntax node class of `prose.syntax.nodes` is either in
  `GENERATED` (and then appears in the drawn programs) or in
  `NOT_GENERATED` with the reason; a new node class fails here until the
  generator writes it or the table says why it cannot;
- every run-time value kind (each member of `prose.runtime.values.Data`,
  and the kinds that are not data: block closures, agent memory, caught
  errors, object keys written at run time, loops and blocks in value
  position) names the constructs that make it, and those appear too.
"""

from __future__ import annotations

import typing
from collections import Counter

from hypothesis import HealthCheck, Phase, given, seed, settings

from prose.check import lint_text
from prose.runtime import values
from prose.syntax import nodes as n
from prose.syntax.parser import parse_program
from prose.syntax.walk import children
from tests.soundness_programs import (
    FORMS,
    GATED_FORMS,
    GeneratedPattern,
    Invariant,
    pattern_text,
    patterns,
)

DRAWN = 400
ROUNDS = 5

# Node classes the generator cannot write, and why. Everything else must be drawn.
NOT_GENERATED: dict[type[n.Node], str] = {
    n.Choice: "`choice` is decided by a judge; the oracle needs deterministic programs "
              "(a judge's answer carries the condition's labels: tests/fixtures/leaks covers it)",
    n.Option: "only inside `choice`",
    n.Orphan: "a parse-error node (an `else`/`catch` with nothing to attach to), not a program",
    n.Comment: "carries no value",
    n.Use: "imports a nested pattern from another file; covered by tests/test_nested_hiding.py",
    n.Program: "the root, always present",
}

# Value kinds and the constructs (GeneratedPattern.constructs) that make each one.
VALUE_KINDS: dict[str, frozenset[str]] = {
    "NoneType": frozenset({"try"}),  # a failed optional read, a `let` in an untaken branch
    "bool": frozenset({"if", "if/elif/else"}),
    "int": frozenset({"interpolation"}),
    "float": frozenset({"interpolation"}),
    "str": frozenset({"interpolation", "triple-quoted string"}),
    "tuple": frozenset({"record/append"}),  # lists
    "dict": frozenset({"object literal", "member assignment"}),  # objects
    "Service": frozenset({"service variable", "loop over services",
                          "call through a service value", "call through a block parameter"}),
    "object key": frozenset({"member assignment"}),
    "block closure": frozenset({"block", "block defined in an if", "do of a block defined in an if"}),
    "caught error": frozenset({"catch variable", "throw", "refused operation"}),
    "agent memory": frozenset({"session (resume: scout)"}),
    "session": frozenset({"session (session: scout)", "session (inline)"}),
    "pipeline": frozenset({"pipeline map", "pipeline pmap", "pipeline filter", "pipeline reduce"}),
    "loop in value position": frozenset({"collecting for", "collecting parallel for",
                                         "value of a body: collecting loop"}),
    "block in value position": frozenset({"do in value position", "anonymous do in value position"}),
    "parallel race": frozenset({"parallel race"}),
    "operator, slice or built-in": frozenset({"operator", "slice", "built-in",
                                              "comparison as a value"}),
}
DATA_KINDS = {"NoneType", "bool", "int", "float", "str", "tuple", "dict", "Service"}


def node_classes() -> set[type[n.Node]]:
    """The node classes `prose.syntax.nodes` defines (a slots dataclass replaces the class
    it decorates, so `Node.__subclasses__()` would list both)."""
    return {value for value in vars(n).values()
            if isinstance(value, type) and issubclass(value, n.Node) and value is not n.Node}


def data_kinds() -> set[str]:
    return {getattr(kind, "__name__", None) or typing.get_origin(kind).__name__
            for kind in typing.get_args(values.Data)}


def drawn() -> tuple[Counter[type[n.Node]], Counter[str], dict[str, Invariant]]:
    """Node classes and constructs of generated programs: rounds of `DRAWN` programs (each
    round its own fixed seed, so a run is reproducible) until every expected class and
    construct has appeared, at most `ROUNDS` rounds (rare ones, `continue` say, are drawn a
    few times in a thousand)."""
    classes: Counter[type[n.Node]] = Counter()
    constructs: Counter[str] = Counter()
    forms: dict[str, Invariant] = {}  # an invariant of each form drawn
    expected = node_classes() - set(NOT_GENERATED)
    wanted = set().union(*VALUE_KINDS.values())

    def draw_round(number: int) -> None:
        @seed(number)
        @settings(max_examples=DRAWN, deadline=None, database=None, phases=(Phase.generate,),
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.filter_too_much])
        @given(pattern=patterns())
        def draw(pattern: GeneratedPattern) -> None:
            constructs.update(pattern.constructs)
            for invariant in pattern.invariants:
                forms.setdefault(invariant.form, invariant)
            pending: list[n.Node] = [parse_program(pattern.program)]
            while pending:
                node = pending.pop()
                classes[type(node)] += 1
                pending.extend(children(node))

        draw()

    for number in range(ROUNDS):
        draw_round(number)
        if expected <= set(classes) and wanted <= set(constructs) and set(FORMS) <= set(forms):
            break
    return classes, constructs, forms


CLASSES, CONSTRUCTS, FORMS_DRAWN = drawn()


def test_every_node_class_is_generated_or_excluded_with_a_reason() -> None:
    missing = {cls.__name__ for cls in node_classes() - set(NOT_GENERATED) - {n.Node}
               if cls not in CLASSES}
    assert not missing, (
        f"no generated program (up to {ROUNDS} x {DRAWN}) holds these node classes: {sorted(missing)}; "
        "teach tests/soundness_programs.py to write them (with the construct's flow rule "
        "in prose/lang/), or say in NOT_GENERATED why it cannot")


def test_exclusions_are_real_node_classes_and_not_drawn() -> None:
    assert set(NOT_GENERATED) <= node_classes() | {n.Node}
    drawn_anyway = {cls.__name__ for cls in NOT_GENERATED
                    if CLASSES[cls] and cls not in (n.Program, n.Comment)}
    assert not drawn_anyway, f"drawn, so remove them from NOT_GENERATED: {drawn_anyway}"


def test_every_value_kind_has_constructs_that_make_it() -> None:
    unmapped = data_kinds() - DATA_KINDS
    assert not unmapped, (f"prose.runtime.values.Data holds kinds the generator table does "
                          f"not name: {sorted(unmapped)}; add them to VALUE_KINDS")
    unmade = {kind: sorted(made) for kind, made in VALUE_KINDS.items()
              if not any(CONSTRUCTS[construct] for construct in made)}
    assert not unmade, f"value kinds no generated program makes (kind: constructs): {unmade}"


def test_constructs_named_in_the_table_exist() -> None:
    named = set().union(*VALUE_KINDS.values())
    unknown = {name for name in named if not CONSTRUCTS[name]}
    assert not unknown, (f"constructs in VALUE_KINDS that {ROUNDS} x {DRAWN} programs never record "
                         f"(renamed, or never drawn): {sorted(unknown)}")


def test_every_invariant_form_is_drawn_and_checked() -> None:
    """Each form of `tests.soundness_programs.FORMS` appears in drawn patterns, and its
    bullet is one the linter checks (a misspelt bullet would be prose, PH608, and the
    soundness test would compare nothing for it)."""
    assert set(GATED_FORMS) <= set(FORMS), "a form with a seeded sample is not drawn"
    missing = sorted(set(FORMS) - set(FORMS_DRAWN))
    assert not missing, f"invariant forms no drawn pattern holds: {missing}"
    for form, invariant in sorted(FORMS_DRAWN.items()):
        text, _ = pattern_text("return { result: task_brief }", [invariant])
        bullet = text.splitlines().index(invariant.bullet()) + 1
        prose_only = [d for d in lint_text(text, "generated.prose.md").diagnostics
                      if d.code == "PH608" and d.span.line == bullet]
        assert not prose_only, f"`{form}`: {invariant.bullet()} is not a checked form"
