"""People as services (docs/people.md): the binding, the question, waiting and answering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prose.spec.instance import PersonService
from prose.spec.instance_loader import load_instance

ROOT = Path(__file__).resolve().parent.parent
PATTERN = ROOT / "patterns" / "adversarial-review.prose.md"


def _instance(binding: str) -> str:
    return (
        f"pattern: {PATTERN}\n"
        "with:\n"
        "  proponent: { model: fast }\n"
        "  critic: { model: strong }\n"
        "  second_critic: { model: strong-alt }\n"
        f"  decision_owner: {binding}\n"
        "inputs: { task_brief: x }\n"
    )


def test_a_person_binding_is_read_with_who_may_answer() -> None:
    text = _instance('{ person: { name: chair, may_answer: [alice, bob], prompt: "Rule." } }')
    result = load_instance(text, "i.yaml")
    assert result.errors == []
    service = result.instance.bindings["decision_owner"].value  # type: ignore[union-attr]
    assert isinstance(service, PersonService)
    assert (service.name, service.may_answer, service.prompt) == ("chair", ["alice", "bob"], "Rule.")


def test_a_bare_person_name_is_the_only_one_who_may_answer() -> None:
    result = load_instance(_instance("{ person: alice }"), "i.yaml")
    service = result.instance.bindings["decision_owner"].value  # type: ignore[union-attr]
    assert isinstance(service, PersonService)
    assert (service.name, service.may_answer) == ("alice", ["alice"])


@pytest.mark.parametrize(
    ("binding", "code", "where", "message"),
    [
        ("{ person: { nme: chair } }", "PS173", "6:31", "unknown key `nme` in the person of "
         "`decision_owner`; did you mean `name`?"),
        ("{ person: 42 }", "PS174", "6:29", "`person` of `decision_owner` must be a name or a mapping"),
        ("{ person: [alice] }", "PS174", "6:29", "must be a name or a mapping"),
        ("{ person: { may_answer: [] } }", "PS174", "6:43", "`may_answer` of `decision_owner` "
         "names nobody"),
        ("{ person: alice, model: fast }", "PS174", "6:19", "gives more than one of"),
    ],
)
def test_a_bad_person_binding_is_an_error_at_its_line_and_column(
    binding: str, code: str, where: str, message: str
) -> None:
    result = load_instance(_instance(binding), "i.yaml")
    found = [(d.code, f"{d.span.line}:{d.span.column}", d.message) for d in result.errors]
    assert any(c == code and w == where and message in m for c, w, m in found), found


def _script(with_owner: bool) -> object:
    import yaml

    from prose.llm import Script

    data = yaml.safe_load((ROOT / "examples" / "adversarial-review.script.yaml").read_text())
    if not with_owner:
        del data["slots"]["decision_owner"]
    return Script.from_mapping(data)


def _run(tmp_path: Path, bindings: dict[str, object], script: object) -> object:
    import asyncio

    from prose.runtime.runner import RunOptions, run_pattern

    options = RunOptions(inputs={"task_brief": "Raise the limit."}, script=script,  # type: ignore[arg-type]
                         bindings=bindings, trace_path=tmp_path / "trace.jsonl")  # type: ignore[arg-type]
    return asyncio.run(run_pattern(PATTERN, options))


def test_the_question_is_the_messages_a_model_would_be_sent(tmp_path: Path) -> None:
    from prose.runtime.services import ModelService
    from prose.runtime.services import PersonService as Person

    role = "You chair the credit committee."
    model_script = _script(with_owner=True)
    model = _run(tmp_path / "model", {"decision_owner": ModelService("m", role)}, model_script)
    assert model.exit_code == 0  # type: ignore[attr-defined]
    sent = [c for c in model_script.calls if c.key == "slot:decision_owner"]  # type: ignore[attr-defined]
    person = _run(tmp_path / "person", {"decision_owner": Person("chair", ("alice",), role)},
                  _script(with_owner=False))
    assert person.exit_code == 6  # type: ignore[attr-defined]
    pending = json.loads((tmp_path / "person" / "pending.json").read_text())
    [question] = pending["questions"]
    assert [(m["role"], m["content"]) for m in question["messages"]] == list(sent[0].messages)
    assert question["schema"]["required"] == ["decision", "rationale", "conditions"]
    assert question["may_answer"] == ["alice"]
    shown = (tmp_path / "person" / "questions" / f"{question['id']}.md").read_text()
    assert role in shown and "## review_log" in shown and "`decision` (string)" in shown
