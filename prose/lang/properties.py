"""Call properties with a reserved meaning (LANGUAGE.md 3); every other property is an input."""

from __future__ import annotations

# Reserved properties are not inputs: `requires:` and `sees only` do not apply to them.
RESERVED_PROPERTIES = frozenset({"prompt", "model", "retry", "backoff", "schema"})

# Reserved properties whose content reaches the model, so hiding applies to them:
# `prompt` is added to the user message, `schema` is sent as the response format.
MODEL_CHANNELS = frozenset({"prompt", "schema"})

# Reserved properties that only steer the call (routing, attempts); their values never
# reach the model's messages.
CONTROL_PROPERTIES = RESERVED_PROPERTIES - MODEL_CHANNELS


def is_input(name: str) -> bool:
    """Whether a call property is one of the slot's inputs (not a reserved property)."""
    return name not in RESERVED_PROPERTIES
