"""The data of the information-hiding policy (`prose.lang.policy`): the rule names, what
one slot (or one entry of a map-valued slot) may receive, and a violation. Plain frozen
data, so that a trace records exactly what was enforced (`Policy.to_dict`)."""

from __future__ import annotations

from dataclasses import dataclass

# `Policy.violations`' entry of a map-valued slot when which entry a call reaches is unknown.
ANY_ENTRY = "*"
DEFAULT_ENTRY = "default"  # the entry a key with no entry of its own falls back to
# The rules of every call to a service no slot declares (an agent's session, an inline
# `session`): `no call receives D` holds for them too.
OTHER_CALLERS = "(every other service)"

# Rule names (what a violation is called in traces, errors and the audit).
REQUIRES = "requires"
SEES_ONLY = "sees-only"
NEVER_SEES = "never-sees"
NEVER_SEES_INDIRECTLY = "never-sees-indirectly"
UNAWARE_OF = "unaware-of"
INDEPENDENT = "independent"
UNMERGED = "unmerged"
OWN_CHAIN = "own-chain"
OWN_ROUND = "own-round"
PREDECESSOR = "predecessor"
BLIND = "blind"
SEALED_KEY = "sealed"


@dataclass(frozen=True, slots=True)
class Hidden:
    """A slot whose outputs a slot must not receive, and the invariant that says so.

    `form` is the invariant's form (`never-sees`, `never-sees-indirectly`,
    `unaware-of`, `independent`); `line` its line in the pattern file.
    """

    other: str
    form: str
    line: int = 0
    text: str = ""

    @property
    def transitive(self) -> bool:
        return self.form == NEVER_SEES_INDIRECTLY


@dataclass(frozen=True, slots=True)
class ForbiddenWord:
    """A word the pattern's literal text sent to a slot must not contain (`is unaware of`)."""

    word: str
    other: str
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class Unmerged:
    """`the result returns A and B unmerged`: no call receives both."""

    a: str
    b: str
    line: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class SlotPolicy:
    """What one slot may receive.

    `requires`: the slot's `requires:` entries (None when it declares none:
    then any input name is allowed by that rule). `sees_only`: input names
    from `sees only` invariants (None: no such invariant). `hidden`: slots
    whose outputs must not reach it. `forbidden_words`: words its literal
    text must not contain.
    """

    slot: str
    requires: tuple[str, ...] | None = None
    sees_only: tuple[str, ...] | None = None
    sees_only_line: int = 0
    hidden: tuple[Hidden, ...] = ()
    forbidden_words: tuple[ForbiddenWord, ...] = ()
    own_chain_line: int = 0  # `each A sees only its own chain` (0: no such invariant)
    predecessor_line: int = 0  # `each of S sees only its predecessor's output`
    own_round_line: int = 0  # `each A never sees its own round`
    blind_to: tuple[str, ...] = ()  # `is blind to the source of S`: the list-valued slots
    blind_line: int = 0

    @property
    def reads_chains(self) -> bool:
        """Whether a rule of this slot reads where each output was made (its chains)."""
        return bool(self.own_chain_line or self.own_round_line or self.predecessor_line
                    or self.blind_to)

    @property
    def never_sees(self) -> tuple[str, ...]:
        """Slots whose direct outputs this slot must not receive (any direct form)."""
        return tuple(dict.fromkeys(h.other for h in self.hidden if not h.transitive))


@dataclass(frozen=True, slots=True)
class Violation:
    """One reason a call must not be sent.

    `channel` is the input name (or `prompt`, `schema`, `ensures`, `role`)
    that carries it; `other` the hidden slot, `word` the forbidden word, and
    `line` the invariant's line, where they apply.
    """

    slot: str
    rule: str
    message: str
    channel: str | None = None
    other: str | None = None
    word: str | None = None
    line: int = 0
