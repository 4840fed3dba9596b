"""The ProseScript constructs of OpenProse's language (issue 15): parse, `prose fmt`, lint and
a run with the scripted model, each on our own programs (tests/fixtures/prosescript/).

Sessions and agents, `resume`, `loop for each`, pipelines, `do` as a value and objects
written without commas; and the lexer rule that a keyword is only ever a whole word.
Their leak/clean twins are in tests/fixtures/leaks/ (pipeline-*, do-expression,
loop-for-each), run by tests/test_leaks.py and tests/test_runtime_hiding.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prose.check.lint import lint_text
from prose.errors import ProseSyntaxError
from prose.syntax import nodes as n
from prose.syntax.format import format_program
from prose.syntax.parser import parse_program
from tests.test_runtime import calls, ok, run

FIXTURES = Path(__file__).parent / "fixtures" / "prosescript"


def parse(source: str) -> n.Program:
    return parse_program(source, "t.prose")


def round_trip(source: str) -> str:
    """The canonical form; it parses to the same AST and formats to itself."""
    program = parse(source)
    out = format_program(program)
    again = parse(out)
    assert again.body == program.body
    assert format_program(again) == out
    return out


# --- parsing and formatting ---------------------------------------------------------


def test_agent_definition_keeps_properties_and_shape() -> None:
    program = parse(
        'agent tools_resolver:\n  model: fast\n  persist: true\n  prompt: "Find tools."\n'
        '  skills: ["lookup"]\n  shape:\n    self: ["finding"]\n    prohibited: ["writing"]\n'
    )
    agent = program.body[0]
    assert isinstance(agent, n.AgentDef)
    assert agent.name == "tools_resolver"  # `to` is not read as a keyword inside a name
    assert [p.name for p in agent.properties] == ["model", "persist", "prompt", "skills"]
    assert [p.name for p in agent.shape] == ["self", "prohibited"]


@pytest.mark.parametrize(
    ("source", "agent", "label", "resume", "prompt"),
    [
        ('session "Name three risks of {topic}"', None, None, False, "Name three risks of {topic}"),
        ("session: scout", "scout", None, False, None),
        ("session second_look: scout", "scout", "second_look", False, None),
        ("resume: scout", "scout", None, True, None),
    ],
)
def test_session_forms(source: str, agent: str | None, label: str | None, resume: bool,
                       prompt: str | None) -> None:
    statement = parse(source + "\n  context: topic\n").body[0]
    assert isinstance(statement, n.ExprStmt) and isinstance(statement.expr, n.Session)
    session = statement.expr
    assert (session.agent, session.label, session.resume) == (agent, label, resume)
    assert (session.prompt.text if session.prompt else None) == prompt
    assert [p.name for p in session.properties] == ["context"]
    assert session.slot == (agent or "session")
    round_trip(source + "\n  context: topic\n")


def test_session_in_value_position() -> None:
    let = parse("let notes = resume: scout\n  prompt: \"again\"\n").body[0]
    assert isinstance(let, n.Let) and isinstance(let.value, n.Session) and let.value.resume


def test_pipeline_stages_on_their_own_lines_and_on_the_same_line() -> None:
    program = parse(
        "let out = xs\n  | filter:\n      call a\n        x: item\n  | map:\n      call b\n"
        "  | reduce(total, one):\n      call c\n        t: total\ncall d\n"
    )
    let, after = program.body
    assert isinstance(let, n.Let) and isinstance(let.value, n.Pipeline)
    stages = let.value.stages
    assert [(s.op, s.params) for s in stages] == [
        ("filter", ("item",)), ("map", ("item",)), ("reduce", ("total", "one"))]
    assert isinstance(after, n.ExprStmt)  # the statement after the pipeline is its own
    same_line = parse("let out = xs | pmap:\n  call a\n").body[0]
    assert isinstance(same_line, n.Let) and isinstance(same_line.value, n.Pipeline)
    assert round_trip("let out = xs | pmap:\n  call a\n") == (
        "let out = xs\n  | pmap:\n      call a\n")


def test_loop_for_each_is_a_bounded_for() -> None:
    loop = parse("loop for each claim, i in claims (max: 4):\n  call check\n").body[0]
    assert isinstance(loop, n.For) and loop.each
    assert (loop.var, loop.index_var) == ("claim", "i")
    assert isinstance(loop.max, n.Literal) and loop.max.value == 4
    round_trip("loop for each claim, i in claims (max: 4):\n  call check\n")


def test_do_in_value_position() -> None:
    body = parse("let a = do:\n  call x\nlet b = do f(a, 2)\nlet c = do f\ndo f\n").body
    assert isinstance(body[0], n.Let) and isinstance(body[0].value, n.Do)
    assert body[0].value.name is None and len(body[0].value.body) == 1
    assert isinstance(body[1], n.Let) and body[1].value == n.Do("f", (n.Name("a"), n.Literal(2)))
    assert isinstance(body[2], n.Let) and body[2].value == n.Do("f")
    assert body[3] == n.Do("f")
    assert round_trip("let c = do f\ndo f\n") == "let c = do f()\ndo f()\n"


def test_object_entries_on_their_own_lines_need_no_commas() -> None:
    program = parse("return {\n  report: report\n  sources: sources\n  extra\n}\n")
    ret = program.body[0]
    assert isinstance(ret, n.Return) and isinstance(ret.value, n.Object)
    assert [e.key for e in ret.value.entries] == ["report", "sources", "extra"]
    assert round_trip("return {\n  report: report\n  sources: sources\n}\n") == (
        "return { report: report, sources: sources }\n")


@pytest.mark.parametrize(
    ("source", "column", "word"),
    [("append x tomato\n", 10, "tomato"), ("record x intox\n", 10, "intox"),
     ("let x = call y\nappend x tomato\n", 10, "tomato")],
)
def test_a_keyword_is_never_the_prefix_of_a_name(source: str, column: int, word: str) -> None:
    """`append x tomato` was parsed as `append x to mato`: a keyword the parser expected
    was matched at the start of a longer name."""
    with pytest.raises(ProseSyntaxError) as caught:
        parse(source)
    error = caught.value
    assert (error.line, error.column) == (source.count("\n"), column)
    assert f"`{word}`" in error.message


def test_keywords_still_work_as_names_where_no_keyword_is_expected() -> None:
    program = parse("let session = 1\nlet agent = { map: 3, each: 2 }\nlet each = agent.map\n")
    assert [s.names for s in program.body if isinstance(s, n.Let)] == [
        ("session",), ("agent",), ("each",)]


def test_the_fixture_program_formats_to_the_same_program() -> None:
    source = (FIXTURES / "every-construct.prose.md").read_text(encoding="utf-8")
    block = source.split("```prose\n", 1)[1].split("```", 1)[0]
    canonical = round_trip(block)
    # Only the object written without commas changes.
    assert canonical.replace("return { kept: both[0], checked: checked, recap: recap }",
                             "return {\n  kept: both[0]\n  checked: checked\n  recap: recap\n}") == block


# --- lint --------------------------------------------------------------------------------


def lint_fixture(name: str) -> list[tuple[str, int, str]]:
    path = FIXTURES / name
    result = lint_text(path.read_text(encoding="utf-8"), str(path))
    return [(d.code, d.span.line, d.message) for d in result.diagnostics
            if d.severity.name == "ERROR" or d.code in ("PN101", "PN102", "PN105")]


def test_every_construct_lints_without_a_false_error() -> None:
    assert lint_fixture("every-construct.prose.md") == []


def test_a_session_of_an_undefined_agent_and_item_outside_a_stage_are_undefined() -> None:
    found = lint_fixture("undefined-names.prose.md")
    assert [(code, message) for code, _, message in found] == [
        ("PN101", "undefined name `ghost`; did you mean `short`?"),
        ("PN101", "undefined name `item`"),
    ]


# --- runs ----------------------------------------------------------------------------------


SLOTS = "- `worker`\n  - requires: text\n  - ensures: a short text"


def run_ok(tmp_path: Path, program: str, script: dict[str, Any]) -> Any:
    return ok(run(tmp_path, program, script, slots=SLOTS))


def test_sessions_run_with_a_script(tmp_path: Path) -> None:
    result = run(tmp_path, """
        agent scout:
          model: fast
          prompt: "You keep short notes."
        let a = session "Say hello"
        let b = session: scout
          context: a
        let c = session look: scout
        return { result: [a, b, c] }
        """, {"slots": {"session": ["hello"], "scout": ["noted", "looked"]}}, slots=SLOTS)
    assert ok(result) == {"result": ["hello", "noted", "looked"]}
    sent = calls(result)
    assert [e.slot for e in sent] == ["session", "scout", "scout"]
    system = [m["content"] for m in sent[1].messages if m["role"] == "system"]
    assert any("You keep short notes." in text for text in system)
    user = " ".join(str(m["content"]) for m in sent[1].messages if m["role"] == "user")
    assert "hello" in user  # `context: a` is sent as an input
    assert "Say hello" in " ".join(str(m["content"]) for m in sent[0].messages)


def test_resume_sends_the_memory_of_a_persist_agent(tmp_path: Path) -> None:
    result = run(tmp_path, """
        agent scribe:
          persist: true
        session: scribe
          context: "the first fact"
        let recap = resume: scribe
          prompt: "What do you remember?"
        return { result: recap }
        """, {"slots": {"scribe": ["stored", "you told me the first fact"]}}, slots=SLOTS)
    assert ok(result) == {"result": "you told me the first fact"}
    resumed = calls(result)[1]
    user = " ".join(str(m["content"]) for m in resumed.messages if m["role"] == "user")
    assert "memory" in user and "the first fact" in user and "stored" in user


def test_resume_of_an_agent_without_persist_is_an_error(tmp_path: Path) -> None:
    result = run(tmp_path, """
        agent scribe:
          prompt: "Notes."
        let recap = resume: scribe
        return { result: recap }
        """, {"slots": {"scribe": ["x"]}}, slots=SLOTS)
    assert result.exit_code == 1
    assert result.error is not None and "`resume: scribe` needs an agent with `persist:`" in (
        result.error.message)


def test_pipeline_stages(tmp_path: Path) -> None:
    value = run_ok(tmp_path, """
        let words = ["a", "bb", "ccc", "dd"]
        let long = words
          | filter:
              call worker
                text: item
        let shouted = long
          | map:
              return "{item}!"
        let joined = shouted
          | reduce(acc, x):
              let both = "{acc}+{x}"
        let parallel_done = words
          | pmap:
              call worker
                text: item
        return { result: { long, shouted, joined, parallel_done } }
        """, {"slots": {"worker": [False, True, True, False, "1", "2", "3", "4"]}})
    assert value == {"result": {"long": ["bb", "ccc"], "shouted": ["bb!", "ccc!"],
                                "joined": "bb!+ccc!", "parallel_done": ["1", "2", "3", "4"]}}


def test_reduce_of_an_empty_list_is_null_and_a_stage_needs_a_list(tmp_path: Path) -> None:
    assert run_ok(tmp_path, """
        let none = []
          | reduce(acc, x):
              return x
        return { result: none }
        """, {}) == {"result": None}
    result = run(tmp_path, """
        let bad = "text"
          | map:
              return item
        return { result: bad }
        """, {}, slots=SLOTS)
    assert result.exit_code == 1 and "`| map` takes a list" in result.error.message  # type: ignore[union-attr]


def test_loop_for_each_runs_at_most_max_items(tmp_path: Path) -> None:
    result = run(tmp_path, """
        let seen = []
        loop for each x, i in ["a", "b", "c"] (max: 2):
          record "{i}:{x}" in seen
        return { result: seen }
        """, {}, slots=SLOTS)
    assert ok(result) == {"result": ["0:a", "1:b"]}
    notes = [e for e in result.events if e.type == "note" and e.what == "loop_max"]
    assert len(notes) == 1


def test_do_values(tmp_path: Path) -> None:
    value = run_ok(tmp_path, """
        block twice(x):
          return [x, x]
        let pair = do twice("a")
        let last = do:
          let first = "one"
          let second = "{first} two"
        let early = do:
          return "early"
        return { result: [pair, last, early] }
        """, {})
    assert value == {"result": [["a", "a"], "one two", "early"]}


def test_the_fixture_pattern_runs_with_its_script(tmp_path: Path) -> None:
    import asyncio

    from prose.llm import Script
    from prose.runtime import RunOptions, run_pattern

    script = Script.from_file(FIXTURES / "every-construct.script.yaml")
    options = RunOptions(script=script, trace_path=tmp_path / "trace.jsonl",
                         inputs={"subject": "tides", "claims": ["moon", "wind", "sun"]},
                         config={"max_claims": 2})
    result = asyncio.run(run_pattern(FIXTURES / "every-construct.prose.md", options))
    assert ok(result) == {
        "kept": "tides: moon and sun",
        "checked": ["0: moon", "1: wind"],
        "recap": {"memory": "I noted three sources on tides", "opening": "Tides follow the moon."},
    }
    assert [e.slot for e in calls(result)][:3] == ["scout", "scout", "session"]


# --- bugs found on OpenProse's tree ---------------------------------------------------


def test_use_without_as_takes_the_last_part_of_the_path() -> None:
    program = parse('use "std/evals/inspector"\nuse "lib/helper.prose.md"\n')
    assert [(u.path, u.alias) for u in program.body if isinstance(u, n.Use)] == [
        ("std/evals/inspector", "inspector"), ("lib/helper.prose.md", "helper")]


def lint_program(program: str, slots: str = SLOTS) -> list[tuple[str, str]]:
    text = (
        "---\nname: t\nkind: pattern\nversion: 1\n---\n# T\nA test.\n### Slots\n" + slots
        + "\n### Parameters\n- `topic`: string -- a topic\n### Returns\n- `result`: r\n"
        "### Delegation\n```prose\n" + program + "```\n"
    )
    return [(d.code, d.message) for d in lint_text(text, "t.prose.md").diagnostics]


def test_a_let_published_by_a_join_and_read_by_an_earlier_block_is_read() -> None:
    """PN105 said `security` was never read: the block that reads it is defined first."""
    found = lint_program(
        "block summary():\n  return call worker\n    text: security\n"
        "parallel:\n  let security = call worker\n    text: topic\n"
        "  let style = call worker\n    text: topic\n"
        "let s = do summary()\nreturn { result: [s, style] }\n")
    assert [code for code, _ in found if code == "PN105"] == []


def test_any_and_union_types_lint_and_run_alike(tmp_path: Path) -> None:
    """Lint accepted `(any)` and unions in a call's schema that the run refused: both now
    read prose.lang.schema_types, and a word neither knows is PK507 before the run."""
    slots = ("- `worker`\n  - requires: text\n"
             "  - ensures: verdict object with `notes` (string | null), `extra` (any)")
    program = ("let v = call worker\n  text: topic\nlet w = call worker\n  text: topic\n"
               '  schema: { tags: "string[] or null", seen: "any" }\n'
               "return { result: [v, w] }\n")
    assert [c for c, _ in lint_program(program, slots) if c.startswith(("PK", "PS12"))] == []
    result = run(tmp_path, program, {"slots": {"worker": [
        {"notes": None, "extra": [1, {"a": 2}]}, {"tags": None, "seen": "x"}]}},
        slots=slots, params="- `topic`: string -- a topic", inputs={"topic": "tides"})
    assert ok(result) == {"result": [{"notes": None, "extra": [1, {"a": 2}]},
                                     {"tags": None, "seen": "x"}]}
    bad = program.replace('"any"', '"anything"')
    assert ("PK507", "field `seen` of `schema:` has unknown type `anything`") in lint_program(
        bad, slots)


def test_session_names_are_the_script_keys_of_sessions() -> None:
    from prose.syntax.walk import session_names

    program = parse('agent a:\n  persist: true\nsession "x"\nif c:\n  let r = resume: a\n'
                    "let s = [1] | map:\n  session: b\n")
    assert session_names(program) == ("a", "b", "session")


def test_the_outline_lists_agents() -> None:
    from prose.lsp.documents import analyse
    from prose.lsp.navigation import document_symbols

    path = FIXTURES / "every-construct.prose.md"
    analysis = analyse(path.as_uri(), path.read_text(encoding="utf-8"), 1)
    delegation = next(s for s in document_symbols(analysis) if s.name == "Delegation")
    names = [child.name for child in delegation.children or []]
    assert names[:3] == ["scout", "notes", "opening"]
    assert "pair" in names and "recap" in names
