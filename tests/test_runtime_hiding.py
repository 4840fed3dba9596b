"""Run-time information hiding (LANGUAGE.md 5): violations stop the run before the call is sent.

The leak fixtures in tests/fixtures/runtime/leaks (and any in
tests/fixtures/leaks) each name the slot that must never be called in their
frontmatter (`leak_slot`). They are run through the scripted model with no
linter in front, as `prose run --no-check` would.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from prose.lang.policy import OTHER_CALLERS
from prose.llm import Script
from prose.runtime import RunOptions, RunResult, run_pattern

HERE = Path(__file__).resolve().parent
LEAKS = sorted((HERE / "fixtures" / "runtime" / "leaks").glob("*.prose.md"))
LEAKS += sorted((HERE / "fixtures" / "leaks").glob("*.prose.md"))


def _frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---")[1]) or {}


def _script_for(path: Path) -> Script:
    own = path.with_name(path.name.replace(".prose.md", ".script.yaml"))
    if own.is_file():
        return Script.from_yaml(own.read_text(encoding="utf-8"))
    from prose.spec import load_spec

    spec = load_spec(path.read_text(encoding="utf-8"), str(path)).spec
    assert spec is not None
    return Script.from_mapping(
        {"slots": {s.name: [f"output of {s.name}"] * 10 for s in spec.slots}}
    )


def run_file(path: Path, tmp_path: Path, script: Script, **options: Any) -> RunResult:
    return asyncio.run(
        run_pattern(
            path,
            RunOptions(
                inputs=options.pop("inputs", {"task_brief": "the brief"}),
                script=script,
                trace_path=tmp_path / "trace.jsonl",
                **options,
            ),
        )
    )


@pytest.mark.parametrize("path", LEAKS, ids=[p.name.removesuffix(".prose.md") for p in LEAKS])
def test_seeded_leak_stops_before_the_call(path: Path, tmp_path: Path) -> None:
    leak_slot = _frontmatter(path).get("leak_slot")
    result = run_file(path, tmp_path, _script_for(path))
    assert result.exit_code == 5, result.error and result.error.format()
    assert result.error is not None and result.error.code == "R010"
    assert result.error.slot == leak_slot
    assert result.error.span is not None and result.error.span.file == str(path)
    # The trace (on disk) has no call of the leaking slot, and says why the run stopped.
    events = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert not [e for e in events if e["type"] == "call" and e["slot"] == leak_slot]
    errors = [e for e in events if e["type"] == "error"]
    assert errors and errors[0]["code"] == "R010" and errors[0]["line"] == result.error.span.line
    assert events[-1]["type"] == "run_end" and events[-1]["status"] == "violation"


HEADER = """---
name: hiding
kind: pattern
version: 0.1.0
---

# Hiding

Provenance tests.

### Slots

- `writer`
- `critic`
- `other`

### Config

- None.

### Invariants

{invariants}

### Parameters

- `task_brief`: string -- the brief

### Returns

- `result`: anything

### Delegation

```prose
{program}
```
"""


def run(
    tmp_path: Path,
    program: str,
    invariants: str = "- `writer` never sees `critic`",
    slots: dict[str, list[Any]] | None = None,
) -> RunResult:
    path = tmp_path / "hiding.prose.md"
    path.write_text(HEADER.format(invariants=invariants, program=textwrap.dedent(program).strip()))
    script = Script.from_mapping(
        {"slots": slots or {"writer": ["w1", "w2"], "critic": ["c1", "c2"], "other": ["o1", "o2"]}}
    )
    return run_file(path, tmp_path, script)


def test_member_read_gives_the_elements_own_provenance(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let attack = call critic
          task_brief: task_brief
        let bundle = { brief: task_brief, notes: attack }
        let w = call writer
          brief: bundle.brief
        return { result: w }
        """,
    )
    assert result.exit_code == 0, result.error and result.error.format()


def test_a_container_carries_the_union(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let attack = call critic
          task_brief: task_brief
        let bundle = { brief: task_brief, notes: [attack] }
        let w = call writer
          brief: bundle
        return { result: w }
        """,
    )
    assert result.exit_code == 5


def test_loop_variable_and_loop_results_carry_provenance(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let notes = repeat 2:
          call critic
            task_brief: task_brief
        for note in notes:
          let w = call writer
            note: note
        return { result: 1 }
        """,
    )
    assert result.exit_code == 5
    assert [e.slot for e in result.events if e.type == "call"] == ["critic", "critic"]


def test_another_slots_output_is_its_own_new_value(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let attack = call critic
          task_brief: task_brief
        let digest = call other
          text: attack
        let w = call writer
          digest: digest
        return { result: w }
        """,
    )
    assert result.exit_code == 0


def test_even_indirectly_follows_transitive_provenance(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let attack = call critic
          task_brief: task_brief
        let digest = call other
          text: attack
        let w = call writer
          digest: digest
        return { result: w }
        """,
        invariants="- `writer` never sees `critic`, even indirectly",
    )
    assert result.exit_code == 5
    assert result.error is not None and "derived from `critic`" in result.error.message


def test_violation_cannot_be_caught(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let attack = call critic
          task_brief: task_brief
        try:
          let w = call writer
            notes: attack
        catch:
          return { result: "swallowed" }
        return { result: "no" }
        """,
    )
    assert result.exit_code == 5


def test_violation_in_an_ignored_parallel_branch_still_stops_the_run(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let attack = call critic
          task_brief: task_brief
        let ws = parallel for x in [task_brief, attack] (on-fail: "ignore"):
          call writer
            text: x
        return { result: ws }
        """,
    )
    assert result.exit_code == 5


def test_sees_only_and_runtime_values_are_not_literal_text(tmp_path: Path) -> None:
    invariants = "- `writer` sees only `task_brief`\n- `writer` is unaware of `critic`"
    literal = run(
        tmp_path,
        """
        let w = call writer
          task_brief: "{task_brief} (the critic is not mentioned here literally)"
        return { result: w }
        """,
        invariants=invariants,
    )
    assert literal.exit_code == 5  # the literal text names `critic`
    assert literal.error is not None and "names `critic`" in literal.error.message
    extra = run(
        tmp_path,
        """
        let w = call writer
          task_brief: task_brief
          extra: "x"
        return { result: w }
        """,
        invariants=invariants,
    )
    assert extra.exit_code == 5 and extra.error is not None and "sees only" in extra.error.message


def test_parameters_are_not_literal_text(tmp_path: Path) -> None:
    path = tmp_path / "p.prose.md"
    path.write_text(
        HEADER.format(
            invariants="- `writer` is unaware of `critic`",
            program=textwrap.dedent("""
        let w = call writer
          task_brief: task_brief
        return { result: w }
        """).strip(),
        )
    )
    result = run_file(
        path,
        tmp_path,
        Script.from_mapping({"slots": {"writer": ["w"]}}),
        inputs={"task_brief": "please ask the critic"},
    )
    assert result.exit_code == 0, result.error and result.error.format()


def test_no_call_receives_both_sides_of_an_unmerged_result(tmp_path: Path) -> None:
    program = """
        let w = call writer
          task_brief: task_brief
        let c = call critic
          draft: w
        let merged = call other
          both: [w, c]
        return { result: merged }
        """
    result = run(tmp_path, program, invariants="- the result returns `writer` and `critic` unmerged")
    assert result.exit_code == 5 and result.error is not None and result.error.slot == "other"
    assert "unmerged" in result.error.message


def test_a_list_that_only_grows_cannot_be_rebuilt(tmp_path: Path) -> None:
    grows = "- `history` only grows"
    fine = run(tmp_path, """
        let history = []
        record 1 in history
        append 2 to history
        return { result: history }
        """, invariants=grows)
    assert fine.exit_code == 0 and fine.value == {"result": [1, 2]}
    for rebuild in ("history = [2]", "let history = []", "history = [2, history[0]]"):
        broken = run(tmp_path, f"let history = []\nrecord 1 in history\n{rebuild}\nreturn {{ result: 1 }}",
                     invariants=grows)
        assert broken.exit_code == 1 and broken.error is not None and broken.error.code == "R016"


def test_require_distinct_models_fails_before_any_call(tmp_path: Path) -> None:
    from prose.runtime.services import ModelService

    path = tmp_path / "p.prose.md"
    path.write_text(
        HEADER.format(
            invariants="- `writer` and `critic` are independent",
            program=textwrap.dedent("""
        let w = call writer
          task_brief: task_brief
        return { result: w }
        """).strip(),
        )
    )
    same = {
        "writer": ModelService("same-model"),
        "critic": ModelService("same-model"),
        "other": ModelService("x"),
    }
    result = asyncio.run(
        run_pattern(
            path,
            RunOptions(
                inputs={"task_brief": "b"},
                bindings=same,
                require_distinct_models=True,
                write_trace=False,
            ),
        )
    )
    assert result.exit_code == 5 and result.events == []
    assert result.error is not None and "same-model" in result.error.message


# --- the linter's leak fixtures (tests/fixtures/leaks/*.yaml), enforced at run time ---

SHARED_LEAKS = sorted((HERE / "fixtures" / "leaks").glob("*.yaml"))
SHARED_SECTIONS: dict[str, str | None] = {
    "slots": (
        "- `proposer` (primary)\n  - ensures: proposal text answering the brief\n"
        "- `adversary`\n  - ensures: attack listing flaws in the proposal\n"
        "- `summariser`\n  - ensures: summary of a text"
    ),
    "config": "- `rounds` (integer, default: 2): how many rounds to run",
    "invariants": "- `proposer` never sees `adversary`",
    "parameters": "- `task_brief`: string -- what the proposer answers",
    "returns": "- `result`: what the pattern produced",
}
SHARED_TEMPLATE = """---
name: {name}
kind: pattern
version: 0.1.0
---

# Leak

A leak fixture run by the interpreter.

### Slots

{slots}

### Config

{config}

### Invariants

{invariants}

### Parameters

{parameters}

### Returns

{returns}

### Delegation

```prose
{program}
```
"""


def _shared_pattern(fixture: dict[str, Any], program: str, tmp_path: Path,
                    twin: dict[str, Any] | None = None) -> Path:
    """The pattern file of one twin: the file's sections, overridden by the twin's own."""
    own = {key: value for key, value in (twin or {}).items() if key in SHARED_SECTIONS}
    merged = {**fixture, **own}
    sections = {key: merged.get(key, default) for key, default in SHARED_SECTIONS.items()}
    sections = {key: (value or "- None.") for key, value in sections.items()}
    path = tmp_path / "leak.prose.md"
    path.write_text(
        SHARED_TEMPLATE.format(
            name=fixture.get("name", "leak"), program=program.rstrip(), **sections
        )
    )
    return path


SCRIPTED_CALLS = 20


def _shared_script(
    path: Path, program: str, fail: list[str] | dict[str, list[int]] | None = None,
    services: dict[str, int | list[str]] | None = None,
    first: dict[str, list[Any]] | None = None,
) -> Script:
    """Every slot answers `{flaws, sections}`; the calls `fail` names are errors instead.

    `fail` is the fixture's key (tests/fixtures/leaks/README.md): a list of slots
    whose every call fails, or a mapping of slot to the numbers (from 1) of its
    calls that fail. Without it, a program with a `catch` and `attack = call
    adversary` has every adversary call fail (the catch-variable channel).
    """
    from prose.spec import load_spec

    spec = load_spec(path.read_text(encoding="utf-8"), str(path)).spec
    assert spec is not None
    slots: dict[str, list[Any]] = {
        s.name: [{"flaws": [f"flaw from {s.name}"], "sections": [f"section from {s.name}"]}]
        * SCRIPTED_CALLS
        for s in spec.slots
    }
    if fail is None:
        fail = ["adversary"] if "catch" in program and "attack = call adversary" in program else []
    failing = (
        {slot: range(1, SCRIPTED_CALLS + 1) for slot in fail}
        if isinstance(fail, list)
        else fail
    )
    for slot, numbers in failing.items():
        for number in numbers:
            slots[slot][number - 1] = {"$error": f"the {slot} failed"}
    # An agent's tool calls (the fixture's `script`) come before its answers.
    for slot, calls in (first or {}).items():
        slots[slot] = [*calls, *slots[slot]]
    # A list-valued slot (`services`): that many services, one queue each; a map-valued
    # slot: its entries' names, one `NAME[ENTRY]` queue each.
    mapping: dict[str, Any] = {name: slots[name] for name in slots}
    for name, count in (services or {}).items():
        if isinstance(count, list):
            del mapping[name]
            mapping.update({f"{name}[{entry}]": slots[name] for entry in count})
        else:
            mapping[name] = [slots[name]] * count
    return Script.from_mapping({"slots": mapping})


@pytest.mark.parametrize("fixture_path", SHARED_LEAKS, ids=[p.stem for p in SHARED_LEAKS])
def test_shared_leak_fixture_stops_at_run_time_and_its_twin_runs(
    fixture_path: Path, tmp_path: Path
) -> None:
    fixture = yaml.safe_load(fixture_path.read_text(encoding="utf-8"))
    fail = fixture.get("fail")
    leak = fixture["leak"]["program"]
    path = _shared_pattern(fixture, leak, tmp_path, fixture["leak"])
    script = _shared_script(path, leak, fail, fixture.get("services"), fixture.get("script"))
    people = _people(fixture)
    result = run_file(path, tmp_path, script, bindings=people,
                      tools=_tools(fixture, fixture["leak"]))
    assert result.exit_code == 5, result.error and result.error.format()
    # A slot bound to a person: the question was never written (nor recorded as asked).
    assert not (tmp_path / "pending.json").exists()
    assert not (tmp_path / "questions").exists()
    assert result.error is not None and result.error.slot is not None
    # Nothing the policy forbids reached the provider: every request the scripted
    # model served to the stopped slot is free of the forbidden slots' outputs.
    policy = result.events[0].policy["slots"]  # an agent's session: every other service's
    rules = policy.get(result.error.slot) or policy[OTHER_CALLERS]
    forbidden = [hidden["other"] for hidden in rules["hidden"]]
    for served in script.calls:
        if served.key == f"slot:{result.error.slot}":
            assert not any(
                f"from {other}" in text for other in forbidden for _, text in served.messages
            )
    # And no call started after the violation (a call event's time is when it started).
    stopped = next(e.time for e in result.events if e.type == "error")
    assert [e for e in result.events if e.type == "call" and e.time > stopped] == []
    clean = fixture["clean"]["program"]
    path = _shared_pattern(fixture, clean, tmp_path, fixture["clean"])
    twin = run_file(path, tmp_path, _shared_script(path, clean, fail, fixture.get("services"),
                                                   fixture.get("script")),
                    bindings=people, tools=_tools(fixture, fixture["clean"]))
    assert twin.exit_code != 5, twin.error and twin.error.format()
    if people:  # the twin asks its person, and the question shows nothing hidden
        assert twin.exit_code == 6, twin.error and twin.error.format()
        shown = "".join(p.read_text() for p in (tmp_path / "questions").glob("*.md"))
        assert shown and not any(f"from {slot}" in shown for slot in ("critic", "adversary"))


def _tools(fixture: dict[str, Any], twin: dict[str, Any]) -> dict[str, Any]:
    """The twin's (else the fixture's) `tools`, read as an instance file's `tools:` is
    (docs/agents.md)."""
    from prose.runtime.tool_setup import providers_from_instance
    from prose.spec.instance_tools import read_tools
    from prose.spec.yaml_nodes import compose

    tools = twin.get("tools", fixture.get("tools"))
    if not tools:
        return {}
    document = compose(yaml.safe_dump({"tools": tools}))
    assert not isinstance(document, Exception) and document.node is not None
    found: list[Any] = []
    tools = read_tools(document.node.value[0][1], "fixture.yaml", found)
    assert found == [], found
    return providers_from_instance(tools, HERE.parent)


def _people(fixture: dict[str, Any]) -> dict[str, Any]:
    """The fixture's `people` slots, each bound to a person (docs/people.md)."""
    from prose.runtime.services import PersonService

    return {slot: PersonService(f"reviewer {slot}") for slot in fixture.get("people") or ()}


@pytest.mark.parametrize("fixture_path", SHARED_LEAKS, ids=[p.stem for p in SHARED_LEAKS])
def test_audit_gives_the_run_times_verdict_on_every_fixture_trace(
    fixture_path: Path, tmp_path: Path
) -> None:
    """The leak's trace: the audit judges the refused call again, from the trace alone, and
    agrees (same rules); the clean twin's trace audits clean."""
    from prose.ledger.audit import audit_trace

    fixture = yaml.safe_load(fixture_path.read_text(encoding="utf-8"))
    for kind in ("leak", "clean"):
        program = fixture[kind]["program"]
        folder = tmp_path / kind
        folder.mkdir()
        path = _shared_pattern(fixture, program, folder, fixture[kind])
        result = run_file(path, folder, _shared_script(path, program, fixture.get("fail"),
                                                          fixture.get("services"),
                                                          fixture.get("script")),
                          tools=_tools(fixture, fixture[kind]))
        report = audit_trace(folder / "trace.jsonl", pattern=path)
        rules = sorted(set(result.error.rules)) if result.exit_code == 5 else []  # type: ignore[union-attr]
        assert [f.to_dict() for f in report.findings] == [], report.findings
        if kind == "leak":
            assert result.exit_code == 5
            agreed = [note for note in report.notes if "the audit agrees" in note]
            assert agreed and f"({', '.join(rules)})" in agreed[0], report.notes
        else:
            assert result.exit_code != 5


INNER = """---
name: inner
kind: pattern
version: 0.1.0
---

# Inner

A nested pattern.

### Slots

- `worker`
  - ensures: answer text

### Config

- None.

### Parameters

- `task_brief`: string -- the brief

### Returns

- `result`: anything

### Delegation

```prose
{program}
```
"""


@pytest.mark.parametrize(
    "inner_program",
    ["let r = call worker\n  task_brief: task_brief\nreturn { result: r }",
     'throw "the inner pattern gave up"'],
    ids=["inner-call-fails", "inner-throw"],
)
def test_a_nested_patterns_error_carries_the_outer_calls_label(
    tmp_path: Path, inner_program: str
) -> None:
    """A nested pattern bound to `critic` fails: its error is the call of `critic`'s error
    (`prose.lang.flows.call_output`), so `catch as err` carries `critic` into the writer."""
    from prose.check import lint_text
    from prose.runtime.services import PatternService

    inner = tmp_path / "inner.prose.md"
    inner.write_text(INNER.format(program=inner_program))
    program = """
        let attack = null
        try:
          attack = call critic
            task_brief: task_brief
        catch as err:
          attack = call writer
            problem: err.message
        return { result: attack }
        """
    path = tmp_path / "hiding.prose.md"
    path.write_text(HEADER.format(invariants="- `writer` never sees `critic`",
                                  program=textwrap.dedent(program).strip()))
    lint = lint_text(path.read_text(), str(path))
    assert [d.code for d in lint.diagnostics if d.category == "information-hiding"] == ["PH604"]
    script = Script.from_mapping({"slots": {"writer": ["w"], "other": ["o"],
                                            "critic.worker": [{"$error": "the worker failed"}]}})
    result = run_file(path, tmp_path, script, bindings={"critic": PatternService(str(inner))})
    assert result.exit_code == 5, result.error and result.error.format()
    assert result.error is not None and result.error.slot == "writer"


PIPELINE = HERE.parent / "patterns" / "pipeline.prose.md"


@pytest.mark.parametrize("leaks", [True, False], ids=["earlier-outputs", "predecessor-only"])
def test_each_stage_sees_only_its_predecessors_output(tmp_path: Path, leaks: bool) -> None:
    """The pipeline with a third stage that also gets every earlier output: lint (PH610) and
    the run time (exit 5 at `stages[2]`, which would see `stages[0]`) agree; the pattern as
    shipped is clean in both."""
    from prose.check import lint_text

    text = PIPELINE.read_text(encoding="utf-8")
    if leaks:
        text = text.replace("    input: current\n", "    input: current\n    earlier: stage_outputs\n")
        text = text.replace("  - requires: input\n", "  - requires: input, earlier\n")
        text = text.replace("- `stages` sees only `input`\n", "")
    path = tmp_path / "pipeline.prose.md"
    path.write_text(text, encoding="utf-8")
    codes = [d.code for d in lint_text(text, str(path)).diagnostics
             if d.category == "information-hiding" and d.severity.value == "error"]
    assert codes == (["PH610"] if leaks else [])
    script = Script.from_mapping({"slots": {"stages": [[f"output {i}"] for i in range(3)]}})
    result = run_file(path, tmp_path, script)
    if leaks:
        assert result.exit_code == 5, result.error and result.error.format()
        assert result.error is not None and "predecessor" in result.error.message
        stopped = next(e for e in result.events if e.type == "error")
        assert stopped.refused is not None and stopped.refused["index"] == 2
    else:
        assert result.exit_code == 0, result.error and result.error.format()


def test_a_run_time_stop_says_where_the_hidden_output_was_made(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        """
        let attack = call critic
          task_brief: task_brief
        let notes = "{attack}"
        let w = call writer
          notes: notes
        return { result: w }
        """,
    )
    assert result.exit_code == 5 and result.error is not None
    critic_line = result.error.span.line - 3  # `call critic` is three lines above the writer's
    assert f"(made by the call at line {critic_line})" in result.error.message
