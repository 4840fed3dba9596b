"""The kinds of contract a `*.prose.md` file may declare, and what each one is made of.

OpenProse's Contract Markdown has five authored kinds (docs/contracts.md):

- `pattern`: slots, config, invariants and a `### Delegation` program;
- `function`: a called render, `### Parameters` -> `### Returns`, optionally a
  `### Execution` program;
- `responsibility`: a standing truth kept current by a reconciler:
  `### Goal`, `### Requires` (subscriptions), `### Maintains` (with `####`
  facets), `### Continuity`;
- `gateway`: an external-driven responsibility (`### Receives`, `### Emits`...);
- `test`: fixtures for a `subject:` and natural-language `### Expects`.

`service` and `system` are retired kinds: read, with a warning naming what
replaces them. The table says, per kind, which sections are contract sections,
which section holds the program, and how section synonyms fold.
"""

from __future__ import annotations

from dataclasses import dataclass

# Sections every kind may carry (documentation or hints this toolchain keeps).
_COMMON = frozenset(
    {
        "description",
        "metadata",
        "notes",
        "invariants",
        "strategies",
        "errors",
        "environment",
        "runtime",
        "skills",
        "tools",
        "shape",
    }
)
_DATA_FLOW = frozenset(
    {"goal", "requires", "maintains", "continuity", "execution", "patterns"}
)


@dataclass(frozen=True)
class ContractKind:
    """One kind: its sections, where its program is, and what `prose run` does with it."""

    name: str
    sections: frozenset[str]
    program_section: str
    runnable: bool
    synonyms: tuple[tuple[str, str], ...] = ()
    summary: str = ""

    def section_name(self, name: str) -> str:
        """A normalised heading with this kind's synonyms folded (`ensures` -> `returns`)."""
        return dict(self.synonyms).get(name, name)


KINDS: dict[str, ContractKind] = {
    kind.name: kind
    for kind in (
        ContractKind(
            "pattern",
            _COMMON | {"slots", "config", "parameters", "returns", "delegation"},
            "delegation",
            True,
            (("requires", "parameters"), ("maintains", "returns"), ("ensures", "returns")),
            "a reusable agent design: slots, config, invariants and a `### Delegation` program",
        ),
        ContractKind(
            "function",
            _COMMON | {"parameters", "returns", "execution", "patterns"},
            "execution",
            True,
            (("requires", "parameters"), ("ensures", "returns")),
            "a called render: `### Parameters` -> `### Returns`, run once per call",
        ),
        ContractKind(
            "responsibility",
            _COMMON | _DATA_FLOW,
            "execution",
            False,
            (("ensures", "maintains"), ("criteria", "maintains"), ("constraints", "invariants")),
            "a standing truth a reconciler keeps current: it subscribes to what it "
            "`### Requires` and maintains what `### Maintains` declares",
        ),
        ContractKind(
            "gateway",
            _COMMON | _DATA_FLOW | {"schedule", "receives", "emits", "payload"},
            "execution",
            False,
            (("ensures", "maintains"),),
            "an external-driven responsibility: outside events enter the graph through it",
        ),
        ContractKind(
            "test",
            _COMMON | {"fixtures", "expects", "expects not"},
            "execution",
            False,
            (),
            "a harness for `prose test`: fixtures for a `subject:` and assertions",
        ),
    )
}

# Retired kinds: read like their replacement, with a warning that names it.
RETIRED: dict[str, tuple[str, str]] = {
    "service": ("function", "`kind: function` (a service is now a called function)"),
    "system": (
        "responsibility",
        "`kind: responsibility`, composing with `call` in `### Execution` or with "
        "subscriptions (there is no `system` kind)",
    ),
}

# Every section some kind knows; a section of another kind is kept, not an error.
ALL_SECTIONS = frozenset().union(*(kind.sections for kind in KINDS.values()))


def kind_of(name: str | None) -> ContractKind:
    """The kind called `name`; a retired kind reads as its replacement; unknown reads as a pattern."""
    if name in KINDS:
        return KINDS[name]
    if name in RETIRED:
        return KINDS[RETIRED[name][0]]
    return KINDS["pattern"]
