"""The LLM layer: the only package that talks to LiteLLM.

LiteLLM is imported lazily, on the first model call (`loader.py`), so
importing this package is cheap. Above this package nothing sees a LiteLLM
type: requests and responses are `types.py`, failures are `errors.py`.

    client = RouterClient(LLMConfig.from_yaml("llm.yaml"))
    reply = await client.complete(ChatRequest("fast", [Message.user("hi")]))

    client = scripted_client(Script.from_yaml(text))   # tests, dry runs
    reply = await client.complete(ChatRequest(script_model("slot:proposer"), messages))
"""

from prose.llm.config import LLMConfig
from prose.llm.decisions import CONDITION_SCHEMA, choice_schema
from prose.llm.errors import (
    AuthError,
    BadRequestError,
    ContextWindowError,
    EmptyReplyError,
    LLMConfigError,
    LLMError,
    ModelTimeoutError,
    ProviderError,
    RateLimitError,
    SchemaDefinitionError,
    SchemaError,
    ScriptedReplyError,
    ScriptExhaustedError,
    ScriptFormatError,
)
from prose.llm.loader import litellm_import_seconds
from prose.llm.retry import RetryPolicy, no_sleep
from prose.llm.router_client import RouterClient
from prose.llm.schema import schema_from_fields, validate
from prose.llm.script import (
    SCRIPT_PROVIDER,
    Script,
    ScriptedCall,
    choice_key,
    condition_key,
    script_model,
    slot_key,
)
from prose.llm.script_client import ScriptedClient, scripted_client
from prose.llm.types import ChatRequest, ChatResponse, LLMClient, Message, Usage

__all__ = [
    "CONDITION_SCHEMA",
    "SCRIPT_PROVIDER",
    "AuthError",
    "BadRequestError",
    "ChatRequest",
    "ChatResponse",
    "ContextWindowError",
    "EmptyReplyError",
    "LLMClient",
    "LLMConfig",
    "LLMConfigError",
    "LLMError",
    "Message",
    "ModelTimeoutError",
    "ProviderError",
    "RateLimitError",
    "RetryPolicy",
    "RouterClient",
    "SchemaDefinitionError",
    "SchemaError",
    "Script",
    "ScriptExhaustedError",
    "ScriptFormatError",
    "ScriptedCall",
    "ScriptedClient",
    "ScriptedReplyError",
    "Usage",
    "choice_key",
    "choice_schema",
    "condition_key",
    "litellm_import_seconds",
    "no_sleep",
    "schema_from_fields",
    "script_model",
    "scripted_client",
    "slot_key",
    "validate",
]
