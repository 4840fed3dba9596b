"""The scripted model: a LiteLLM custom provider routed by the same Router."""

from __future__ import annotations

import asyncio
import importlib
import pickle
from typing import Any

import pytest

from prose.llm import (
    CONDITION_SCHEMA,
    ChatRequest,
    ChatResponse,
    LLMError,
    Message,
    ProviderError,
    RetryPolicy,
    RouterClient,
    SchemaError,
    Script,
    ScriptedReplyError,
    ScriptExhaustedError,
    ScriptFormatError,
    choice_key,
    choice_schema,
    condition_key,
    schema_from_fields,
    script_model,
    scripted_client,
)

# LiteLLM's own types make pydantic warn when LiteLLM first uses them.
pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

ASK = [Message.system("You review plans."), Message.user("Review this plan please.")]

SCRIPT_YAML = """
slots:
  proposer:
    - "First draft."
    - {title: Plan, steps: [a, b]}
    - "{\\"looks\\": \\"like json\\"}"
    - |
      verdict: accept
      notes: fine
  reviewers:
    - ["r0 first", "r0 second"]
    - ["r1 first"]
  critic: [c1, c2]
conditions:
  "**verdict accepts** result": [true, false]
choices:
  "which way": [left]
"""


def complete(client: RouterClient, key: str, **options: Any) -> ChatResponse:
    return asyncio.run(client.complete(ChatRequest(script_model(key), ASK, **options)))


def fail(client: RouterClient, key: str, **options: Any) -> LLMError:
    with pytest.raises(LLMError) as caught:
        complete(client, key, **options)
    return caught.value


@pytest.fixture
def client() -> RouterClient:
    return scripted_client(Script.from_yaml(SCRIPT_YAML))


def test_strings_mappings_and_yaml_strings(client: RouterClient) -> None:
    first = complete(client, "slot:proposer")
    assert (first.text, first.parsed) == ("First draft.", None)
    assert first.model == "prose-script/slot:proposer"
    mapping = complete(client, "slot:proposer")
    assert mapping.parsed == {"title": "Plan", "steps": ["a", "b"]}
    assert mapping.text == '{"title": "Plan", "steps": ["a", "b"]}'
    looks_like_json = complete(client, "slot:proposer")
    assert (looks_like_json.text, looks_like_json.parsed) == ('{"looks": "like json"}', None)
    yaml_text = complete(client, "slot:proposer")
    assert (yaml_text.text, yaml_text.parsed) == ("verdict: accept\nnotes: fine\n", None)


def test_lists_and_scalars_are_structured() -> None:
    client = scripted_client(Script({"slot:s": [["x", 1], True, None]}))
    assert complete(client, "slot:s").parsed == ["x", 1]
    assert complete(client, "slot:s").parsed is True
    nothing = complete(client, "slot:s")
    assert (nothing.text, nothing.parsed) == ("null", None)


def test_per_service_queues_and_shared_queue(client: RouterClient) -> None:
    assert complete(client, "slot:reviewers[1]").text == "r1 first"
    assert complete(client, "slot:reviewers[0]").text == "r0 first"
    assert complete(client, "slot:reviewers[0]").text == "r0 second"
    # A slot scripted without services serves every service from one queue.
    assert complete(client, "slot:critic[0]").text == "c1"
    assert complete(client, "slot:critic[1]").text == "c2"


def test_exhaustion_names_the_key(client: RouterClient) -> None:
    complete(client, "slot:reviewers[1]")
    error = fail(client, "slot:reviewers[1]")
    assert isinstance(error, ScriptExhaustedError)
    assert error.key == "slot:reviewers[1]"
    assert error.kind == "script-exhausted"
    assert error.message == "the script has no response left for `slot:reviewers[1]`"
    assert error.model == "prose-script/slot:reviewers[1]"
    unknown = fail(client, "slot:nobody")
    assert isinstance(unknown, ScriptExhaustedError)
    assert unknown.key == "slot:nobody"


def test_error_entry_fails_that_call_only() -> None:
    client = scripted_client(Script({"slot:w": [{"$error": "model overloaded"}, "after"]}))
    error = fail(client, "slot:w")
    assert type(error) is ProviderError
    assert (error.kind, error.message, error.attempts) == ("provider", "model overloaded", 1)
    assert error.model == "prose-script/slot:w"
    assert complete(client, "slot:w").text == "after"


def test_error_entry_retried_when_the_request_allows() -> None:
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    script = Script({"slot:w": [{"$error": "one"}, {"$error": "two"}, "third time"]})
    client = scripted_client(script, retry_policy=RetryPolicy(sleep=sleep))
    response = complete(client, "slot:w", retries=2)
    assert (response.text, response.attempts) == ("third time", 3)
    assert delays == [1.0, 2.0]
    assert script.remaining() == {"slot:w": 0}


def test_error_entry_retries_exhausted() -> None:
    script = Script({"slot:w": [{"$error": "one"}, {"$error": "two"}]})
    error = fail(scripted_client(script), "slot:w", retries=1)
    assert (error.message, error.attempts) == ("two", 2)


def test_usage_counts_words() -> None:
    client = scripted_client(Script({"slot:u": ["three word reply", {"a": "b c"}]}))
    response = complete(client, "slot:u")
    # "You review plans." (3) + "Review this plan please." (4)
    assert response.usage.prompt_tokens == 7
    assert response.usage.completion_tokens == 3
    assert response.usage.total_tokens == 10
    assert response.cost_usd == 0.0
    structured = complete(client, "slot:u")  # '{"a": "b c"}' is 3 words
    assert structured.usage.completion_tokens == 3


def test_conditions_and_choices_answer_the_judge_schemas(client: RouterClient) -> None:
    key = condition_key("verdict accepts result")
    assert key == condition_key("***verdict accepts*** result ")
    yes = complete(client, key, schema=CONDITION_SCHEMA)
    assert yes.parsed == {"answer": True, "reason": "scripted"}
    no = complete(client, key, schema=CONDITION_SCHEMA)
    assert no.parsed["answer"] is False
    picked = complete(client, choice_key("which way"), schema=choice_schema(["left", "right"]))
    assert picked.parsed == {"choice": "left", "reason": "scripted"}


def test_schema_reask_takes_the_next_entry() -> None:
    """A reply marked `$invalid` is sent as it is; the re-ask takes the next entry."""
    schema = schema_from_fields({"accept": "boolean", "notes": "string"})
    script = Script({"slot:r": [{"$invalid": {"accept": "yes"}}, {"accept": True, "notes": "ok"}]})
    response = complete(scripted_client(script), "slot:r", schema=schema)
    assert response.parsed == {"accept": True, "notes": "ok"}
    assert response.attempts == 2
    first, second = script.calls
    assert first.messages == (("system", "You review plans."), ("user", "Review this plan please."))
    assert second.messages[2] == ("assistant", '{"accept": "yes"}')
    assert "expected boolean" in second.messages[3][1]


def test_schema_error_after_the_reask() -> None:
    schema = schema_from_fields({"accept": "boolean"})
    script = Script({"slot:r": [{"$invalid": "not json"}, "still not json"]})
    error = fail(scripted_client(script), "slot:r", schema=schema)
    assert isinstance(error, SchemaError)
    assert error.reply == "still not json"


def test_an_unmarked_reply_that_fails_its_schema_names_its_entry_and_takes_no_other() -> None:
    """Issue 35: a scripted reply of the wrong type was re-asked silently, and the re-ask
    took the next entry, the reply meant for the slot's next call."""
    schema = schema_from_fields({"accept": "boolean"})
    script = Script.from_mapping({"slots": {"r": [{"accept": True}, {"accept": "yes"},
                                                   {"accept": False}]}})
    client = scripted_client(script)
    assert complete(client, "slot:r", schema=schema).parsed == {"accept": True}
    error = fail(client, "slot:r", schema=schema)
    assert isinstance(error, ScriptedReplyError)
    assert error.entry == "slots.r[1]"
    assert "the scripted reply `slots.r[1]` failed the call's schema: $.accept: expected " \
        "boolean" in error.message
    assert "$invalid" in error.message
    assert script.remaining() == {"slot:r": 1}  # the next call's reply is still there


def test_calls_are_recorded(client: RouterClient) -> None:
    complete(client, "slot:critic")
    assert client.script.calls[-1].key == "slot:critic"  # type: ignore[attr-defined]
    assert client.script.calls[-1].response == "c1"  # type: ignore[attr-defined]


def test_scripted_calls_go_through_the_litellm_router(client: RouterClient) -> None:
    complete(client, "slot:critic")
    litellm = importlib.import_module("litellm")
    custom_llm = importlib.import_module("litellm.llms.custom_llm").CustomLLM
    [entry] = [e for e in litellm.custom_provider_map if e["provider"] == "prose-script"]
    assert isinstance(entry["custom_handler"], custom_llm)
    router = client._router  # type: ignore[attr-defined]
    assert type(router).__name__ == "Router"
    assert [d["model_name"] for d in router.registry().all()] == ["prose-script/*"]


def test_two_scripts_do_not_share_queues() -> None:
    one = scripted_client(Script({"slot:a": ["from one"]}))
    two = scripted_client(Script({"slot:a": ["from two"]}))

    async def both() -> list[str]:
        replies = await asyncio.gather(
            one.complete(ChatRequest(script_model("slot:a"), ASK)),
            two.complete(ChatRequest(script_model("slot:a"), ASK)),
        )
        return [r.text for r in replies]

    assert asyncio.run(both()) == ["from one", "from two"]


def test_errors_survive_pickling() -> None:
    error = fail(scripted_client(Script()), "slot:x")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ScriptExhaustedError
    assert (copy.key, copy.message, copy.model) == (error.key, error.message, error.model)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("slots: [a]", "script section `slots` must be a mapping"),
        ("slot: {a: [x]}", "unknown script section `slot`"),
        ("slots: {a: x}", "slot `a`: expected a list of responses"),
        ("conditions: {ok: [maybe]}", "condition `ok`: expected true or false, got 'maybe'"),
        ("choices: {pick: [1]}", "choice `pick`: expected a label, got 1"),
        ("- a", "a script is a mapping"),
        ("slots: {a: [", "<script>:2:1: not valid YAML"),
    ],
)
def test_script_format_errors(text: str, message: str) -> None:
    with pytest.raises(ScriptFormatError, match=message.replace("[", r"\[").replace("(", r"\(")):
        Script.from_yaml(text)


def test_responses_must_be_json_like() -> None:
    with pytest.raises(ScriptFormatError, match="must be JSON-like, got set"):
        Script({"slot:a": [{1, 2}]})


def test_a_bare_string_is_not_a_list_of_responses() -> None:
    with pytest.raises(ScriptFormatError, match="`slot:a`: expected a list of responses"):
        Script({"slot:a": "hello"})
