"""The pattern spec model: what a `*.prose.md` file declares (LANGUAGE.md 1.1).

Every item carries a `span` (1-based positions in the markdown file). The
model is data: it holds no Python callable and has no field that could name
one (a pattern file must not be able to run code; see `prose.spec.instance`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from prose.diagnostics.model import Diagnostic, Severity
from prose.source import Span
from prose.spec.invariants import InvariantForm

_WORD_SPLIT = re.compile(r"[^0-9A-Za-z]+")


def name_words(text: str) -> list[str]:
    """The lowercase words of a name or an entry, split on anything not alphanumeric."""
    return [word for word in _WORD_SPLIT.split(text.lower()) if word]


@dataclass(frozen=True, kw_only=True)
class _Frozen:
    """A frozen spec item; `model_copy(update=...)` returns a changed copy."""

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        return dataclasses.replace(self, **(update or {}))


@dataclass(frozen=True, kw_only=True)
class Section(_Frozen):
    """A `##`/`###` section: its heading as written, its normalised name, its body.

    `name` is the heading lowercased with spaces collapsed, with the synonyms
    `requires` -> `parameters` and `maintains`/`ensures` -> `returns` applied.
    `span` runs from the heading line to the section's last line.
    """

    heading: str
    name: str
    known: bool
    span: Span
    text: str


@dataclass(frozen=True, kw_only=True)
class Requirement(_Frozen):
    """One entry of a slot's `requires:` list.

    `text` is the entry without its parenthesised condition; `name` is set when
    the entry is a single identifier. `optional` is True when the entry has a
    condition in parentheses (or starts with the word "optional").
    """

    text: str
    name: str | None = None
    optional: bool = False
    condition: str | None = None
    span: Span

    def matches(self, input_name: str) -> bool:
        """LANGUAGE.md 1.1: the name's words occur consecutively in the entry's words."""
        wanted = name_words(input_name)
        words = name_words(self.text)
        if not wanted or len(wanted) > len(words):
            return False
        width = len(wanted)
        return any(
            words[start : start + width] == wanted for start in range(len(words) - width + 1)
        )


@dataclass(frozen=True, kw_only=True)
class ToolDecl(_Frozen):
    """One entry of a slot's `tools:` line (`prose.lang.tools`): `read`, `cli:pytest`,
    `mcp:memory (writes)`. `writes` is True when the slot may write through the tool;
    `optional` when an instance may leave it unimplemented (it is then not offered)."""

    spelling: str
    writes: bool = False
    optional: bool = False
    span: Span


@dataclass(frozen=True, kw_only=True)
class Slot(_Frozen):
    """A slot: a service the pattern delegates to.

    `list_valued` reflects only the `list` marker (a slot iterated by `for` is
    list-valued too; the linter decides that from the program). `requires_declared`
    is False when the slot has no `requires:` line: such a slot accepts any input.
    `ensures` also holds a `maintains:` line (`ensures_keyword` says which).
    """

    name: str
    span: Span
    primary: bool = False
    list_valued: bool = False
    map_valued: bool = False
    markers: list[str] = field(default_factory=list)
    description: str | None = None
    requires: list[Requirement] = field(default_factory=list)
    requires_declared: bool = False
    ensures: str | None = None
    ensures_keyword: str | None = None
    ensures_span: Span | None = None
    output_schema: dict[str, str] | None = None
    role_word: str | None = None
    # `tools:`: what the slot may use while it answers (an agent; docs/agents.md).
    tools: list[ToolDecl] = field(default_factory=list)
    tools_span: Span | None = None
    max_turns: int | None = None

    def requirement_for(self, input_name: str) -> Requirement | None:
        """The first `requires:` entry that `input_name` matches, if any."""
        for requirement in self.requires:
            if requirement.matches(input_name):
                return requirement
        return None

    def accepts(self, input_name: str) -> bool:
        """Whether a call may pass `input_name` (always, when no `requires:` is declared)."""
        if not self.requires_declared:
            return True
        return self.requirement_for(input_name) is not None


@dataclass(frozen=True, kw_only=True)
class ConfigParam(_Frozen):
    """A `### Config` key. `default` is None both for `default: none` and for no default."""

    name: str
    type: str
    default: Any = None
    has_default: bool = False
    description: str = ""
    span: Span


@dataclass(frozen=True, kw_only=True)
class Parameter(_Frozen):
    """An instance input from `### Parameters` (or `### Requires`)."""

    name: str
    type: str | None = None
    description: str = ""
    optional: bool = False
    default: Any = None
    span: Span


@dataclass(frozen=True, kw_only=True)
class ReturnKey(_Frozen):
    """A key of the result object: a `### Returns` bullet starting with a backticked name.

    `condition` is set when the key is present only sometimes ("when the
    pattern aborts", "if ...", "(optional)"): such a key is never required.
    """

    name: str
    description: str = ""
    span: Span
    condition: str | None = None

    @property
    def conditional(self) -> bool:
        return self.condition is not None


@dataclass(frozen=True, kw_only=True)
class Facet(_Frozen):
    """A `####` part of `### Maintains` (a facet) or of `### Requires` (a facet-need)."""

    name: str
    text: str = ""
    span: Span


@dataclass(frozen=True, kw_only=True)
class Subscription(_Frozen):
    """One need of a responsibility's `### Requires`: a backticked bullet or a `####` facet-need."""

    name: str
    description: str = ""
    span: Span


@dataclass(frozen=True, kw_only=True)
class Expectation(_Frozen):
    """A `kind: test` assertion: `### Expects` (or `### Expects Not` when `negated`)."""

    subject: str | None = None
    text: str
    negated: bool = False
    span: Span

    @property
    def statement(self) -> str:
        """The assertion as one sentence ("`summary` must not: ...")."""
        verb = "must not" if self.negated else "must"
        where = f"`{self.subject}` " if self.subject else "the result "
        return f"{where}{verb} satisfy: {self.text}"


@dataclass(frozen=True, kw_only=True)
class Invariant(_Frozen):
    """An `### Invariants` bullet; `form` is set when it is a checkable form.

    `name_spans` maps every backticked name in the bullet to its position.
    """

    text: str
    span: Span
    form: InvariantForm | None = None
    name_spans: dict[str, Span] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Shape(_Frozen):
    """`### Shape`: what the pattern itself does, what each delegate does, what is prohibited."""

    self_text: str | None = None
    delegates: dict[str, str] = field(default_factory=dict)
    delegate_spans: dict[str, Span] = field(default_factory=dict)
    prohibited: str | None = None
    span: Span


@dataclass(frozen=True, kw_only=True)
class DelegationBlock(_Frozen):
    """A fenced ```` ```prose ```` block of `### Delegation` (as `prose.syntax.markdown.ProseBlock`).

    `line_offset` is the number of file lines before the block's first line
    (pass it to `prose.syntax.parse_program`); `fence_line` is the opening fence.
    """

    source: str
    line_offset: int
    fence_line: int
    end_line: int
    closed: bool
    span: Span


@dataclass(frozen=True, kw_only=True)
class PatternInstance(_Frozen):
    """An entry of a contract's `### Patterns` yaml block: a named, configured pattern."""

    name: str
    pattern: str
    bindings: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    span: Span


@dataclass(frozen=True, kw_only=True)
class PatternSpec(_Frozen):
    """Everything a contract file (or one `## name` node in it) declares, with positions.

    The name is historical: every kind is read into this model
    (`prose.spec.kinds`). `program_section` says where the program is
    (`delegation` for a pattern, `execution` otherwise); `delegation_blocks`
    holds that section's ```prose blocks whatever its name. `inline_nodes`
    are the `## name` nodes of the file (kind `function`), each a spec.
    """

    path: str
    span: Span
    frontmatter: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    kind: str | None = None
    version: str | None = None
    title: str | None = None
    summary: str | None = None
    description: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    config: list[ConfigParam] = field(default_factory=list)
    parameters: list[Parameter] = field(default_factory=list)
    returns: list[ReturnKey] = field(default_factory=list)
    invariants: list[Invariant] = field(default_factory=list)
    shape: Shape | None = None
    delegation_blocks: list[DelegationBlock] = field(default_factory=list)
    unknown_sections: list[Section] = field(default_factory=list)
    program_section: str = "delegation"
    goal: str | None = None
    subscriptions: list[Subscription] = field(default_factory=list)
    maintains_text: str | None = None
    facets: list[Facet] = field(default_factory=list)
    continuity: str | None = None
    subject: str | None = None
    fixtures: dict[str, Any] = field(default_factory=dict)
    fixture_spans: dict[str, Span] = field(default_factory=dict)
    expectations: list[Expectation] = field(default_factory=list)
    inline_nodes: list[PatternSpec] = field(default_factory=list)
    pattern_instances: list[PatternInstance] = field(default_factory=list)
    # Slots a contract's program calls: sibling contracts and `## name` nodes
    # (`prose.uses.resolve_call`), added when the file is read with its folder.
    callees: dict[str, str] = field(default_factory=dict)

    @property
    def is_pattern(self) -> bool:
        return self.kind in (None, "pattern")

    def inline_node(self, name: str) -> PatternSpec | None:
        """The `## name` node called `name`, if the file has one."""
        return next((node for node in self.inline_nodes if node.name == name), None)

    @property
    def delegation(self) -> DelegationBlock | None:
        """The program block (the first one, if the file wrongly has several)."""
        return self.delegation_blocks[0] if self.delegation_blocks else None

    def slot(self, name: str) -> Slot | None:
        """The slot called `name` (the first declaration), if any."""
        return next((slot for slot in self.slots if slot.name == name), None)

    def config_param(self, name: str) -> ConfigParam | None:
        """The config key called `name` (the first declaration), if any."""
        return next((param for param in self.config if param.name == name), None)

    def parameter(self, name: str) -> Parameter | None:
        """The parameter called `name` (the first declaration), if any."""
        return next((param for param in self.parameters if param.name == name), None)

    def section(self, name: str) -> Section | None:
        """The first section with normalised name `name`, if any."""
        return next((section for section in self.sections if section.name == name), None)

    @property
    def slot_names(self) -> list[str]:
        return list(dict.fromkeys(slot.name for slot in self.slots))

    @property
    def config_names(self) -> list[str]:
        return list(dict.fromkeys(param.name for param in self.config))

    def required_inputs(self) -> list[Parameter]:
        """Parameters an instance must supply: not optional, not a slot, not a config key."""
        taken = set(self.slot_names) | set(self.config_names)
        return [p for p in self.parameters if not p.optional and p.name not in taken]

    def list_valued_slots(self) -> set[str]:
        """Slots marked `list`, or documented by a `T[]` parameter of the same name.

        A slot iterated by `for` is list-valued too; that needs the program
        (see `prose.spec.instance_check.iterated_names`).
        """
        out = {slot.name for slot in self.slots if slot.list_valued}
        for param in self.parameters:
            if param.type and param.type.endswith("[]") and self.slot(param.name) is not None:
                out.add(param.name)
        return out


@dataclass(frozen=True, kw_only=True)
class SpecResult(_Frozen):
    """What `load_spec` returns: the spec (None when the file is unusable) and findings."""

    spec: PatternSpec | None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def ok(self) -> bool:
        """True when there is a spec and no error-severity diagnostic."""
        return self.spec is not None and not self.errors
