"""The interpreter's semantics (LANGUAGE.md 4), each run through the scripted model.

Every run goes through the real call path: `run_pattern` -> `prose.llm`'s
scripted client -> the LiteLLM Router -> the `prose-script` custom provider.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from prose.llm import Script
from prose.runtime import RunOptions, RunResult, run_pattern

HEADER = """---
name: {name}
kind: pattern
version: 0.1.0
---

# Test pattern

A pattern written by a test.

### Slots

{slots}

### Config

{config}

### Invariants

{invariants}

### Parameters

{params}

### Returns

- `result`: the result

### Delegation

```prose
{program}
```
"""


def write_pattern(
    tmp_path: Path,
    program: str,
    *,
    slots: str = "- `worker`",
    config: str = "- None.",
    invariants: str = "- none",
    params: str = "- None.",
    name: str = "test-pattern",
) -> Path:
    path = tmp_path / f"{name}.prose.md"
    path.write_text(
        HEADER.format(
            name=name,
            slots=slots,
            config=config,
            invariants=invariants,
            params=params,
            program=textwrap.dedent(program).strip(),
        ),
        encoding="utf-8",
    )
    return path


def run(
    tmp_path: Path, program: str, script: dict[str, Any] | None = None, **options: Any
) -> RunResult:
    spec_keys = {
        k: options.pop(k)
        for k in ("slots", "config", "invariants", "params", "name")
        if k in options
    }
    path = write_pattern(tmp_path, program, **spec_keys)
    opts = RunOptions(
        script=Script.from_mapping(script or {}), trace_path=tmp_path / "trace.jsonl", **options
    )
    return asyncio.run(run_pattern(path, opts))


def calls(result: RunResult) -> list[Any]:
    return [e for e in result.events if e.type == "call"]


def ok(result: RunResult) -> Any:
    assert result.error is None, result.error.format()
    assert result.exit_code == 0
    return result.value


# --- scope (4.1) -------------------------------------------------------------------


def test_let_of_an_existing_name_assigns_it(tmp_path: Path) -> None:
    value = ok(
        run(
            tmp_path,
            """
        let draft = "first"
        repeat 2 as i:
          let draft = call worker
            text: draft
        return { result: draft }
        """,
            {"slots": {"worker": ["second", "third"]}},
        )
    )
    assert value == {"result": "third"}


def test_loop_variable_is_read_only_inside_the_loop(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        for x in [1, 2]:
          x = 3
        return { result: x }
        """,
    )
    assert result.exit_code == 1
    assert result.error is not None and result.error.code == "R003"
    assert result.error.span is not None and result.error.span.line == 35


def test_loop_variable_stays_readable_after_the_loop(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        for x, i in ["a", "b", "c"]:
          let seen = i
        return { result: [x, i, seen] }
        """,
        )
    ) == {"result": ["c", 2, 2]}


def test_slots_config_and_parameters_are_read_only(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "let rounds = 3\nreturn { result: rounds }",
        config="- `rounds` (integer, default: 2): how many",
    )
    assert result.error is not None and result.error.code == "R003"


def test_parallel_branch_may_read_but_not_assign_outer_variables(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let total = 0
        parallel for x in [1, 2]:
          total = x
        return { result: total }
        """,
    )
    assert result.error is not None and result.error.code == "R006"


def test_parallel_branch_may_not_record_into_outer_list(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let seen = []
        parallel for x in [1, 2]:
          record x in seen
        return { result: seen }
        """,
    )
    assert result.error is not None and result.error.code == "R006"


def test_parallel_block_publishes_lets_after_the_join(tmp_path: Path) -> None:
    value = ok(
        run(
            tmp_path,
            """
        let outer = "kept"
        parallel:
          let a = call worker
            n: 1
          let b = "plain {outer}"
        return { result: [a, b] }
        """,
            {"slots": {"worker": ["from worker"]}},
        )
    )
    assert value == {"result": ["from worker", "plain kept"]}


def test_two_parallel_branches_binding_one_name_is_an_error(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        parallel:
          let a = 1
          let a = 2
        return { result: a }
        """,
    )
    assert result.error is not None and result.error.code == "R006"


def test_block_invocations_have_their_own_scope(tmp_path: Path) -> None:
    # `do` is a statement; its value is what a collecting loop sees.
    value = ok(
        run(
            tmp_path,
            """
        let name = "outer"
        block shout(word):
          let name = "inner {word}"
          return name
        let said = repeat 1:
          do shout("hi")
        return { result: [said, name] }
        """,
        )
    )
    assert value == {"result": [["inner hi"], "outer"]}


# --- values (4.2) ------------------------------------------------------------------


def test_missing_key_reads_null_and_length(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        let o = { a: [1, 2, 3], s: "abcd" }
        return { result: [o.missing, o.a.length, o.s.length, o.a[-1]] }
        """,
        )
    ) == {"result": [None, 3, 4, 3]}


@pytest.mark.parametrize("holder", ['"text"', "3", "null", "[1]"])
def test_reading_a_key_of_a_non_object_is_an_error_at_that_line(
    tmp_path: Path, holder: str
) -> None:
    result = run(
        tmp_path,
        f"""
        let v = {holder}
        let w = v.key
        return {{ result: w }}
        """,
    )
    assert result.exit_code == 1
    assert result.error is not None and result.error.code == "R005"
    assert result.error.span is not None and result.error.span.line == 35
    assert "35 | let w = v.key" in result.error.frame


def test_truthiness(tmp_path: Path) -> None:
    value = ok(
        run(
            tmp_path,
            """
        let out = []
        for v in [null, false, 0, "", [], {}, "false", 1, [0], { a: 1 }]:
          if v:
            record true in out
          else:
            record false in out
        return { result: out }
        """,
        )
    )
    assert value == {"result": [False] * 6 + [True] * 4}


def test_call_without_schema_returns_a_string_never_parsed(tmp_path: Path) -> None:
    value = ok(
        run(
            tmp_path,
            """
        let r = call worker
          q: 1
        return { result: r }
        """,
            {"slots": {"worker": ['{"accept": true}']}},
        )
    )
    assert value == {"result": '{"accept": true}'}


def test_call_schema_returns_a_validated_object(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let r = call worker
          q: 1
          schema: { accept: "boolean", notes: "string" }
        return { result: r.accept }
        """,
        {"slots": {"worker": [{"accept": True, "notes": "fine"}]}},
    )
    assert ok(result) == {"result": True}
    request = calls(result)[0]
    assert request.output == {"accept": True, "notes": "fine"}


def test_slot_ensures_schema_is_requested(tmp_path: Path) -> None:
    slots = "- `critic`\n  - ensures: verdict object with `accept` (boolean), `notes` (string)"
    result = run(
        tmp_path,
        """
        let r = call critic
          draft: "d"
        return { result: r }
        """,
        {"slots": {"critic": [{"accept": False, "notes": "no"}]}},
        slots=slots,
    )
    assert ok(result) == {"result": {"accept": False, "notes": "no"}}


def test_typed_subtasks_are_validated_re_asked_and_read_by_field(tmp_path: Path) -> None:
    slots = (
        "- `planner`\n  - ensures: plan object with `verdict` (\"GO\" | \"STOP\"), "
        "`subtasks` ({ kind: \"code\" | \"docs\", instruction: string }[]), `notes` (string?)"
    )
    outside = {"verdict": "GO", "subtasks": [{"kind": "tests", "instruction": "a"}], "notes": None}
    inside = {"verdict": "GO", "subtasks": [{"kind": "docs", "instruction": "b"}], "notes": None}
    result = run(
        tmp_path,
        """
        let plan = call planner
          task: "t"
        let kinds = []
        for task in plan.subtasks:
          if task.kind == "docs" and plan.verdict == "GO":
            append task.instruction to kinds
        return { result: kinds }
        """,
        {"slots": {"planner": [{"$invalid": outside}, inside]}},
        slots=slots,
    )
    assert ok(result) == {"result": ["b"]}
    [call] = calls(result)
    assert call.output == inside  # the reply outside the enum was asked again


def test_schema_mismatch_fails_the_call_with_exit_4(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let r = call worker
          q: 1
          schema: { accept: "boolean" }
        return { result: r }
        """,
        {"slots": {"worker": [{"$invalid": {"accept": "yes"}}, {"accept": "still yes"}]}},
    )
    assert result.exit_code == 4
    assert result.error is not None and result.error.kind == "schema"


def test_scripted_mapping_without_schema_stays_an_object(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        let r = call worker
          q: 1
        return { result: r.field }
        """,
            {"slots": {"worker": [{"field": "value"}]}},
        )
    ) == {"result": "value"}


def test_interpolation_and_destructuring(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        let { a, b } = { a: "x", b: { c: 2 } }
        return { result: "a={a} c={b.c} missing={b.d}" }
        """,
        )
    ) == {"result": "a=x c=2 missing=null"}


def test_member_and_index_assignment_rebuild_values(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        let o = { list: [1, 2], inner: { k: "v" } }
        let copy = o
        o.inner.k = "w"
        o.list[0] = 9
        append 3 to o.list
        return { result: [o, copy] }
        """,
        )
    ) == {
        "result": [{"list": [9, 2, 3], "inner": {"k": "w"}}, {"list": [1, 2], "inner": {"k": "v"}}]
    }


# --- loops in value position (4.3) ---------------------------------------------------


def test_collecting_loop_values(tmp_path: Path) -> None:
    value = ok(
        run(
            tmp_path,
            """
        let xs = for x in [1, 2, 3, 4]:
          if x == 2:
            continue
          if x == 3:
            return "three"
          let y = x
        return { result: xs }
        """,
        )
    )
    assert value == {"result": [1, None, "three", 4]}


def test_collecting_loop_of_calls_and_nested_loops(tmp_path: Path) -> None:
    value = ok(
        run(
            tmp_path,
            """
        let grid = repeat 2 as i:
          for j in [1, 2]:
            call worker
              i: i
              j: j
        return { result: grid }
        """,
            {"slots": {"worker": ["a", "b", "c", "d"]}},
        )
    )
    assert value == {"result": [["a", "b"], ["c", "d"]]}


def test_return_in_a_statement_loop_ends_the_pattern(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        for x in [1, 2, 3]:
          if x == 2:
            return { result: x }
        return { result: 0 }
        """,
        )
    ) == {"result": 2}


def test_break_ends_a_collecting_loop(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        let xs = for x in [1, 2, 3]:
          if x == 3:
            break
          let y = x
        return { result: xs }
        """,
        )
    ) == {"result": [1, 2]}


def test_loop_until_evaluates_before_every_iteration_and_max_is_traced(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let seen = []
        loop until seen.length >= 2 (max: 5) as i:
          record i in seen
        loop while false (max: 3):
          record 99 in seen
        loop (max: 2) as k:
          record k in seen
        return { result: seen }
        """,
    )
    assert ok(result) == {"result": [1, 2, 1, 2]}
    notes = [e for e in result.events if e.type == "note" and e.what == "loop_max"]
    assert len(notes) == 1 and notes[0].detail["max"] == 2


def test_repeat_count_must_be_a_non_negative_integer(tmp_path: Path) -> None:
    result = run(tmp_path, "repeat -1:\n  let x = 1\nreturn { result: 1 }")
    assert result.error is not None and result.error.code == "R004"


# --- errors (4.6) ----------------------------------------------------------------------


def test_catch_binds_message_kind_slot_and_finally_runs(tmp_path: Path) -> None:
    value = ok(
        run(
            tmp_path,
            """
        let log = []
        try:
          let r = call worker
            q: 1
        catch as err:
          record err in log
        finally:
          record "finally" in log
        return { result: log }
        """,
            {"slots": {"worker": [{"$error": "connection reset"}]}},
        )
    )
    caught = value["result"][0]
    assert caught["message"].endswith("connection reset")
    assert caught["kind"] == "provider" and caught["slot"] == "worker"
    assert value["result"][1] == "finally"


def test_retry_makes_extra_attempts_each_traced(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let r = call worker
          q: 1
          retry: 2
          backoff: "exponential"
        return { result: r }
        """,
        {"slots": {"worker": [{"$error": "boom"}, {"$error": "boom"}, "ok"]}},
    )
    assert ok(result) == {"result": "ok"}
    attempts = calls(result)
    assert [a.attempt for a in attempts] == [1, 2, 3]
    assert [a.error is not None for a in attempts] == [True, True, False]


def test_unhandled_call_failure_exits_4_at_the_call_line(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "let r = call worker\n  q: 1\nreturn { result: r }",
        {"slots": {"worker": [{"$error": "down"}]}},
    )
    assert result.exit_code == 4
    assert result.error is not None and result.error.span is not None
    assert result.error.span.line == 34
    assert result.events[-1].type == "run_end" and result.events[-1].status == "error"


def test_control_flow_passes_through_catch_and_runs_finally(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        let log = []
        for x in [1, 2, 3]:
          try:
            if x == 1:
              continue
            if x == 2:
              break
          catch:
            record "caught" in log
          finally:
            record x in log
        try:
          return { result: log }
        finally:
          record "late" in log
        """,
        )
    ) == {"result": [1, 2]}


def test_throw_and_rethrow(tmp_path: Path) -> None:
    value = ok(
        run(
            tmp_path,
            """
        let out = []
        try:
          try:
            throw { message: "bad input", kind: "validation" }
          catch as first:
            record first.kind in out
            throw
        catch as second:
          record second.message in out
        return { result: out }
        """,
        )
    )
    assert value == {"result": ["validation", "bad input"]}
    uncaught = run(tmp_path, 'throw "stop here"\nreturn { result: 1 }')
    assert uncaught.exit_code == 1 and uncaught.error is not None
    assert uncaught.error.code == "R007" and uncaught.error.message == "stop here"


def test_script_exhausted_is_a_clear_error_naming_the_slot(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        try:
          let r = call worker
            q: 1
        catch:
          let r = "swallowed"
        return { result: r }
        """,
        {"slots": {"worker": []}},
    )
    assert result.exit_code == 1
    assert result.error is not None and "`worker`" in result.error.message
    assert result.error.code == "R013"
    # The trace and the error spell the kind as the language does (prose.lang.error_kinds).
    assert result.error.kind == "script-exhausted"
    failed = [e for e in result.events if e.type == "call" and e.error]
    assert [e.error["kind"] for e in failed] == ["script-exhausted"]


def test_a_judge_with_no_scripted_answer_left_is_traced_as_script_exhausted(
        tmp_path: Path) -> None:
    result = run(tmp_path, """
        let verdict = "fine"
        if verdict accepts the draft:
          return { result: 1 }
        return { result: 2 }
        """, {"conditions": {}})
    assert result.error is not None and result.error.code == "R013"
    judges = [e for e in result.events if e.type == "judge"]
    assert [e.error["kind"] for e in judges if e.error] == ["script-exhausted"]


# --- conditions (4.5) ------------------------------------------------------------------


def test_discretion_condition_goes_to_the_judge_with_mentioned_values(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let verdict = "looks fine"
        if verdict accepts the draft:
          return { result: "accepted" }
        return { result: "rejected" }
        """,
        {"conditions": {"verdict accepts the draft": [True]}},
    )
    assert ok(result) == {"result": "accepted"}
    judges = [e for e in result.events if e.type == "judge"]
    assert len(judges) == 1
    assert judges[0].values == {"verdict": "looks fine"}
    assert judges[0].decision is True and judges[0].reason == "scripted"


def test_loop_until_discretion_uses_booleans_in_order(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let draft = "v0"
        loop until **the draft is good** (max: 5):
          draft = call worker
            draft: draft
        return { result: draft }
        """,
        {
            "slots": {"worker": ["v1", "v2", "v3"]},
            "conditions": {"the draft is good": [False, False, True]},
        },
    )
    assert ok(result) == {"result": "v2"}


def test_discretion_condition_mentioning_no_value_is_an_error(tmp_path: Path) -> None:
    result = run(tmp_path, "if the sky is blue:\n  return { result: 1 }\nreturn { result: 0 }")
    assert result.exit_code == 1 and result.error is not None and result.error.code == "R002"


def test_declared_but_unbound_name_reads_null_in_a_condition(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        loop until verdict.accepted (max: 3):
          let verdict = call worker
            q: 1
            schema: { accepted: "boolean" }
        return { result: verdict }
        """,
            {"slots": {"worker": [{"accepted": False}, {"accepted": True}]}},
        )
    ) == {"result": {"accepted": True}}


def test_choice_runs_the_option_the_judge_picks(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let plan = "rewrite the parser"
        choice **which kind of fix the plan needs**:
          option "code":
            return { result: "code" }
          option "docs":
            return { result: "docs" }
        """,
        {"choices": {"which kind of fix the plan needs": ["docs"]}},
    )
    assert ok(result) == {"result": "docs"}
    judge = next(e for e in result.events if e.type == "judge")
    assert judge.options == ["code", "docs"] and judge.decision == "docs"


def test_deterministic_predicates(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        let a = { n: 3, s: "x", l: [] }
        let out = []
        if a.n >= 3 and a.s == "x" and not (a.n < 1):
          record 1 in out
        if a.l is empty and a.missing is null and a.s is not empty and a.n is present:
          record 2 in out
        if a.n == 4 or a.s != "x":
          record 3 in out
        return { result: out }
        """,
        )
    ) == {"result": [1, 2]}


def test_comparing_different_types_is_an_error(tmp_path: Path) -> None:
    result = run(tmp_path, 'if 1 < "2":\n  return { result: 1 }\nreturn { result: 0 }')
    assert result.error is not None and result.error.code == "R004"


# --- the seeds --------------------------------------------------------------------------

PATTERNS = Path(__file__).resolve().parent.parent / "patterns"


def test_proposer_adversary_returns_both_outputs_unmerged(tmp_path: Path) -> None:
    script = Script.from_mapping(
        {
            "slots": {
                "proposer": ["Use a token bucket."],
                "adversary": ["Buckets leak under bursts."],
            }
        }
    )
    result = asyncio.run(
        run_pattern(
            PATTERNS / "proposer-adversary.prose.md",
            RunOptions(
                inputs={"task_brief": "Design a rate limiter."},
                script=script,
                trace_path=tmp_path / "t.jsonl",
            ),
        )
    )
    assert ok(result) == {
        "result": {"proposal": "Use a token bucket.", "attack": "Buckets leak under bursts."}
    }
    proposer = next(e for e in calls(result) if e.slot == "proposer")
    sent = json.dumps(proposer.messages).lower()
    assert "buckets leak" not in sent
    for word in ("adversary", "attack", "proposer-adversary"):
        assert word not in sent
    adversary = next(e for e in calls(result) if e.slot == "adversary")
    assert adversary.provenance == ["proposer"]


def test_dialectic_returns_the_exchange(tmp_path: Path) -> None:
    script = Script.from_mapping(
        {"slots": {"thesis": ["T1", "T2", "T3"], "antithesis": ["A1", "A2", "A3"]}}
    )
    result = asyncio.run(
        run_pattern(
            PATTERNS / "dialectic.prose.md",
            RunOptions(
                inputs={"task_brief": "Is X good?"},
                config={"rounds": 3},
                script=script,
                trace_path=tmp_path / "t.jsonl",
            ),
        )
    )
    exchange = [{"round": i, "thesis": f"T{i}", "antithesis": f"A{i}"} for i in (1, 2, 3)]
    assert ok(result) == {"result": exchange}  # once: no second copy under another key
    thesis_calls = [e for e in calls(result) if e.slot == "thesis"]
    # The first thesis has no counterargument yet: a null input is left out of the prompt.
    assert "prior_antithesis" not in thesis_calls[0].messages[-1]["content"]
    assert "null" not in thesis_calls[0].messages[-1]["content"]
    assert "## prior_antithesis\nA1" in thesis_calls[1].messages[-1]["content"]
    # Each side sees only the other's latest argument: prompt tokens stay flat.
    tokens = [e.usage.prompt_tokens for e in thesis_calls[1:]]
    assert tokens[0] == tokens[1]


def test_messages_contain_only_what_4_4_allows(tmp_path: Path) -> None:
    slots = "- `critic`\n  - requires: draft\n  - ensures: review of the draft"
    result = run(
        tmp_path,
        """
        let r = call critic
          draft: { title: "T", body: ["a", "b"] }
          prompt: "Be brief."
        return { result: r }
        """,
        {"slots": {"critic": ["ok"]}},
        slots=slots,
        name="secret-pattern-name",
    )
    ok(result)
    messages = calls(result)[0].messages
    assert messages[0] == {"role": "system", "content": "Produce: review of the draft"}
    assert messages[1]["content"] == (
        'Be brief.\n\n## draft\n{\n  "title": "T",\n  "body": [\n    "a",\n    "b"\n  ]\n}'
    )
    assert "secret-pattern-name" not in json.dumps(messages)


# --- decisions recorded in docs/language-runtime-decisions.md ----------------------------


def test_assigning_a_name_never_bound_is_an_error(tmp_path: Path) -> None:
    result = run(tmp_path, "x = 1\nreturn { result: x }")
    assert result.error is not None and result.error.code == "R002"
    assert "bind it with `let` first" in result.error.message


def test_loop_variable_cannot_be_rebound_by_let_after_the_loop(tmp_path: Path) -> None:
    result = run(tmp_path, "for x in [1]:\n  let y = x\nlet x = 2\nreturn { result: x }")
    assert result.error is not None and result.error.code == "R003"


def test_blocks_are_hoisted_and_break_cannot_leave_a_block(tmp_path: Path) -> None:
    assert ok(
        run(
            tmp_path,
            """
        let out = repeat 1:
          do twice("a")
        block twice(word):
          return [word, word]
        return { result: out }
        """,
        )
    ) == {"result": [["a", "a"]]}
    result = run(
        tmp_path,
        """
        block stop():
          break
        for x in [1, 2]:
          do stop()
        return { result: 1 }
        """,
    )
    assert result.error is not None and result.error.code == "R015"


def test_a_body_without_return_returns_null(tmp_path: Path) -> None:
    assert ok(run(tmp_path, "let x = 1")) is None


def test_a_loop_without_max_is_refused(tmp_path: Path) -> None:
    result = run(tmp_path, "loop:\n  break\nreturn { result: 1 }")
    assert result.error is not None and result.error.code == "R004"
    assert "(max: N)" in result.error.message


def test_a_call_without_inputs_sends_no_input(tmp_path: Path) -> None:
    result = run(
        tmp_path, "let r = call worker\nreturn { result: r }", {"slots": {"worker": ["x"]}}
    )
    assert ok(result) == {"result": "x"}
    assert calls(result)[0].messages == [{"role": "user", "content": "(no input)"}]


def test_an_unusable_judge_answer_is_an_error_at_that_line(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let verdict = "v"
        if verdict says go:
          return { result: 1 }
        return { result: 0 }
        """,
        {"conditions": {"verdict says go": [{"$invalid": {"answer": "maybe", "reason": "r"}},
                                           {"answer": "maybe", "reason": "r"}]}},
    )
    assert result.exit_code == 4 and result.error is not None and result.error.code == "R009"
    assert result.error.span is not None and result.error.span.line == 35
    judge = next(e for e in result.events if e.type == "judge")
    assert judge.error is not None


def test_any_count_larger_than_the_branches_is_an_error(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        'let xs = parallel for x in [1] ("any", count: 2):\n  let y = x\nreturn { result: xs }',
    )
    assert result.error is not None and result.error.code == "R014"


@pytest.mark.parametrize(("expression", "message"), [
    ('keys("x")', "`keys` takes an object, not a string"),
    ("sum(3)", "`sum` takes a list, not a number"),
    ('upper(["a"])', "`upper` takes a string, not a list of 1 items"),
])
def test_a_built_in_refuses_an_operand_of_the_wrong_kind_in_one_voice(
        tmp_path: Path, expression: str, message: str) -> None:
    result = run(tmp_path, f"let x = {expression}\nreturn {{ result: x }}")
    assert result.error is not None and result.error.message == message
