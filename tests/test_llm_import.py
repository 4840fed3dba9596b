"""`import prose.llm` stays cheap: LiteLLM is imported on the first model call only.

How long the import takes is measured by bench/imports.py, not asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

CHECK = textwrap.dedent(
    """
    import json, sys
    import prose.llm
    from prose.llm import (
        ChatRequest, LLMConfig, Message, RouterClient, Script, scripted_client, script_model,
    )
    config = LLMConfig(model_list=[{"model_name": "m", "litellm_params": {"model": "openai/x"}}])
    client = RouterClient(config)
    scripted = scripted_client(Script.from_yaml("slots: {p: [hi]}"))
    request = ChatRequest(script_model("slot:p"), [Message.user("hi")])
    print(json.dumps({
        "heavy": sorted(m for m in ("litellm", "openai", "tiktoken", "httpx") if m in sys.modules),
    }))
    """
)


def test_import_does_not_import_litellm() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60, check=True
    )
    result = json.loads(done.stdout)
    assert result["heavy"] == []  # bench/imports.py times this import


def test_first_call_imports_litellm_offline() -> None:
    code = textwrap.dedent(
        """
        import asyncio, json, os, sys
        from prose.llm import ChatRequest, Message, Script, scripted_client, script_model
        from prose.llm import litellm_import_seconds
        client = scripted_client(Script({"slot:p": ["hi"]}))
        reply = asyncio.run(client.complete(ChatRequest(script_model("slot:p"), [Message.user("x")])))
        print(json.dumps({
            "text": reply.text,
            "imported": "litellm" in sys.modules,
            "seconds": litellm_import_seconds(),
            "offline": os.environ.get("LITELLM_OFFLINE_MODE"),
            "local_prices": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
        }))
        """
    )
    env_without_litellm_flags = {
        k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env_without_litellm_flags,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["text"] == "hi"
    assert result["imported"] is True
    assert result["seconds"] > 0
    assert (result["offline"], result["local_prices"]) == ("true", "true")
    assert "Traceback" not in done.stderr
