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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from prose.llm.errors import LLMConfigError
from prose.llm.redact import mask_secrets, secrets_in

# Router settings that would retry behind our back: prose's RetryPolicy owns retries.
_ROUTER_RETRY_SETTINGS = ("num_retries", "retry_policy", "model_group_retry_policy", "retry_after")


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

    @classmethod
    def from_yaml(cls, path: str | Path) -> LLMConfig:
        """Read a YAML config file; `LLMConfigError` names the file and the problem."""
        source = Path(path)
        try:
            data = yaml.safe_load(source.read_text(encoding="utf-8"))
        except OSError as error:
            raise LLMConfigError(f"{source}: cannot read: {error.strerror}") from None
        except yaml.YAMLError as error:
            raise LLMConfigError(f"{source}: not valid YAML: {error}") from None
        return cls.from_mapping(data if data is not None else {}, source=str(source))

    @classmethod
    def from_mapping(cls, data: Any, *, source: str = "LLM config") -> LLMConfig:
        """Validate already-loaded settings."""
        if not isinstance(data, dict):
            raise LLMConfigError(f"{source}: expected a mapping at the top level")
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}"
                for e in error.errors(include_input=False, include_url=False)
            )
            raise LLMConfigError(f"{source}: {problems}") from None

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
