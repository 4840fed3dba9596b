"""LLMConfig (LiteLLM's config format plus ours), redaction and error conversion."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from prose.llm import LLMConfig, LLMConfigError
from prose.llm.error_mapping import clean_message, retry_after_of, to_llm_error
from prose.llm.errors import (
    AuthError,
    BadRequestError,
    ContextWindowError,
    ModelTimeoutError,
    ProviderError,
    RateLimitError,
)
from prose.llm.loader import load_litellm
from prose.llm.redact import Redactor, mask_secrets

# LiteLLM's own types make pydantic warn when LiteLLM first uses them.
pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

PROXY_CONFIG = """
model_list:
  - model_name: fast
    litellm_params:
      model: openai/gpt-4o-mini
      api_key: os.environ/PROSE_TEST_KEY
  - model_name: local
    litellm_params:
      model: ollama/llama3
      api_base: http://localhost:11434
  - model_name: "anthropic/*"
    litellm_params:
      model: "anthropic/*"
      api_key: sk-ant-literal-key-000000
router_settings:
  routing_strategy: simple-shuffle
  num_retries: 5
  fallbacks: [{fast: [local]}]
litellm_settings:
  drop_params: true
general_settings:
  master_key: sk-1234-master-key
default_model: fast
judge_model: local
timeout_s: 30
retries: 1
fallbacks: {local: [fast]}
concurrency: 4
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "llm.yaml"
    path.write_text(PROXY_CONFIG, encoding="utf-8")
    return path


def test_litellm_proxy_config_is_accepted(config_file: Path) -> None:
    config = LLMConfig.from_yaml(config_file)
    assert (config.default_model, config.judge_model) == ("fast", "local")
    assert (config.timeout_s, config.retries, config.concurrency) == (30, 1, 4)
    assert config.model_names() == ["fast", "local", "anthropic/*"]
    assert config.defines("anthropic/claude-3-5-haiku")
    assert not config.defines("openai/gpt-4o")


def test_router_arguments_switch_off_litellm_retries(config_file: Path) -> None:
    config = LLMConfig.from_yaml(config_file)
    arguments = config.router_kwargs()
    assert arguments["num_retries"] == 0
    assert arguments["timeout"] == 30
    assert arguments["routing_strategy"] == "simple-shuffle"
    assert arguments["disable_cooldowns"] is True
    assert arguments["fallbacks"] == [{"fast": ["local"]}, {"local": ["fast"]}]
    for entry in config.deployments():
        assert entry["litellm_params"]["max_retries"] == 0
        assert entry["litellm_params"]["num_retries"] == 0
    assert "max_retries" not in config.model_list[0]["litellm_params"]  # not mutated


def test_router_builds_from_the_proxy_config(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROSE_TEST_KEY", "sk-from-the-environment-01")
    litellm = load_litellm()
    config = LLMConfig.from_yaml(config_file)
    router = litellm.Router(model_list=config.deployments(), **config.router_kwargs())
    assert sorted(router.registry().names()) == ["anthropic/*", "fast", "local"]


def test_secrets_are_masked_in_repr(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROSE_TEST_KEY", "sk-from-the-environment-01")
    config = LLMConfig.from_yaml(config_file)
    text = repr(config) + str(config)
    for secret in ("sk-ant-literal-key-000000", "sk-1234-master-key"):
        assert secret not in text
    assert config.secrets() >= {
        "sk-ant-literal-key-000000",
        "sk-1234-master-key",
        "sk-from-the-environment-01",
    }


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("model_list: [{model_name: x}]", "1", "model_list: Value error, entry 0 needs `litellm_params`"),
        ("timeout_s: 5\nretries: -1", "2", "retries: Input should be greater than or equal to 0"),
        ("defualt_model: x", "1", "defualt_model: Extra inputs are not permitted"),
        ("- a", "1", "expected a mapping at the top level"),
        ("a: [", "2:1", "not valid YAML"),
        ("router_settings: {model_group_alias: 5}", "1", "`model_group_alias` must map"),
        ("router_settings:\n  fallbacks: [x]", "1", "`fallbacks` must be a list of"),
    ],
)
def test_config_errors_name_the_file_and_line(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LLMConfigError) as caught:
        LLMConfig.from_yaml(path)
    assert str(caught.value).startswith(f"{path}:{where}: ")
    assert message in str(caught.value)


def test_missing_config_file(tmp_path: Path) -> None:
    from prose.errors import InputReadError

    with pytest.raises(LLMConfigError, match="no such file") as caught:
        LLMConfig.from_yaml(tmp_path / "absent.yaml")
    assert isinstance(caught.value, InputReadError)  # exit 2, like any unreadable path


def test_mask_and_redact() -> None:
    assert mask_secrets({"api_key": "abc", "nested": [{"aws_secret_access_key": "x"}], "n": 1}) == {
        "api_key": "***",
        "nested": [{"aws_secret_access_key": "***"}],
        "n": 1,
    }
    redact = Redactor({"my-very-secret-value"})
    assert redact("key my-very-secret-value leaked") == "key *** leaked"
    assert redact("Incorrect API key provided: sk-abc12***********xyz9") == (
        "Incorrect API key provided: ***"
    )
    assert redact('{"api_key": "abcdef"} Bearer tok.en') == '{"api_key": "***"} ***'


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("litellm.RateLimitError: RateLimitError: OpenAIException - slow down", "slow down"),
        (
            "litellm.BadRequestError: OpenAIException - bad req\n\nLiteLLM: model group 'm' failed",
            "bad req",
        ),
        (
            "litellm.APIConnectionError: scripted boom\nTraceback (most recent call last):\n  x",
            "scripted boom",
        ),
        ("litellm.Timeout: APITimeoutError - Request timed out.", "Request timed out."),
        ("", "the model call failed"),
    ],
)
def test_clean_message(raw: str, clean: str) -> None:
    assert clean_message(raw) == clean


def _litellm_error(name: str, **arguments: object) -> Exception:
    cls = getattr(importlib.import_module("litellm.exceptions"), name)
    error: Exception = cls(**arguments)
    return error


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("AuthenticationError", {}, AuthError),
        (
            "PermissionDeniedError",
            {"response": httpx.Response(403, request=httpx.Request("POST", "http://x"))},
            AuthError,
        ),
        ("RateLimitError", {}, RateLimitError),
        ("Timeout", {}, ModelTimeoutError),
        ("ContextWindowExceededError", {}, ContextWindowError),
        ("BadRequestError", {}, BadRequestError),
        ("NotFoundError", {}, BadRequestError),
        ("InternalServerError", {}, ProviderError),
        ("ServiceUnavailableError", {}, ProviderError),
        ("APIConnectionError", {}, ProviderError),
    ],
)
def test_litellm_exceptions_are_converted(
    name: str, arguments: dict[str, object], expected: type
) -> None:
    litellm = load_litellm()
    error = _litellm_error(
        name, message="went wrong", model="m", llm_provider="openai", **arguments
    )
    converted = to_llm_error(error, model="group", litellm=litellm, redact=Redactor())
    assert type(converted) is expected
    assert converted.model == "group"
    assert converted.message.endswith("went wrong")


def test_api_error_by_status() -> None:
    litellm = load_litellm()
    for status, expected in ((500, ProviderError), (404, BadRequestError), (429, RateLimitError)):
        error = _litellm_error(
            "APIError", status_code=status, message="x", llm_provider="openai", model="m"
        )
        assert type(to_llm_error(error, model="m", litellm=litellm, redact=Redactor())) is expected


def test_unknown_exceptions_are_not_retried() -> None:
    converted = to_llm_error(
        ValueError("odd"), model="m", litellm=load_litellm(), redact=Redactor()
    )
    assert type(converted) is ProviderError
    assert converted.message == "ValueError: odd"
    assert not converted.retryable


def test_retry_after_headers() -> None:
    response = SimpleNamespace(headers=httpx.Headers({"Retry-After": "4"}))
    assert retry_after_of(SimpleNamespace(response=response)) == 4.0  # type: ignore[arg-type]
    in_ms = SimpleNamespace(headers=httpx.Headers({"retry-after-ms": "1500", "retry-after": "9"}))
    assert retry_after_of(SimpleNamespace(response=in_ms)) == 1.5  # type: ignore[arg-type]
    assert retry_after_of(SimpleNamespace(headers={"Retry-After": "2"})) == 2.0  # type: ignore[arg-type]
    assert retry_after_of(ValueError()) is None
