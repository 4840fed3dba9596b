"""The errors a model call can end with.

LiteLLM's and the openai SDK's exceptions are converted into these at the
border (`prose.llm.error_mapping`); nothing above this package sees theirs.
Every class has a stable `kind` (what `catch as err` exposes as `err.kind`)
and says whether retrying can help (`retryable`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from prose.errors import ProseError
from prose.lang import error_kinds as kinds

if TYPE_CHECKING:
    from prose.llm.types import Usage


def _rebuild(cls: type[LLMError], message: str, state: dict[str, Any]) -> LLMError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class LLMError(ProseError):
    """A model call failed. `message` never contains a secret.

    `attempts` counts prose's attempts; `requests` the requests providers were
    actually sent for the call (fallbacks and a schema re-ask included; 0 when
    none was counted, e.g. a request refused before it was sent).
    """

    kind: ClassVar[str] = kinds.LLM
    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        model: str = "",
        retryable: bool | None = None,
        status_code: int | None = None,
        attempts: int = 1,
        requests: int = 0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.model = model
        self.retryable = self.default_retryable if retryable is None else retryable
        self.status_code = status_code
        self.attempts = attempts
        self.requests = requests
        # What the failed call's replies cost (a schema failure's replies were billed).
        self.usage: Usage | None = None
        self.cost_usd = 0.0

    def __str__(self) -> str:
        return f"{self.model}: {self.message}" if self.model else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, dict(self.__dict__)))


class AuthError(LLMError):
    """The provider refused the credentials (401/403). Never retried."""

    kind = kinds.AUTH


class RateLimitError(LLMError):
    """The provider asked us to slow down (429); `retry_after` in seconds if it said."""

    kind = kinds.RATE_LIMIT
    default_retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ModelTimeoutError(LLMError):
    """No reply within the call's timeout. Retryable."""

    kind = kinds.TIMEOUT
    default_retryable = True


class ContextWindowError(LLMError):
    """The messages do not fit the model's context window. Never retried."""

    kind = kinds.CONTEXT_WINDOW


class BadRequestError(LLMError):
    """The provider rejected the request as malformed or unsupported (4xx). Never retried."""

    kind = kinds.BAD_REQUEST


class ProviderError(LLMError):
    """The provider failed (5xx, connection error, unreadable reply). Retryable."""

    kind = kinds.PROVIDER
    default_retryable = True


class EmptyReplyError(LLMError):
    """The provider answered with no text: no choices, null content, or only whitespace.

    A reply with nothing in it is not an answer (a reducer would merge it as
    an empty result), so it fails the attempt; another attempt may answer, so
    it is retryable (a call's `retry:`). A request whose schema accepts the
    empty string (`{"type": "string"}` without `minLength`) takes an empty
    reply as that value instead (`prose.llm.schema.accepts_empty`).
    """

    kind = kinds.EMPTY_REPLY
    default_retryable = True


class SchemaError(LLMError):
    """The reply did not match the requested schema, even after one re-ask.

    `reply` is the last reply's text; `problems` the validation messages.
    """

    kind = kinds.SCHEMA

    def __init__(
        self, message: str, *, reply: str = "", problems: tuple[str, ...] = (), **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        self.reply = reply
        self.problems = problems


class ScriptExhaustedError(LLMError):
    """A scripted model has no response left for `key`."""

    kind = kinds.SCRIPT_EXHAUSTED

    def __init__(self, key: str, **kwargs: Any) -> None:
        super().__init__(f"the script has no response left for `{key}`", **kwargs)
        self.key = key


class ScriptedReplyError(ScriptExhaustedError):
    """A scripted reply failed its call's schema without being marked `$invalid`: the
    script is wrong (the re-ask would take the response meant for the next call).
    Handled as running out is (exit 1, the message says which entry); `entry` names it
    (`slots.critic[0]`)."""

    entry = ""


class LLMConfigError(ProseError):
    """The LLM configuration (YAML file, router settings) is invalid."""


class ScriptFormatError(ProseError):
    """A script (scripted model responses) is not in the expected format."""


class SchemaDefinitionError(ProseError):
    """A field-to-type mapping cannot be turned into a JSON schema."""
