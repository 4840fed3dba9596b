"""What a slot's service in an instance's `with:` may say, per kind (docs/instances.md).

The one allowlist: the instance reader refuses any other key (PS173) and the run sends a
model service's `SENT_PARAMETERS` with each request, so a key lint accepts is one the
run uses, and a key the run would use is one lint accepts.
"""

from __future__ import annotations

# A service is exactly one of these kinds, named by its key.
SERVICE_KINDS = ("model", "pattern", "python", "person")

SERVICE_KEYS: dict[str, frozenset[str]] = {
    "model": frozenset({"model", "prompt", "role", "schema", "max_tokens"}),
    "pattern": frozenset({"pattern", "with", "config", "rename"}),
    "python": frozenset({"python"}),
    "person": frozenset({"person"}),
}

# Every key any kind of service takes: a mapping with none of them is a map of services.
ALL_SERVICE_KEYS = frozenset().union(*SERVICE_KEYS.values())

# `person: { ... }`'s own keys.
PERSON_KEYS = frozenset({"name", "may_answer", "prompt"})

# A model service's keys that travel with each request as the model's parameters (the
# rest say which model and what it is told).
SENT_PARAMETERS = ("max_tokens",)


__all__ = ["ALL_SERVICE_KEYS", "PERSON_KEYS", "SENT_PARAMETERS", "SERVICE_KEYS", "SERVICE_KINDS"]
