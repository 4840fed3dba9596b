"""The information-hiding policy: checked invariants compiled for run-time enforcement.

The linter proves these properties over the program before it runs; the
interpreter enforces the same policy again on every call, before it is sent,
against the provenance each value actually carries. The policy is plain data
(JSON round-trip) so a trace can record exactly what was enforced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

RESERVED = frozenset({"prompt", "model", "retry", "backoff", "schema"})


def words(text: str) -> list[str]:
    """Lower-case words of a name or phrase (split on `_`, `-` and non-letters)."""
    return [word for word in re.split(r"[^a-z0-9]+", text.lower()) if word]


def requirement_matches(entry: str, input_name: str) -> bool:
    """LANGUAGE.md 1.1: the input name's words occur consecutively in the entry's words.

    Text in parentheses (a condition) is not part of the entry's words.
    """
    name_words = words(input_name)
    entry_words = words(re.sub(r"\([^)]*\)", " ", entry))
    if not name_words:
        return False
    width = len(name_words)
    return any(
        entry_words[start : start + width] == name_words
        for start in range(len(entry_words) - width + 1)
    )


@dataclass(frozen=True, slots=True)
class SlotPolicy:
    """What one slot may receive.

    `requires`: the slot's `requires:` entries (None when the slot declares
    none: then any input is allowed by this rule). `sees_only`: input names
    from a `sees only` invariant. `never_sees`: slots whose outputs must not
    reach this slot (direct provenance); `never_sees_indirectly`: the same
    over transitive provenance. `forbidden_words`: whole words that must not
    appear in literal text sent to the slot (`is unaware of`).
    """

    slot: str
    requires: tuple[str, ...] | None = None
    sees_only: tuple[str, ...] | None = None
    never_sees: tuple[str, ...] = ()
    never_sees_indirectly: tuple[str, ...] = ()
    forbidden_words: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Violation:
    """One reason a call must not be sent."""

    slot: str
    rule: str
    message: str
    input: str | None = None


@dataclass(frozen=True, slots=True)
class InputFlow:
    """What the interpreter knows about one input of a call it is about to send."""

    provenance: frozenset[str] = frozenset()
    transitive: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Policy:
    """The compiled policy of one pattern.

    `independent` lists the slot pairs that `--require-distinct-models` keeps
    on different models: those declared independent and those declared
    independently configured.
    """

    pattern: str
    slots: Mapping[str, SlotPolicy] = field(default_factory=dict)
    independent: tuple[tuple[str, str], ...] = ()

    def violations(
        self, slot: str, inputs: Mapping[str, InputFlow], literal_text: Sequence[str] = ()
    ) -> list[Violation]:
        """Every violation a call to `slot` with these inputs would commit.

        `inputs` maps each input name (the `prompt` property included, under
        `prompt`) to the provenance of its value; `literal_text` is the
        pattern's own literal text that the call would send (string literals,
        the prompt, input labels).
        """
        rules = self.slots.get(slot)
        if rules is None:
            return []
        found: list[Violation] = []
        for name, flow in inputs.items():
            if name not in RESERVED:
                if rules.requires is not None and not any(
                    requirement_matches(entry, name) for entry in rules.requires
                ):
                    found.append(
                        Violation(slot, "requires", f"`{slot}` does not require `{name}`", name)
                    )
                if rules.sees_only is not None and name not in rules.sees_only:
                    allowed = ", ".join(f"`{item}`" for item in rules.sees_only)
                    found.append(
                        Violation(
                            slot, "sees-only", f"`{slot}` sees only {allowed}, not `{name}`", name
                        )
                    )
            for other in rules.never_sees:
                if other in flow.provenance:
                    found.append(
                        Violation(
                            slot,
                            "never-sees",
                            f"`{name}` carries output of `{other}`, which `{slot}` must never see",
                            name,
                        )
                    )
            for other in rules.never_sees_indirectly:
                already = other in rules.never_sees and other in flow.provenance
                if other in flow.transitive and not already:
                    found.append(
                        Violation(
                            slot,
                            "never-sees-indirectly",
                            f"`{name}` carries output derived from `{other}`, which `{slot}` must never see, even indirectly",
                            name,
                        )
                    )
        for word in rules.forbidden_words:
            # `_` and `-` separate words, as in input names (LANGUAGE.md 1.1).
            pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", re.I)
            for text in literal_text:
                if pattern.search(text):
                    found.append(
                        Violation(
                            slot, "unaware-of", f"literal text sent to `{slot}` names `{word}`"
                        )
                    )
                    break
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "slots": {name: asdict(rules) for name, rules in self.slots.items()},
            "independent": [list(pair) for pair in self.independent],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Policy:
        slots = {}
        for name, raw in data.get("slots", {}).items():
            slots[name] = SlotPolicy(
                slot=raw["slot"],
                requires=tuple(raw["requires"]) if raw.get("requires") is not None else None,
                sees_only=tuple(raw["sees_only"]) if raw.get("sees_only") is not None else None,
                never_sees=tuple(raw.get("never_sees", ())),
                never_sees_indirectly=tuple(raw.get("never_sees_indirectly", ())),
                forbidden_words=tuple(raw.get("forbidden_words", ())),
            )
        independent = tuple((pair[0], pair[1]) for pair in data.get("independent", ()))
        return cls(data.get("pattern", ""), slots, independent)


def compile_policy(spec: Any) -> Policy:
    """Compile a pattern's `requires:` lists and checkable invariants into a Policy.

    Invariant forms that name something other than a slot are skipped (the
    spec loader reports them as PS150).
    """
    from prose.check.declarations import from_spec

    decl = from_spec(spec)
    requires: dict[str, tuple[str, ...] | None] = {name: slot.requires for name, slot in decl.slots.items()}
    sees_only: dict[str, set[str]] = {}
    never: dict[str, list[str]] = {name: [] for name in decl.slots}
    indirect: dict[str, list[str]] = {name: [] for name in decl.slots}
    words: dict[str, list[str]] = {name: [] for name in decl.slots}
    independent: list[tuple[str, str]] = []

    def add(target: dict[str, list[str]], slot: str, value: str) -> None:
        if value.lower() not in (item.lower() for item in target[slot]):
            target[slot].append(value)

    for invariant in decl.invariants:
        form = invariant.form
        if form is None:
            continue
        names = form.slot_names() if hasattr(form, "slot_names") else ()
        if any(name not in decl.slots for name in names):
            continue
        kind = form.kind
        if kind == "sees_only":
            allowed = set(form.inputs)
            sees_only[form.slot] = sees_only[form.slot] & allowed if form.slot in sees_only else allowed
        elif kind == "never_sees":
            add(indirect if form.indirectly else never, form.slot, form.other)
        elif kind == "unaware_of":
            add(never, form.slot, form.other)
            add(words, form.slot, form.other)
            role = decl.slots[form.other].role_word
            if role:
                add(words, form.slot, role)
            if decl.name:
                add(words, form.slot, decl.name)
        elif kind == "independent":
            add(never, form.a, form.b)
            add(never, form.b, form.a)
            independent.append((form.a, form.b))
        elif kind == "distinct_models":
            independent.append((form.a, form.b))
    slots = {
        name: SlotPolicy(
            slot=name,
            requires=requires[name],
            sees_only=tuple(sorted(sees_only[name])) if name in sees_only else None,
            never_sees=tuple(never[name]),
            never_sees_indirectly=tuple(indirect[name]),
            forbidden_words=tuple(words[name]),
        )
        for name in decl.slots
    }
    return Policy(decl.name, slots, tuple(independent))
