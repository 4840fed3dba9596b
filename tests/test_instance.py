"""Instance files (LANGUAGE.md 1.2): parsing with YAML lines, resolution and validation."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from prose.diagnostics.model import Severity
from prose.spec import (
    Instance,
    ModelService,
    PatternService,
    PythonService,
    SpecResult,
    iterated_names,
    load_instance,
    load_instance_file,
    load_spec_file,
    validate_instance,
)

FIXTURES = Path(__file__).parent / "fixtures"
INSTANCES = FIXTURES / "instances"
BOARD = FIXTURES / "spec" / "review-board.prose.md"


def _found(path: Path) -> list[tuple[str, int, int]]:
    result = load_instance_file(path)
    return [(d.code, d.span.line, d.span.column) for d in result.diagnostics]


def test_a_valid_instance_has_no_findings_and_every_service_kind() -> None:
    result = load_instance_file(INSTANCES / "review-board.yaml")
    assert result.diagnostics == [] and result.spec_diagnostics == []
    assert result.ok
    instance = result.instance
    assert instance is not None and result.spec is not None
    assert instance.pattern == "../spec/review-board.prose.md"
    assert (
        instance.pattern_path is not None
        and Path(instance.pattern_path).resolve() == BOARD.resolve()
    )
    author = instance.bindings["author"].value
    assert isinstance(author, ModelService)
    assert (author.model, author.role, author.prompt) == ("fast", "roles/author.md", None)
    assert author.role_path is not None and Path(author.role_path).is_file()
    reviewers = instance.bindings["reviewers"]
    assert reviewers.is_list and [
        s.model for s in reviewers.services if isinstance(s, ModelService)
    ] == [
        "strong",
        "fast",
    ]
    judge = instance.bindings["judge"].value
    assert isinstance(judge, ModelService)
    assert judge.output_schema == {"accept": "boolean", "reason": "string", "feedback": "string"}
    assert instance.config_values == {"max_rounds": 2, "tags": ["triage", "nightly"]}
    assert instance.input_values["max_rounds"] == 4  # an input overrides a config default
    assert instance.bindings["judge"].span.line == 8
    assert (instance.inputs[0].span.line, instance.inputs[0].value_span.column) == (15, 15)


def test_each_validation_error_is_reported_at_its_yaml_line() -> None:
    assert _found(INSTANCES / "errors.yaml") == [
        ("PS177", 3, 1),  # `author` is not bound (reported at `with:`)
        ("PS178", 4, 14),  # `reviewers` is marked (list) but bound to one service
        ("PS179", 6, 5),  # `judge` takes one service but is bound to a list
        ("PS176", 8, 3),  # `editor` is not a slot
        ("PS181", 10, 15),  # `max_rounds: three` is not an integer
        ("PS180", 11, 3),  # `depth` is not a config key
        ("PS182", 12, 1),  # `task_brief` is required and missing (reported at `inputs:`)
        ("PS184", 13, 13),  # `audience: 42` is not a string
        ("PS185", 14, 3),  # `judge` is a slot, not an input
        ("PS183", 15, 3),  # `topic` is not a parameter
        ("PS173", 16, 1),  # `extras` is not an instance key
    ]


def test_each_invalid_service_is_reported_at_its_yaml_line() -> None:
    result = load_instance_file(INSTANCES / "bad-services.yaml")
    assert [(d.code, d.span.line, d.span.column) for d in result.diagnostics] == [
        ("PS174", 4, 11),  # both `prompt` and `role`
        ("PS175", 4, 58),  # the role file does not exist
        ("PS173", 6, 24),  # `temperature` is no service key
        ("PS186", 7, 17),  # `python:` is not `package.module:function`
        ("PS174", 8, 7),  # more than one service kind
        ("PS174", 9, 7),  # no service kind
        ("PS174", 10, 7),  # not a mapping
        ("PS174", 11, 62),  # `strng` is no schema type word (prose.lang.schema_types)
    ]
    assert result.instance is not None
    # The invalid `reviewers` list is reported once, not again as an unbound slot.
    assert result.instance.invalid_slots == ["reviewers"]


def test_nested_patterns_python_callables_and_bare_aliases() -> None:
    result = load_instance_file(INSTANCES / "nested.yaml")
    assert [(d.code, d.span.line, d.span.column) for d in result.diagnostics] == [
        ("PS177", 6, 5),  # the nested `checker` slot is unbound
        ("PS176", 8, 7),  # the nested pattern has no slot `critic`
        ("PS172", 13, 21),  # no library pattern of that name
    ]
    instance = result.instance
    assert instance is not None
    author = instance.bindings["author"].value
    assert isinstance(author, PatternService)
    assert author.pattern_path is not None and author.pattern_path.endswith("ok-minimal.prose.md")
    assert author.config_values == {"rounds": 2} and set(author.bindings) == {"writer", "critic"}
    alias, code = instance.bindings["reviewers"].services
    assert isinstance(alias, ModelService) and alias.model == "fast"
    assert isinstance(code, PythonService)
    assert (code.module, code.function) == ("my_reviewers.checks", "review")
    judge = instance.bindings["judge"].value
    assert isinstance(judge, PatternService) and judge.pattern_path is None


def test_a_library_name_resolves_through_the_pattern_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = tmp_path / "library"
    library.mkdir()
    (library / "review-board.prose.md").write_text(
        BOARD.read_text(encoding="utf-8"), encoding="utf-8"
    )
    monkeypatch.setattr("prose.resources.patterns_dir", lambda: library)
    text = (INSTANCES / "review-board.yaml").read_text(encoding="utf-8")
    text = text.replace("../spec/review-board.prose.md", "review-board").replace(
        "roles/author.md", str(INSTANCES / "roles" / "author.md")
    )
    result = load_instance(text, str(tmp_path / "inst.yaml"))
    assert result.diagnostics == []
    assert result.instance is not None
    assert result.instance.pattern_path == str(library / "review-board.prose.md")


def test_the_spec_loader_is_pluggable_and_its_findings_are_kept_apart(tmp_path: Path) -> None:
    calls: list[Path] = []

    def loader(path: Path) -> SpecResult:
        calls.append(path)
        return load_spec_file(path)

    text = "pattern: tiny.prose.md\nwith:\n  writer: fast\n  checker: strong\ninputs:\n  task_brief: x\n"
    (tmp_path / "tiny.prose.md").write_text(
        (FIXTURES / "spec" / "PS123-slot-without-contract.prose.md").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    result = load_instance(text, str(tmp_path / "inst.yaml"), loader)
    assert calls == [tmp_path / "tiny.prose.md"]
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("PS177", 2)]  # `editor`
    assert [d.code for d in result.spec_diagnostics] == ["PS123"]
    assert result.spec_diagnostics[0].severity is Severity.INFO


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pattern: [x\n", [("PS170", 2, 1)]),
        ("- just\n- a list\n", [("PS170", 1, 1)]),
        ("with: {}\n", [("PS171", 1, 1)]),
        ("pattern: ./nowhere.prose.md\n", [("PS172", 1, 10)]),
        ("pattern: 3\n", [("PS171", 1, 10)]),
        ("pattern: x.prose.md\nwith: [a]\n", [("PS172", 1, 10), ("PS170", 2, 7)]),
    ],
)
def test_broken_instance_files_are_diagnostics(
    tmp_path: Path, text: str, expected: list[tuple[str, int, int]]
) -> None:
    result = load_instance(text, str(tmp_path / "i.yaml"))
    assert [(d.code, d.span.line, d.span.column) for d in result.diagnostics] == expected


def test_a_pattern_with_errors_is_reported_at_the_pattern_line(tmp_path: Path) -> None:
    source = FIXTURES / "spec" / "PS121-duplicate-slot.prose.md"
    text = f"pattern: {source}\nwith:\n  writer: fast\n  checker: fast\ninputs: {{task_brief: x}}\n"
    result = load_instance(text, str(tmp_path / "i.yaml"))
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("PS172", 1)]
    assert [d.code for d in result.spec_diagnostics] == ["PS121"]
    assert not result.ok


def test_validate_instance_takes_list_slots_and_inputs_given_elsewhere() -> None:
    result = load_instance_file(INSTANCES / "review-board.yaml")
    assert result.instance is not None and result.spec is not None
    bare = result.instance.model_copy(update={"inputs": []})
    assert [d.code for d in validate_instance(bare, result.spec)] == ["PS182"]
    assert validate_instance(bare, result.spec, extra_inputs={"task_brief"}) == []
    found = validate_instance(result.instance, result.spec, list_slots={"judge"})
    assert [(d.code, d.span.line) for d in found] == [("PS178", 9)]


def test_slots_iterated_by_for_are_list_valued() -> None:
    spec = load_spec_file(FIXTURES / "spec" / "tolerant-formats.prose.md").spec
    assert spec is not None
    assert iterated_names(spec) == {"workers"}
    board = load_spec_file(BOARD).spec
    assert board is not None and iterated_names(board) == {"reviewers"}


def test_a_non_utf8_instance_file_is_a_content_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"pattern: x\n\xff\n")
    result = load_instance_file(path)
    assert result.instance is None
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("PS170", 2)]


def test_the_pattern_spec_model_cannot_name_python_code() -> None:
    # A pattern file is data: no field of the spec model holds a callable
    # reference; only instance files (and the command line) may name one.
    from prose.spec import PatternSpec, Slot

    assert not any("python" in item.name for item in dataclasses.fields(PatternSpec))
    assert not any("python" in item.name for item in dataclasses.fields(Slot))
    assert "python" in PythonService.model_fields
    assert isinstance(Instance.model_fields, dict)


def test_a_value_that_contains_itself_is_reported_not_raised() -> None:
    text = (
        "pattern: ../spec/review-board.prose.md\n"
        "with: {author: fast, reviewers: [fast], judge: fast}\n"
        "config:\n  tags: &a [x, *a]\n"
        "inputs:\n  task_brief: &b {k: *b}\n"
    )
    result = load_instance(text, str(INSTANCES / "self.yaml"))
    # The YAML reader (prose.bounded) refuses the document at the first such alias.
    assert [(d.code, d.span.line, d.span.column) for d in result.diagnostics] == [("PS170", 4, 16)]
    assert "`*a` is inside the node it names" in result.diagnostics[0].message


def test_an_instance_schema_takes_the_type_language_and_nested_mappings(tmp_path: Path) -> None:
    from prose.lang.schema_types import schema_for

    (tmp_path / "tiny.prose.md").write_text(
        (FIXTURES / "spec" / "PS123-slot-without-contract.prose.md").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    text = (
        "pattern: tiny.prose.md\n"
        "with:\n"
        "  writer: fast\n"
        "  checker:\n"
        "    model: strong\n"
        "    schema:\n"
        "      verdict: '\"PASS\" | \"FAIL\"'\n"
        "      notes: string?\n"
        "      plan: { title: string, steps: [{ name: string, 'due date': string? }] }\n"
        "      bad: strng\n"
        "inputs:\n  task_brief: x\n"
    )
    result = load_instance(text, str(tmp_path / "inst.yaml"))
    problems = [(d.code, d.span.line, d.message) for d in result.diagnostics]
    assert [(code, line) for code, line, _ in problems] == [("PS177", 2), ("PS174", 10)]  # `editor`
    assert "did you mean `string`?" in problems[1][2]
    assert result.instance is not None
    checker = result.instance.bindings["checker"].value
    assert isinstance(checker, ModelService) and checker.output_schema is not None
    fields = checker.output_schema
    assert fields["plan"] == '{ title: string, steps: ({ name: string, "due date": string? })[] }'
    plan = schema_for(fields["plan"])
    assert plan is not None
    step = plan["properties"]["steps"]["items"]
    assert step["required"] == ["name", "due date"]
    assert schema_for(fields["verdict"]) == {"type": "string", "enum": ["PASS", "FAIL"]}


def test_a_model_service_s_keys_are_the_one_allowlist(tmp_path: Path) -> None:
    """Issue 36: the keys a model service takes are `prose.lang.services.SERVICE_KEYS`;
    the reader accepts each of them, and what the run sends as model parameters is
    among them (before, a second reader in the runtime took `temperature` and `timeout`,
    which lint refuses with PS173)."""
    from prose.lang.services import SENT_PARAMETERS, SERVICE_KEYS
    from prose.runtime.loading import from_instance_service

    assert set(SENT_PARAMETERS) <= SERVICE_KEYS["model"]
    (tmp_path / "judge.md").write_text("Be strict.", encoding="utf-8")
    pattern = (INSTANCES / "../spec/review-board.prose.md").resolve()
    text = (INSTANCES / "bad-services.yaml").read_text(encoding="utf-8")
    assert "temperature" in text and "temperature" not in SERVICE_KEYS["model"]
    instance = tmp_path / "instance.yaml"
    instance.write_text(
        f"pattern: {pattern}\nwith:\n"
        "  author: { model: fast, role: judge.md, max_tokens: 50, schema: { ok: boolean } }\n"
        "  reviewers:\n    - { model: strong, prompt: \"Be kind.\" }\n"
        "  judge: { model: strong }\n",
        encoding="utf-8")
    result = load_instance_file(instance)
    assert [d.code for d in result.diagnostics if d.code == "PS173"] == []
    assert result.instance is not None
    author = from_instance_service(result.instance.bindings["author"].value, tmp_path)
    assert dict(author.params) == {"max_tokens": 50}  # type: ignore[union-attr]
    assert set(author.params) <= set(SENT_PARAMETERS)  # type: ignore[union-attr]
