"""`JsonScrubber` writes exactly what the one masking rule (`redact`) would, walk or no walk."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from prose.llm.redact import MASK, JsonScrubber, redact

SECRETS = ["sk-live-0123456789", 'pa"ss\\word-with-quote', "ключ-секрет-42", "short"]
KEYS = st.sampled_from([
    "text", "output", "prompt_tokens", "token", "x_token", "my-token", "tokens", "api_key",
    "API-KEY", "apikey", "Authorization", "aws_secret_access_key", "passwd", "credentials",
    "note", "mytoken", ":token",
    # Letters IGNORECASE folds to ASCII ones: the long s, the Kelvin sign, the dotted capital I.
    "\u017fecret", "api_\u212aey", "AUTHOR\u0130ZATION",
])
WORDS = st.sampled_from([
    "", "plain words", *SECRETS, 'a "quoted": value', "token", 'x token": y', "the api key",
    "secret plans", "line\nbreak", "tab\tand \\ backslash",
])
TEXT = st.one_of(WORDS, st.builds(lambda a, b: a + b, WORDS, WORDS), st.text(max_size=20))
LEAVES = st.one_of(TEXT, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
DATA = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(KEYS, TEXT), inner, max_size=4),
    ),
    max_leaves=20,
)


def expected(data: Any, secrets: list[str]) -> str:
    return json.dumps(redact(data, secrets), ensure_ascii=False, default=str)


@settings(max_examples=300, deadline=None)
@given(DATA)
def test_scrub_is_redact_then_dumps(data: Any) -> None:
    text, masked = JsonScrubber(SECRETS).scrub(data)
    assert text == expected(data, SECRETS)
    assert json.loads(text) == json.loads(json.dumps(masked, ensure_ascii=False, default=str))


def test_keys_with_letters_that_fold_to_ascii_are_masked() -> None:
    data = {"\u017fecret": "value-1", "api_\u212aey": "value-2", "note": "caf\u00e9"}
    text, masked = JsonScrubber(SECRETS).scrub(data)
    assert masked["\u017fecret"] == MASK and masked["api_\u212aey"] == MASK
    assert text == expected(data, SECRETS)


def test_a_record_with_nothing_to_mask_is_not_walked() -> None:
    data = {"type": "call", "usage": {"prompt_tokens": 3}, "output": "fine"}
    text, masked = JsonScrubber(SECRETS).scrub(data)
    assert masked is data
    assert text == json.dumps(data, ensure_ascii=False)


def test_secrets_in_every_form_are_masked() -> None:
    data = {
        "token": "tok-value-1234",
        "output": f"echo {SECRETS[1]} and {SECRETS[2]}",
        "nested": [{"Authorization": "Bearer abc"}, {SECRETS[0]: 1}],
    }
    text, masked = JsonScrubber(SECRETS).scrub(data)
    for secret in SECRETS[:3]:
        assert secret not in text and json.dumps(secret)[1:-1] not in text
    assert masked["token"] == MASK and masked["nested"][0]["Authorization"] == MASK
    assert text == expected(data, SECRETS)
