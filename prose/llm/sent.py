"""Counting the requests one call actually sends to providers.

A call of `RouterClient.complete` can send more requests than prose makes
attempts: the router's fallback to another model group happens inside one
attempt, and a schema re-ask is a request of its own. LiteLLM's and the
openai SDK's retries are off (`retry.py`), so every other request is one of
these; counting them where they leave makes them visible (`requests` on
`ChatResponse` and `LLMError`) instead of inferring them.

LiteLLM calls `log_pre_api_call` on its input callbacks just before it sends
each provider request; `RequestCounter` is registered there once
(`loader.load_litellm`) and adds one to the tally of the call in progress,
found through a context variable (a router's fallback runs in the caller's
task, or a task copied from its context). LiteLLM does not call input
callbacks for custom providers, so the scripted and local providers call
`count_request` themselves.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass
class RequestTally:
    """The requests sent so far for one call."""

    sent: int = 0


_current: ContextVar[RequestTally | None] = ContextVar("prose_llm_requests", default=None)
_counter: Any = None


@contextmanager
def counting_requests() -> Iterator[RequestTally]:
    """Count the requests sent while the block runs (in this context and tasks made from it)."""
    tally = RequestTally()
    token = _current.set(tally)
    try:
        yield tally
    finally:
        _current.reset(token)


def count_request() -> None:
    """One request is about to leave for a provider (no-op outside `counting_requests`)."""
    tally = _current.get()
    if tally is not None:
        tally.sent += 1


def register_request_counter(litellm: ModuleType) -> None:
    """Put the counter among LiteLLM's input callbacks (once)."""
    global _counter
    if _counter is None:
        _counter = _counter_class()()
    callbacks: list[Any] = litellm.input_callback
    if _counter not in callbacks:
        callbacks.append(_counter)


def _counter_class() -> type:
    # CustomLogger exists only once LiteLLM is imported, so the class is made here.
    custom_logger: Any = importlib.import_module("litellm.integrations.custom_logger").CustomLogger

    class RequestCounter(custom_logger):  # type: ignore[misc]
        """Counts each provider request LiteLLM sends."""

        def log_pre_api_call(self, model: Any, messages: Any, kwargs: Any) -> None:
            del model, messages, kwargs
            count_request()

    return RequestCounter
