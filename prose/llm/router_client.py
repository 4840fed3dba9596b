"""`RouterClient`: every model call goes through one `litellm.Router`, or, when it has
nothing to route, straight to `litellm.acompletion` with its deployment's parameters
(`direct.py`).

Real models and the scripted model (`prose-script/<key>`) take the same paths,
so fallbacks, exception conversion, retries, structured output, usage and cost
work the same way for both.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import time
import weakref
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from prose.llm.config import LLMConfig, bare_deployment
from prose.llm.direct import direct_params
from prose.llm.error_mapping import clean_message, no_reply_within, to_llm_error
from prose.llm.errors import (
    BadRequestError,
    EmptyReplyError,
    LLMConfigError,
    LLMError,
    ModelTimeoutError,
    SchemaError,
)
from prose.llm.loader import load_litellm
from prose.llm.pricing import with_zero_prices
from prose.llm.redact import Redactor, secrets_in_environment
from prose.llm.reply import Reply, read_reply
from prose.llm.retry import RetryPolicy
from prose.llm.schema import (
    accepts_empty,
    check_reply,
    parse_json_reply,
    reask_prompt,
    response_format,
)
from prose.llm.sent import counting_requests
from prose.llm.types import ChatRequest, ChatResponse, Usage, message_dict

# asyncio's own deadline, past LiteLLM's, for a provider that ignores `timeout`.
_GRACE_FACTOR = 0.5
_GRACE_MIN_S = 1.0


@dataclass
class _Tally:
    """What every attempt of one call added up to."""

    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0

    def add(self, reply: Reply) -> None:
        self.usage = self.usage + reply.usage
        self.cost_usd += reply.cost_usd


class RouterClient:
    """An `LLMClient` backed by a `litellm.Router` built from an `LLMConfig`.

    The router is built on the first call (that is when LiteLLM is imported).
    A model name the config does not define (`openai/gpt-4o-mini`,
    `ollama/llama3`) gets a deployment of its own on first use. An empty
    `request.model` means the config's `default_model`. Retries follow
    `retry_policy`, with `max(request.retries, config.retries)` retries;
    `config.concurrency` bounds the calls in flight per event loop.
    """

    def __init__(
        self,
        config: LLMConfig | None = None,
        *,
        retry_policy: RetryPolicy | None = None,
        debug: bool = False,
    ) -> None:
        self._config = config if config is not None else LLMConfig()
        self._policy = retry_policy if retry_policy is not None else RetryPolicy()
        self._debug = debug
        self._redact = Redactor(self._config.secrets() | secrets_in_environment())
        self._litellm: ModuleType | None = None
        self._router: Any = None
        self._routed: set[str] = set()
        # The router's deployments, and per model the direct call's parameters (or None).
        self._deployments: list[dict[str, Any]] = []
        self._direct: dict[str, dict[str, Any] | None] = {}
        self.router_build_seconds: float | None = None
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._limits = weakref.WeakKeyDictionary()

    @property
    def config(self) -> LLMConfig:
        return self._config

    @property
    def retry_policy(self) -> RetryPolicy:
        return self._policy

    def __repr__(self) -> str:
        names = self._config.model_names()
        return (
            f"{type(self).__name__}(models={names!r}, default_model={self._config.default_model!r},"
            f" retries={self._config.retries}, timeout_s={self._config.timeout_s:g})"
        )

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one request; raise an `LLMError` subclass when it fails.

        The response's and the error's `requests` count what providers were
        actually sent for this call (`sent.py`).
        """
        started = self._policy.clock()
        model = request.model or self._config.default_model
        if not model:
            raise BadRequestError("no model given and no `default_model` configured")
        router = self._router_for(model)
        tally = _Tally()
        messages = [message_dict(m) for m in request.messages]
        with counting_requests() as sent:
            try:
                reply = await self._call(router, request, model, messages, tally)
                parsed: Any = None
                if reply.tool_calls:
                    pass  # an agent's turn: the final answer is validated, not this one
                elif request.schema is not None:
                    parsed, reply = await self._validated(
                        router, request, model, messages, reply, tally
                    )
                elif reply.structured:
                    parsed, _ = parse_json_reply(reply.text)
            except LLMError as error:
                error.requests = sent.sent
                if tally.usage.total_tokens or tally.cost_usd:
                    error.usage, error.cost_usd = tally.usage, tally.cost_usd
                raise
        return ChatResponse(
            text=reply.text,
            parsed=parsed,
            usage=tally.usage,
            cost_usd=tally.cost_usd,
            latency_ms=(self._policy.clock() - started) * 1000,
            model=reply.model_group,
            attempts=tally.attempts,
            provider_model=reply.provider_model,
            fallbacks_used=reply.fallbacks_used,
            requests=sent.sent,
            finish_reason=reply.finish_reason,
            tool_calls=reply.tool_calls,
        )

    # One attempt, retries, the schema re-ask -----------------------------------------

    async def _call(
        self,
        router: Any,
        request: ChatRequest,
        model: str,
        messages: list[dict[str, Any]],
        tally: _Tally,
    ) -> Reply:
        async def attempt(number: int) -> Reply:
            tally.attempts += 1
            async with self._limit():
                response = await self._send(router, request, model, messages)
            reply = read_reply(response, self._module(), requested=model)
            tally.add(reply)
            if reply.empty and not reply.tool_calls and not accepts_empty(request.schema):
                raise EmptyReplyError(f"no answer: {reply.empty}", model=model)
            return reply

        try:
            return await self._policy.run(attempt, retries=max(request.retries, self._config.retries))
        except LLMError as error:
            error.attempts = tally.attempts
            raise

    async def _send(
        self, router: Any, request: ChatRequest, model: str, messages: list[dict[str, Any]]
    ) -> Any:
        timeout = request.timeout_s if request.timeout_s is not None else self._config.timeout_s
        arguments: dict[str, Any] = {"model": model, "messages": messages, "timeout": timeout}
        if request.temperature is not None:
            arguments["temperature"] = request.temperature
        if request.max_tokens is not None:
            arguments["max_tokens"] = request.max_tokens
        if request.tools:
            arguments["tools"] = request.tools
        if request.schema is not None:
            arguments["response_format"] = response_format(
                request.schema, name=request.schema_name, strict=request.strict
            )
        direct = self._direct.get(model)
        try:
            async with asyncio.timeout(timeout + max(_GRACE_MIN_S, timeout * _GRACE_FACTOR)):
                if direct is not None:
                    return await self._module().acompletion(**{**direct, **arguments,
                                                               "model": direct["model"]})
                return await router.acompletion(**arguments)
        except TimeoutError:
            raise ModelTimeoutError(no_reply_within(timeout), model=model) from None
        except Exception as error:
            converted = to_llm_error(
                error, model=model, litellm=self._module(), redact=self._redact, timeout_s=timeout
            )
            raise converted from (error if self._debug else None)

    async def _validated(
        self,
        router: Any,
        request: ChatRequest,
        model: str,
        messages: list[dict[str, Any]],
        reply: Reply,
        tally: _Tally,
    ) -> tuple[Any, Reply]:
        """The reply's validated value; after a failure, re-ask once with the problems.

        An empty reply reaches here only when the schema accepts "" (`_call`).
        """
        schema = request.schema or {}
        value, problems = _checked(reply, schema)
        if not problems:
            return value, reply
        again = [
            *messages,
            {"role": "assistant", "content": reply.text},
            {"role": "user", "content": reask_prompt(problems, schema)},
        ]
        reply = await self._call(router, request, model, again, tally)
        value, problems = _checked(reply, schema)
        if problems:
            raise SchemaError(
                f"the reply did not match the schema after a re-ask: {'; '.join(problems[:3])}",
                model=model,
                reply=self._redact(reply.text),
                problems=tuple(problems),
                attempts=tally.attempts,
            )
        return value, reply

    # The router ------------------------------------------------------------------------

    def start(self) -> float | None:
        """Import LiteLLM and build the router now, before any call, so that no call's
        latency carries them: the seconds it took, or None when it was built already."""
        if self._router is not None:
            return None
        started = time.perf_counter()
        self._router = self._build_router()
        return time.perf_counter() - started

    def _module(self) -> ModuleType:
        if self._litellm is None:
            self._litellm = load_litellm(debug=self._debug)
        return self._litellm

    def _router_for(self, model: str) -> Any:
        """The router, built on first use, with a deployment for `model`."""
        if self._router is None:
            self._router = self._build_router()
        if model not in self._routed:
            if not self._config.defines(model):
                self._add_deployment(model)
            self._routed.add(model)
        if model not in self._direct:
            self._direct[model] = direct_params(self._config, model, self._deployments,
                                                self._module())
        return self._router

    def _build_router(self) -> Any:
        litellm = self._module()
        deployments = self._config.deployments()
        extra = [*self._config.fallback_targets(), self._config.default_model, self._config.judge_model]
        for name in dict.fromkeys(n for n in extra if n):
            if not self._config.defines(name):
                deployments.append(bare_deployment(name))
                self._routed.add(name)
        deployments = with_zero_prices(deployments, litellm)
        self._deployments = copy.deepcopy(deployments)  # the router may change its own
        started = time.perf_counter()
        try:
            router = litellm.Router(model_list=deployments, **self._config.router_kwargs())
        except Exception as error:
            message = self._redact(clean_message(str(error)))
            raise LLMConfigError(f"cannot build the LiteLLM router: {message}") from None
        self.router_build_seconds = time.perf_counter() - started
        return router

    def _add_deployment(self, model: str) -> None:
        deployment_class = importlib.import_module("litellm.types.router").Deployment
        try:
            [entry] = with_zero_prices([bare_deployment(model)], self._module())
            self._router.add_deployment(deployment_class(**entry))
            self._deployments.append(copy.deepcopy(entry))
        except Exception as error:
            message = self._redact(clean_message(str(error)))
            raise BadRequestError(f"cannot route model `{model}`: {message}", model=model) from None

    def _limit(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        limit = self._limits.get(loop)
        if limit is None:
            limit = self._limits[loop] = asyncio.Semaphore(self._config.concurrency)
        return limit


def _checked(reply: Reply, schema: dict[str, Any]) -> tuple[Any, list[str]]:
    if reply.empty:
        return "", []
    return check_reply(reply.text, schema)
