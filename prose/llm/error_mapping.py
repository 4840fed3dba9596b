"""LiteLLM's exceptions, converted into prose's at the border.

Nothing above `prose.llm` sees a LiteLLM or openai SDK exception: every one
that leaves a router call becomes an `LLMError` subclass with a clean,
redacted message (LiteLLM's class prefixes, tracebacks and routing advice
removed; API keys masked).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any

from prose.llm.errors import (
    AuthError,
    BadRequestError,
    ContextWindowError,
    LLMError,
    ModelTimeoutError,
    ProviderError,
    RateLimitError,
)
from prose.llm.retry import parse_retry_after

Redact = Callable[[str], str]

# Where LiteLLM starts appending tracebacks, routing advice or debug dumps.
_TAIL_MARKERS = (
    "\nTraceback (most recent call last)",
    "\n\nLiteLLM:",
    "\nLiteLLM:",
    "\nDebug Information",
    "\nDeployment Info:",
    "\nReceived Model Group=",
    "\nAvailable Model Group Fallbacks=",
    " LiteLLM Retried:",
)
_PREFIX = re.compile(
    r"^(?:litellm\.\w+:\s*|Timeout Error:\s*|\w*(?:Error|Exception|Timeout)(?::\s*|\s+-\s+))+"
)
# What LiteLLM says when the client gave up waiting (not a provider's own 408 or 504).
_CLIENT_TIMEOUT = re.compile(r"^Request timed out\b|\btimeout value=|\bError_str:", re.I)
_MAX_MESSAGE = 600

# LiteLLM exception class name -> our class, most specific first.
_BY_CLASS: tuple[tuple[str, type[LLMError]], ...] = (
    ("ContextWindowExceededError", ContextWindowError),
    ("ContentPolicyViolationError", BadRequestError),
    ("AuthenticationError", AuthError),
    ("PermissionDeniedError", AuthError),
    ("RateLimitError", RateLimitError),
    ("Timeout", ModelTimeoutError),
    ("UnsupportedParamsError", BadRequestError),
    ("BadRequestError", BadRequestError),
    ("NotFoundError", BadRequestError),
    ("UnprocessableEntityError", BadRequestError),
    ("InternalServerError", ProviderError),
    ("ServiceUnavailableError", ProviderError),
    ("BadGatewayError", ProviderError),
    ("APIResponseValidationError", ProviderError),
    ("APIConnectionError", ProviderError),
)


def to_llm_error(
    error: BaseException,
    *,
    model: str,
    litellm: ModuleType,
    redact: Redact,
    timeout_s: float | None = None,
) -> LLMError:
    """The `LLMError` for an exception raised by a router call (`timeout_s`: the call's timeout)."""
    for link in _chain(error):
        if isinstance(link, LLMError):  # raised by our own scripted provider
            if not link.model:
                link.model = model
            link.message = redact(link.message)
            return link
    message = redact(clean_message(_raw_message(error)))
    status = _status_code(error)
    target = _classify(error, litellm, status)
    if target is RateLimitError:
        return RateLimitError(
            message, model=model, status_code=status, retry_after=retry_after_of(error)
        )
    if target is ModelTimeoutError:
        return ModelTimeoutError(
            timeout_message(message, timeout_s), model=model, status_code=status
        )
    if target is None:
        # Not an error LiteLLM maps: keep the type name, do not retry blindly.
        return ProviderError(
            f"{type(error).__name__}: {message}", model=model, retryable=False, status_code=status
        )
    return target(message, model=model, status_code=status)


def _classify(error: BaseException, litellm: ModuleType, status: int | None) -> type[LLMError] | None:
    exceptions = litellm.exceptions
    for name, target in _BY_CLASS:
        cls = getattr(exceptions, name, None)
        if isinstance(cls, type) and isinstance(error, cls):
            return target
    if isinstance(error, TimeoutError):
        return ModelTimeoutError
    if status is not None or isinstance(error, getattr(exceptions, "APIError", ())):
        return by_status(status)
    return None


def by_status(status: int | None) -> type[LLMError]:
    """The error class for an HTTP status (None: a failure without one, a provider error)."""
    if status is None or status >= 500:
        return ProviderError
    if status in (401, 403):
        return AuthError
    if status == 408:
        return ModelTimeoutError
    if status == 429:
        return RateLimitError
    return BadRequestError


def clean_message(raw: str) -> str:
    """LiteLLM's message without class prefixes, tracebacks and routing advice."""
    text = raw
    for marker in _TAIL_MARKERS:
        cut = text.find(marker)
        if cut > 0:
            text = text[:cut]
    text = _PREFIX.sub("", text.strip()).strip()
    if len(text) > _MAX_MESSAGE:
        text = text[: _MAX_MESSAGE - 3] + "..."
    return text or "the model call failed"


def no_reply_within(timeout_s: float | None) -> str:
    """The message of a call the client stopped waiting for."""
    return f"no reply within {timeout_s:g}s" if timeout_s is not None else "no reply in time"


def timeout_message(cleaned: str, timeout_s: float | None) -> str:
    """One sentence for a timeout: ours when the client gave up, else the provider's words.

    LiteLLM words a client-side timeout as "Request timed out. Error_str:
    Request timed out. - timeout value=0.5, time taken=0.5 seconds"; the
    call's own timeout says the same in five words.
    """
    if _CLIENT_TIMEOUT.search(cleaned):
        return no_reply_within(timeout_s)
    return cleaned


def retry_after_of(error: BaseException) -> float | None:
    """Seconds the provider asked us to wait (Retry-After-Ms or Retry-After), if any."""
    for headers in (_headers(getattr(error, "response", None)), getattr(error, "headers", None)):
        if not isinstance(headers, Mapping):
            continue
        lowered = {str(k).lower(): str(v) for k, v in headers.items()}
        if "retry-after-ms" in lowered:
            milliseconds = parse_retry_after(lowered["retry-after-ms"])
            if milliseconds is not None:
                return milliseconds / 1000
        seconds = parse_retry_after(lowered.get("retry-after"))
        if seconds is not None:
            return seconds
    return None


def _headers(response: Any) -> Any:
    try:
        return getattr(response, "headers", None)
    except Exception:  # an httpx.Response without a request raises on some attributes
        return None


def _raw_message(error: BaseException) -> str:
    message = getattr(error, "message", None)
    return message if isinstance(message, str) and message else str(error)


def _status_code(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__
