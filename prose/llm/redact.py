"""Keep secrets (API keys, tokens) out of everything this package returns or logs."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"

_SECRET_KEY = re.compile(
    r"api_?key|(^|_)key$|secret|token|password|credential|authorization", re.I
)
_SECRET_ENV = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD)$", re.I)
# Shapes of keys that providers echo back in error messages.
_SECRET_SHAPES = (
    re.compile(r"\bsk-[A-Za-z0-9_\-*.]{4,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-~+/=*]+"),
    re.compile(r"(?i)(api[_-]?key[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+"),
)
_ENV_REFERENCE = "os.environ/"
_MIN_SECRET_LENGTH = 8  # shorter "keys" (`ollama`, `none`) are placeholders


def is_secret_key(name: str) -> bool:
    """Whether a settings key (`api_key`, `aws_secret_access_key`, ...) holds a secret."""
    return bool(_SECRET_KEY.search(name))


def mask_secrets(value: Any) -> Any:
    """A copy of `value` with the values of secret-looking keys replaced by `***`."""
    if isinstance(value, Mapping):
        return {
            key: MASK if isinstance(key, str) and is_secret_key(key) and item else mask_secrets(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [mask_secrets(item) for item in value]
    return value


def secrets_in(settings: Any) -> set[str]:
    """The secret strings in nested settings; `os.environ/NAME` references are resolved."""
    found: set[str] = set()
    if isinstance(settings, Mapping):
        for key, item in settings.items():
            if isinstance(key, str) and is_secret_key(key) and isinstance(item, str):
                found.add(item)
                if item.startswith(_ENV_REFERENCE):
                    found.add(os.environ.get(item[len(_ENV_REFERENCE) :], ""))
            else:
                found |= secrets_in(item)
    elif isinstance(settings, list | tuple):
        for item in settings:
            found |= secrets_in(item)
    return {secret for secret in found if len(secret) >= _MIN_SECRET_LENGTH}


def secrets_in_environment() -> set[str]:
    """Values of environment variables named like keys (`OPENAI_API_KEY`, `HF_TOKEN`)."""
    return {
        value
        for name, value in os.environ.items()
        if _SECRET_ENV.search(name) and len(value) >= _MIN_SECRET_LENGTH
    }


class Redactor:
    """Replaces known secrets, and strings shaped like keys, with `***`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = sorted(
            {s for s in secrets if len(s) >= _MIN_SECRET_LENGTH}, key=len, reverse=True
        )

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        for shape in _SECRET_SHAPES:
            text = shape.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, text)
        return text

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"
