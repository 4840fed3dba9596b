"""The scripted client: a `RouterClient` whose router also serves a `Script`."""

from __future__ import annotations

from prose.llm.config import LLMConfig
from prose.llm.retry import RetryPolicy, no_sleep
from prose.llm.router_client import RouterClient
from prose.llm.script import Script
from prose.llm.script_provider import script_deployment


class ScriptedClient(RouterClient):
    """A `RouterClient` whose router also serves `prose-script/<key>` from `script`."""

    def __init__(
        self,
        script: Script,
        config: LLMConfig | None = None,
        *,
        retry_policy: RetryPolicy | None = None,
        debug: bool = False,
    ) -> None:
        base = config if config is not None else LLMConfig(retries=0)
        model_list = [*base.model_list, script_deployment(script)]
        super().__init__(
            base.model_copy(update={"model_list": model_list}),
            retry_policy=retry_policy if retry_policy is not None else RetryPolicy(sleep=no_sleep),
            debug=debug,
        )
        self.script = script


def scripted_client(
    script: Script,
    config: LLMConfig | None = None,
    *,
    retry_policy: RetryPolicy | None = None,
) -> RouterClient:
    """A client that answers `prose-script/<key>` models from `script`.

    Without a config, requests get no retries beyond their own `retries`, and
    retries do not wait (the policy's sleep does nothing).
    """
    return ScriptedClient(script, config, retry_policy=retry_policy)
