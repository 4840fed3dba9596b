"""Keep secrets (API keys, tokens) out of everything this package writes or prints.

One masking, `redact(value, secrets)`, for every output of a run: the trace,
the result and errors `prose run` prints, the response cache, `prose export`
and `prose stats`. It replaces the values of secret-named fields
(`api_key`, `authorization`, ...) and every occurrence of a known secret in
any string with `***`. The known secrets of a run are `run_secrets()`: the
values of secret-named environment variables and the LLM config's secrets.

`Redactor` adds the shapes of keys that providers echo in error messages
(`sk-...`, `Bearer ...`), for the model layer's error texts.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

MASK = "***"

# A field of a written record whose value is a secret. Narrow on purpose: a
# trace's `key` (the cache key) and a usage's `prompt_tokens` are not secrets.
SECRET_FIELD = re.compile(
    r"(api[_-]?key|secret|password|passwd|authorization|credential|(^|[_-])token$)", re.I
)
# A settings key whose string value is a secret (LiteLLM's `api_key`,
# `aws_secret_access_key`, `vertex_credentials`, `private_key`, ...): wider.
# A header name is a settings key too (`extra_headers: {x-api-key: ...}`, Azure's `api-key`,
# `Ocp-Apim-Subscription-Key`, `x-goog-api-key`, `Cookie`).
_SECRET_SETTING = re.compile(
    r"api[_-]?key|(^|[_-])key$|secret|token|password|credential|authorization|cookie", re.I
)
# The credentials of a URL (`http://user:PASSWORD@host/v1` in an `api_base`): group 1 is
# what comes before the password, group 2 the password.
_URL_CREDENTIALS = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)([^/\s@]+)@")
# A URL's query parameter whose name says it holds a secret (`?key=...`, `&api_key=`,
# `access_token`, `client_secret`, `password`, `sig`, `X-Amz-Signature`, ...), any case:
# group 1 is the name with its `=`, group 2 the value.
_URL_QUERY_SECRET = re.compile(
    r"(?i)((?<=[?&;])(?:[\w.\-]*?(?:key|token|secret|passw(?:or)?d|pwd|credential|auth"
    r"|signature)[\w.\-]*|sig)=)([^&#;\s\"'<>]+)"
)
# Shapes of keys that providers echo back in error messages.
_SECRET_SHAPES = (
    re.compile(r"\bsk-[A-Za-z0-9_\-*.]{4,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-~+/=*]+"),
    re.compile(r"(?i)(api[_-]?key[\"']?\s*[:=]\s*[\"']?)[^\s\"',}&]+"),
    re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)[^/\s@]+(?=@)"),  # a URL's password
    _URL_QUERY_SECRET,  # a URL's `?key=...`
)
# Anything in a JSON text that could be a key `SECRET_FIELD` matches: its unanchored words
# anywhere (values included), and a key ending in `token` (json.dumps writes a key as
# `"...token": `; a value is never followed by a colon). A superset of the keys, so a text it
# does not match has no secret-named field. For ASCII text the words are looked for in the
# lower-cased text (much faster than the regex); other text may hold letters that
# IGNORECASE folds to ASCII ones (`ſ`, the Kelvin sign), so it gets the regex itself.
_MAYBE_SECRET_FIELD = re.compile(
    r'api[_-]?key|secret|password|passwd|authorization|credential|token"\s*:', re.I
)
_SECRET_WORDS = ("apikey", "api_key", "api-key", "secret", "password", "passwd",
                 "authorization", "credential")
_TOKEN_KEY = re.compile(r'token"\s*:')


def _maybe_secret_field(text: str) -> bool:
    if not text.isascii():
        return _MAYBE_SECRET_FIELD.search(text) is not None
    lowered = text.lower()
    if any(word in lowered for word in _SECRET_WORDS):
        return True
    return 'token"' in lowered and _TOKEN_KEY.search(lowered) is not None


_ENV_REFERENCE = "os.environ/"
MIN_SECRET_LENGTH = 8  # shorter "keys" (`ollama`, `none`) are placeholders


def is_secret_key(name: str) -> bool:
    """Whether a settings key (`api_key`, `aws_secret_access_key`, ...) holds a secret."""
    return bool(_SECRET_SETTING.search(name))


def redact(value: Any, secrets: Iterable[str]) -> Any:
    """`value` with secret-named fields masked and each of `secrets` replaced by `***`.

    Works on a string or on nested mappings, lists, tuples and sets (they become
    lists; mapping keys are masked too) and on bytes (as UTF-8 text); anything
    else is returned as is.
    Give `secrets` longest first (`run_secrets` does) so a secret that
    contains another is masked whole.
    """
    known = [secret for secret in secrets if len(secret) >= MIN_SECRET_LENGTH]
    return _masked(value, known, _secret_field)


@functools.lru_cache(maxsize=8192)
def _secret_field(name: str) -> bool:
    """Whether a written record's field `name` holds a secret (asked for every key)."""
    return SECRET_FIELD.search(name) is not None


def replace_secrets(value: Any, secrets: Iterable[str]) -> Any:
    """`redact` without the masking of secret-named fields: only each of `secrets` in the
    strings of `value` (mapping keys too) becomes `***`."""
    known = [secret for secret in secrets if len(secret) >= MIN_SECRET_LENGTH]
    return _masked(value, known, lambda name: False)


class JsonScrubber:
    """`redact` for records written as JSON text, paying the walk only when it can matter.

    `scrub(data)`'s text is exactly `dumps(redact(data, secrets))` (`dumps` is
    `json.dumps` with `ensure_ascii=False, default=str` unless given). Each secret's forms in JSON text (as is, and escaped as json.dumps escapes
    it) are worked out once; a record whose text contains none of them and nothing that could
    be a secret-named key is written as dumped, without walking it (the common case: a trace
    event). Otherwise the record is walked by `redact`, the one masking rule.
    """

    def __init__(self, secrets: Iterable[str],
                 dumps: Callable[[Any], str] | None = None) -> None:
        self._dumps = dumps or functools.partial(json.dumps, ensure_ascii=False, default=str)
        self._secrets = [secret for secret in secrets if len(secret) >= MIN_SECRET_LENGTH]
        forms = {form for secret in self._secrets
                 for form in (secret, json.dumps(secret, ensure_ascii=False)[1:-1])}
        self._forms = tuple(sorted(forms, key=lambda form: (-len(form), form)))

    @property
    def secrets(self) -> list[str]:
        """The secrets this scrubber masks, longest first (as given)."""
        return list(self._secrets)

    def scrub(self, data: Any) -> tuple[str, Any]:
        """The record's JSON text with its secrets masked, and the record as masked (`data`
        itself when nothing was)."""
        text = self._dumps(data)
        if not _maybe_secret_field(text) and not any(form in text for form in self._forms):
            return text, data
        masked = redact(data, self._secrets)
        return self._dumps(masked), masked


def mask_secrets(value: Any) -> Any:
    """A copy of settings `value` with the values of secret-looking keys replaced by `***`,
    and the password of every URL in it (`http://user:***@host`) and the values of its
    secret-named query parameters (`?key=***`)."""
    return _masked(value, [], is_secret_key, urls=True)


def url_passwords(text: str) -> set[str]:
    """The passwords written in URLs in `text` (`http://user:PASS@host` gives `PASS`) and
    the values of their secret-named query parameters (`?api_key=KEY` gives `KEY`)."""
    return ({match.group(2) for match in _URL_CREDENTIALS.finditer(text)}
            | {match.group(2) for match in _URL_QUERY_SECRET.finditer(text)})


def _masked_url(text: str) -> str:
    """`text` with the password and the secret-named query values of its URLs masked."""
    if "@" in text:
        text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + MASK + "@", text)
    if "=" in text:
        text = _URL_QUERY_SECRET.sub(lambda m: m.group(1) + MASK, text)
    return text


def _masked(value: Any, secrets: list[str], secret_field: Callable[[str], Any],
            urls: bool = False) -> Any:
    if isinstance(value, bytes):  # written as its text (`prose.runtime.trace.json_default`)
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return _masked_url(value) if urls else value
    if isinstance(value, Mapping):
        return {
            _masked(key, secrets, secret_field, urls): MASK
            if isinstance(key, str) and secret_field(key) and item
            else _masked(item, secrets, secret_field, urls)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [_masked(item, secrets, secret_field, urls) for item in value]
    return value


def secrets_in(settings: Any) -> set[str]:
    """The secret strings in nested settings: the values of secret-named keys (header names
    included: `x-api-key`, `api-key`, `authorization`), with `os.environ/NAME` references
    resolved, and the passwords written in URLs (`api_base: http://user:PASS@host/v1`) and
    their secret-named query values (`api_base: http://host/v1?key=KEY`)."""
    found: set[str] = set()
    if isinstance(settings, str):
        if "@" in settings or "=" in settings:
            found |= url_passwords(settings)
    elif isinstance(settings, Mapping):
        for key, item in settings.items():
            if isinstance(key, str) and is_secret_key(key) and isinstance(item, str):
                found.add(item)
                if item.startswith(_ENV_REFERENCE):
                    found.add(os.environ.get(item[len(_ENV_REFERENCE) :], ""))
                # `Bearer KEY` as a header's value: the key alone is a secret too
                found.update(part for part in item.split()[1:2])
            else:
                found |= secrets_in(item)
    elif isinstance(settings, list | tuple):
        for item in settings:
            found |= secrets_in(item)
    return {secret for secret in found if len(secret) >= MIN_SECRET_LENGTH}


def secrets_in_environment(environ: Mapping[str, str] | None = None) -> set[str]:
    """Values of environment variables named like secrets (`OPENAI_API_KEY`, `HF_TOKEN`,
    `AWS_SECRET_ACCESS_KEY`, anything ending in `_KEY`), 8 characters or more."""
    env = os.environ if environ is None else environ
    return {
        value
        for name, value in env.items()
        if len(value) >= MIN_SECRET_LENGTH and _secret_variable(name)
    }


@functools.lru_cache(maxsize=4096)
def _secret_variable(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (asked on every run)."""
    return bool(SECRET_FIELD.search(name)) or name.endswith("_KEY")


def run_secrets(
    extra: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> list[str]:
    """The secrets a run's outputs are masked for: the environment's and `extra` (say, an
    LLM config's `secrets()`), longest first."""
    found = secrets_in_environment(environ) | {s for s in extra if len(s) >= MIN_SECRET_LENGTH}
    return sorted(found, key=lambda secret: (-len(secret), secret))


class Redactor:
    """Replaces known secrets, and strings shaped like keys, with `***` (error texts)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = run_secrets(secrets, environ={})

    def __call__(self, text: str) -> str:
        text = redact(text, self._secrets)
        for shape in _SECRET_SHAPES:
            text = shape.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, text)
        return text

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"
