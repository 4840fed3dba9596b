"""LLM settings: LiteLLM's own config format plus prose's settings.

A LiteLLM proxy config file works unchanged: `model_list` is given to the
router as written (with LiteLLM's retries switched off, see `retry.py`),
`router_settings` are passed to `litellm.Router` (except the retry settings,
which prose owns), and `litellm_settings`, `general_settings` and
`environment_variables` are accepted but not applied. prose's own settings
sit beside them at the top level:

    model_list:
      - model_name: fast
        litellm_params: {model: openai/gpt-4o-mini, api_key: os.environ/OPENAI_API_KEY}
    default_model: fast
    judge_model: fast
    timeout_s: 60
    retries: 2          # extra attempts for rate limits, timeouts, 5xx
    fallbacks: {fast: [ollama/llama3]}
    concurrency: 8      # model calls in flight at once
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from prose.bounded import key_lines, read_yaml
from prose.errors import InputReadError, ProseSyntaxError
from prose.llm.errors import LLMConfigError
from prose.llm.redact import mask_secrets, redact, secrets_in

# Router settings that would retry behind our back: prose's RetryPolicy owns retries.
_ROUTER_RETRY_SETTINGS = ("num_retries", "retry_policy", "model_group_retry_policy", "retry_after")
# Router settings in LiteLLM's fallback form, a list of {model: [fallback, ...]}.
_ROUTER_FALLBACK_SETTINGS = ("fallbacks", "context_window_fallbacks", "content_policy_fallbacks")


class LLMConfigReadError(LLMConfigError, InputReadError):
    """The config file cannot be read (exit 2, like any path that cannot be read)."""


class LLMConfig(BaseModel):
    """Everything the router client needs. Build with `from_yaml` or directly."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_list: list[dict[str, Any]] = Field(default_factory=list)
    router_settings: dict[str, Any] = Field(default_factory=dict)
    litellm_settings: dict[str, Any] = Field(default_factory=dict)
    general_settings: dict[str, Any] = Field(default_factory=dict)
    environment_variables: dict[str, Any] = Field(default_factory=dict)

    default_model: str | None = None
    judge_model: str | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    retries: int = Field(default=2, ge=0)
    fallbacks: dict[str, list[str]] = Field(default_factory=dict)
    concurrency: int = Field(default=8, ge=1)

    # Where the settings were read from, for errors found after loading (`check_router`).
    _source: str = PrivateAttr(default="LLM config")
    _lines: dict[str, int] = PrivateAttr(default_factory=dict)

    @classmethod
    def from_yaml(cls, path: str | Path) -> LLMConfig:
        """Read a YAML config file.

        Raises `LLMConfigReadError` (an `InputReadError` too) when the file cannot
        be read, and `LLMConfigError` naming the file and line of a problem in it:
        invalid YAML, a bound of `prose.bounded` passed, a setting of the wrong shape.
        """
        source = str(path)
        try:
            document = read_yaml(path)
        except InputReadError as error:
            raise LLMConfigReadError(str(error)) from None
        except ProseSyntaxError as error:
            raise LLMConfigError(str(error)) from None
        lines = key_lines(document.node)
        data = document.value if document.value is not None else {}
        return cls.from_mapping(data, source=source, lines=lines)

    @classmethod
    def from_mapping(
        cls, data: Any, *, source: str = "LLM config", lines: Mapping[str, int] | None = None
    ) -> LLMConfig:
        """Validate already-loaded settings; `lines` gives the line of each top-level key."""
        lines = lines or {}
        if not isinstance(data, dict):
            raise LLMConfigError(f"{source}:1: expected a mapping at the top level")
        try:
            config = cls.model_validate(data)
        except ValidationError as error:
            errors = error.errors(include_input=False, include_url=False)
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in errors
            )
            first = lines.get(str(errors[0]["loc"][0])) if errors and errors[0]["loc"] else None
            where = f"{source}:{first}" if first else source
            raise LLMConfigError(f"{where}: {problems}") from None
        config._source, config._lines = source, dict(lines)
        return config

    def check_router(self) -> None:
        """Build a LiteLLM router from `router_settings` once, with no deployments, so a
        setting LiteLLM refuses (an unknown key, a bad `routing_strategy`) is an
        `LLMConfigError` naming the file and line before anything runs. Imports LiteLLM.
        """
        if not self.router_settings:
            return
        from prose.llm.loader import load_litellm

        litellm = load_litellm()
        try:
            litellm.Router(model_list=[], **self.router_kwargs())
        except Exception as error:  # LiteLLM raises ValueError, TypeError, its own errors
            line = self._lines.get("router_settings")
            where = f"{self._source}:{line}" if line else self._source
            problem = redact(str(error).strip().splitlines()[0], sorted(self.secrets()))
            raise LLMConfigError(f"{where}: `router_settings` refused by LiteLLM: {problem}") from None

    @field_validator("model_list")
    @classmethod
    def _check_model_list(cls, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for index, entry in enumerate(entries):
            params = entry.get("litellm_params")
            if not isinstance(entry.get("model_name"), str) or not entry["model_name"]:
                raise ValueError(f"entry {index} needs a `model_name`")
            if not isinstance(params, dict) or not isinstance(params.get("model"), str):
                raise ValueError(f"entry {index} needs `litellm_params` with a `model`")
        return entries

    @field_validator("router_settings")
    @classmethod
    def _check_router_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        """The router settings prose reads itself must have the shape it reads."""
        alias = settings.get("model_group_alias")
        if alias is not None and not isinstance(alias, dict):
            raise ValueError("`model_group_alias` must map alias names to model groups")
        for key in _ROUTER_FALLBACK_SETTINGS:
            value = settings.get(key)
            if value is None:
                continue
            if not isinstance(value, list) or not all(
                isinstance(item, dict)
                and all(isinstance(targets, list) for targets in item.values())
                for item in value
            ):
                raise ValueError(f"`{key}` must be a list of {{model: [fallback, ...]}} mappings")
        return settings

    @field_validator("fallbacks", mode="before")
    @classmethod
    def _accept_litellm_fallbacks(cls, value: Any) -> Any:
        """Also accept LiteLLM's form, a list of one-key mappings."""
        if isinstance(value, list):
            merged: dict[str, list[str]] = {}
            for item in value:
                if not isinstance(item, dict):
                    raise ValueError("expected {model: [fallback, ...]} mappings")
                for name, targets in item.items():
                    merged.setdefault(name, []).extend(targets)
            return merged
        return value

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, mask_secrets(value)

    # What the router is built from -------------------------------------------------

    def model_names(self) -> list[str]:
        """The model group names the config defines (wildcards included), and aliases."""
        names = [entry["model_name"] for entry in self.model_list]
        names += list(self.router_settings.get("model_group_alias") or {})
        return names

    def defines(self, model: str) -> bool:
        """Whether `model` is served by a configured group (exactly or by a wildcard)."""
        for name in self.model_names():
            if name == model or ("*" in name and fnmatch.fnmatchcase(model, name)):
                return True
        return False

    def deployments(self) -> list[dict[str, Any]]:
        """`model_list` as the router gets it: copies, with LiteLLM's retries off."""
        return [no_sdk_retries(copy.deepcopy(entry)) for entry in self.model_list]

    def router_fallbacks(self) -> list[dict[str, list[str]]]:
        """`router_settings.fallbacks` and ours, in LiteLLM's form."""
        merged: dict[str, list[str]] = {}
        for item in self.router_settings.get("fallbacks") or []:
            for name, targets in dict(item).items():
                merged.setdefault(name, []).extend(targets)
        for name, targets in self.fallbacks.items():
            existing = merged.setdefault(name, [])
            for target in targets:
                if target not in existing:
                    existing.append(target)
        return [{name: targets} for name, targets in merged.items()]

    def router_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `litellm.Router` (deployments added by the caller)."""
        settings = {
            key: value
            for key, value in self.router_settings.items()
            if key not in (*_ROUTER_RETRY_SETTINGS, "fallbacks", "model_list")
        }
        # Cooldowns would make a retried group look empty ("no healthy deployments").
        settings.setdefault("disable_cooldowns", True)
        settings.update(num_retries=0, timeout=self.timeout_s, fallbacks=self.router_fallbacks())
        return settings

    def fallback_targets(self) -> list[str]:
        return [target for item in self.router_fallbacks() for ts in item.values() for target in ts]

    def secrets(self) -> set[str]:
        """Every secret value in the config (for redaction)."""
        return secrets_in(
            [self.model_list, self.router_settings, self.litellm_settings, self.general_settings]
        )


def bare_deployment(model: str) -> dict[str, Any]:
    """A deployment for a model name not in the model list (`openai/gpt-4o-mini`)."""
    return no_sdk_retries({"model_name": model, "litellm_params": {"model": model}})


def no_sdk_retries(entry: dict[str, Any]) -> dict[str, Any]:
    """Switch off LiteLLM's and the openai SDK's retries for one deployment."""
    params = entry.setdefault("litellm_params", {})
    params["max_retries"] = 0
    params["num_retries"] = 0
    return entry
