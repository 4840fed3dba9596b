"""Hostile or broken inputs to `prose run` (issue 14.3, 14.11): every one names its file
(and line, where there is one) and exits 1 (bad content) or 2 (a path that cannot be
read, usage); never 70, which is kept for our own bugs, and never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, Result, run_prose, run_prose_in_process

DIALECTIC = ROOT / "patterns" / "dialectic.prose.md"
SCRIPT = ROOT / "examples" / "dialectic.script.yaml"
SELF_ALIAS = "slots: &a\n  thesis: [*a]\n"
BOMB = "".join(
    [
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n",
        *(
            f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]\n"
            for prev, name in zip("abcdefgh", "bcdefghi", strict=False)
        ),
    ]
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(DIALECTIC, tmp_path / "dialectic.prose.md")
    shutil.copy(SCRIPT, tmp_path / "s.yaml")
    return tmp_path


def _run(project: Path, *args: str) -> Result:
    return run_prose_in_process(
        "run", "dialectic.prose.md", "-q", "--input", "task_brief=x", *args, cwd=project
    )


def _fails(result: Result, code: int, *fragments: str) -> None:
    assert result.code == code, result.output
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


# --- input files ------------------------------------------------------------------------


def test_bad_json_in_an_input_file_names_its_line_and_column(project: Path) -> None:
    (project / "x.json").write_text('{"a": 1,\n  "b": }\n', encoding="utf-8")
    result = _run(project, "--script", "s.yaml", "--input-file", "task_brief=x.json")
    _fails(result, 1, "x.json:2:8: not valid JSON")


def test_bad_yaml_in_an_input_file_names_its_line(project: Path) -> None:
    (project / "x.yaml").write_text("a: 1\nb: [2\n", encoding="utf-8")
    result = _run(project, "--script", "s.yaml", "--input-file", "task_brief=x.yaml")
    _fails(result, 1, "x.yaml:3:1: not valid YAML")


@pytest.mark.parametrize("name", ["x.yaml", "x.json", "x.txt"])
def test_an_input_file_that_is_not_utf8_names_the_byte(project: Path, name: str) -> None:
    (project / name).write_bytes(b"a: 1\nb: \xff\n")
    result = _run(project, "--script", "s.yaml", "--input-file", f"task_brief={name}")
    _fails(result, 1, f"{name}:2:4: the file is not UTF-8 text")


def test_a_self_referencing_alias_in_an_input_file(project: Path) -> None:
    (project / "x.yaml").write_text("a: &a [*a]\n", encoding="utf-8")
    result = _run(project, "--script", "s.yaml", "--input-file", "task_brief=x.yaml")
    _fails(result, 1, "x.yaml:1:8: the alias `*a` is inside the node it names")


def test_a_text_input_file_is_read_up_to_its_bound(project: Path) -> None:
    """A text file is read up to 10 MB, not whole: `/dev/zero` as a `.txt` input filled the
    memory until the kernel killed the run."""
    (project / "zero.txt").symlink_to("/dev/zero")
    result = _run(project, "--script", "s.yaml", "--input-file", "task_brief=zero.txt")
    _fails(result, 1, "zero.txt:1:10000001: the file is longer than 10,000,000 bytes")


def test_a_missing_input_file_is_exit_2(project: Path) -> None:
    result = _run(project, "--script", "s.yaml", "--input-file", "task_brief=absent.json")
    _fails(result, 2, "absent.json: no such file")


# --- the script and the LLM config ------------------------------------------------------


@pytest.mark.parametrize("option", ["--script", "--config-file"])
def test_bad_yaml_in_a_script_or_config_names_its_line(project: Path, option: str) -> None:
    (project / "bad.yaml").write_text("slots:\n  thesis: [a\n", encoding="utf-8")
    extra = ["--script", "s.yaml"] if option == "--config-file" else []
    result = _run(project, option, "bad.yaml", *extra)
    _fails(result, 1, "bad.yaml:3:1: not valid YAML")


@pytest.mark.parametrize("option", ["--script", "--config-file"])
def test_a_binary_script_or_config_names_the_file(project: Path, option: str) -> None:
    (project / "bin.yaml").write_bytes(bytes(range(256)))
    extra = ["--script", "s.yaml"] if option == "--config-file" else []
    result = _run(project, option, "bin.yaml", *extra)
    _fails(result, 1, "bin.yaml:2:118: the file is not UTF-8 text")  # byte 128, after a newline


@pytest.mark.parametrize("option", ["--script", "--config-file"])
def test_a_self_referencing_alias_in_a_script_or_config(project: Path, option: str) -> None:
    (project / "self.yaml").write_text(SELF_ALIAS, encoding="utf-8")
    extra = ["--script", "s.yaml"] if option == "--config-file" else []
    result = _run(project, option, "self.yaml", *extra)
    _fails(result, 1, "self.yaml:2:12: the alias `*a` is inside the node it names")


@pytest.mark.parametrize("option", ["--script", "--config-file"])
def test_a_missing_script_or_config_is_exit_2(project: Path, option: str) -> None:
    result = _run(project, option, "absent.yaml")
    _fails(result, 2, "absent.yaml: no such file")


def test_a_config_setting_of_the_wrong_shape_names_its_line(project: Path) -> None:
    (project / "prose.yaml").write_text(
        "timeout_s: 30\nretries: many\n", encoding="utf-8"
    )
    result = _run(project, "--script", "s.yaml")
    _fails(result, 1, "prose.yaml:2: retries: Input should be a valid integer")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ("{routing_strategy: bogus}", "Invalid routing_strategy: 'bogus'"),
        ("{no_such_setting: 1}", "no_such_setting"),
        ("{model_group_alias: 5}", "`model_group_alias` must map alias names"),
    ],
)
def test_router_settings_litellm_refuses_are_exit_1(
    project: Path, settings: str, message: str
) -> None:
    (project / "prose.yaml").write_text(
        f"concurrency: 2\nrouter_settings: {settings}\n", encoding="utf-8"
    )
    result = _run(project, "--script", "s.yaml")
    _fails(result, 1, "prose.yaml:2: ", message)


def test_an_alias_bomb_in_the_project_config_is_refused(tmp_path: Path) -> None:
    # A real process, as a user runs it: before the bound, the secret scan of the
    # config walked the expanded billion nodes for an hour.
    shutil.copy(DIALECTIC, tmp_path / "dialectic.prose.md")
    shutil.copy(SCRIPT, tmp_path / "s.yaml")
    (tmp_path / "prose.yaml").write_text(BOMB, encoding="utf-8")
    result = run_prose(
        "run", "dialectic.prose.md", "-q", "--script", "s.yaml", "--input", "task_brief=x",
        cwd=tmp_path, timeout=60,
    )
    assert result.code == 1, result.output
    assert "prose.yaml:4:" in result.stderr
    assert "the aliases expand more than 1,000 times" in result.stderr


# --- the trace to resume ---------------------------------------------------------------


def test_a_binary_file_given_as_resume_names_the_file(project: Path) -> None:
    (project / "bin.jsonl").write_bytes(bytes(range(256)) * 4)
    result = _run(project, "--model", "openai/x", "--resume", "bin.jsonl")
    _fails(result, 1, "bin.jsonl")
    assert "error: " in result.stderr


# --- values on the command line ----------------------------------------------------------


@pytest.mark.parametrize("option", ["--input", "--config"])
def test_deeply_nested_json_on_the_command_line(project: Path, option: str) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    name = "rounds" if option == "--config" else "task_brief"
    result = run_prose_in_process(
        "run", "dialectic.prose.md", "-q", "--script", "s.yaml", option, f"{name}={deep}",
        *(["--input", "task_brief=x"] if option == "--config" else []),
        cwd=project,
    )
    if option == "--input":  # task_brief is a string: the text is kept as it is
        assert result.code == 0, result.output
        return
    _fails(result, 1, "`--config rounds`:1:101: the JSON is nested deeper than 100 levels")


# --- patterns ---------------------------------------------------------------------------


def test_an_unknown_type_in_a_slot_output_schema_is_exit_1(project: Path) -> None:
    text = DIALECTIC.read_text(encoding="utf-8")
    broken = text.replace(
        "ensures: argument for the position",
        "ensures: argument object with `claim` (strng), `evidence` (string)",
    )
    assert broken != text
    (project / "typo.prose.md").write_text(broken, encoding="utf-8")
    result = run_prose_in_process(
        "run", "typo.prose.md", "-q", "--script", "s.yaml", "--input", "task_brief=x",
        cwd=project,
    )
    _fails(result, 1, "typo.prose.md:22:14: PS127", "unknown type `strng`")


def test_an_unknown_type_in_a_call_schema_is_not_a_model_failure(project: Path) -> None:
    text = DIALECTIC.read_text(encoding="utf-8")
    broken = text.replace(
        "last_thesis = call thesis\n", 'last_thesis = call thesis\n    schema: { ok: "strng" }\n', 1
    )
    assert broken != text
    (project / "typo.prose.md").write_text(broken, encoding="utf-8")
    result = run_prose_in_process(
        "run", "typo.prose.md", "-q", "--no-check", "--script", "s.yaml",
        "--input", "task_brief=x", cwd=project,
    )
    assert result.code == 1, result.output


def test_a_missing_use_file_is_not_a_model_failure(project: Path) -> None:
    text = DIALECTIC.read_text(encoding="utf-8")
    broken = text.replace(
        "```prose\n",
        '```prose\nuse "./absent.prose.md" as helper\nlet h = call helper\n  task_brief: task_brief\n',
        1,
    )
    (project / "uses.prose.md").write_text(broken, encoding="utf-8")
    result = run_prose_in_process(
        "run", "uses.prose.md", "-q", "--script", "s.yaml", "--input", "task_brief=x",
        cwd=project,
    )
    assert result.code in (1, 2), result.output
    assert "absent.prose.md" in result.stderr


# --- what is left: memory and our own bugs ----------------------------------------------


def test_running_out_of_memory_says_so(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import prose.runtime.runner

    async def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(prose.runtime.runner, "run_pattern", exhausted)
    result = _run(project, "--script", "s.yaml")
    _fails(result, 1, "error: out of memory")


def test_an_internal_error_is_70_and_says_how_to_report_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import prose.runtime.runner

    async def broken(*args: object, **kwargs: object) -> None:
        raise TypeError("unsupported operand")

    monkeypatch.setattr(prose.runtime.runner, "run_pattern", broken)
    result = _run(project, "--script", "s.yaml")
    _fails(result, 70, "internal error", "TypeError: unsupported operand", "--debug", "report")


# --- the other readers of patterns and scripts --------------------------------------------


def test_a_config_default_nested_past_the_bound_is_a_diagnostic(project: Path) -> None:
    text = DIALECTIC.read_text(encoding="utf-8")
    deep = "[" * 30_000 + "]" * 30_000  # json.loads raised RecursionError: exit 70 from lint
    broken = text.replace("- `rounds` (integer, default: 2)", f"- `rounds` (list, default: {deep})")
    assert broken != text
    (project / "deep.prose.md").write_text(broken, encoding="utf-8")
    result = run_prose_in_process("lint", "--format", "concise", "deep.prose.md", cwd=project)
    assert result.code == 1, result.output
    assert "deep.prose.md:29:28: PS134" in result.stdout


def test_a_binary_script_of_a_pattern_test_names_the_file(project: Path) -> None:
    (project / "bin.yaml").write_bytes(bytes(range(256)))
    shutil.copy(ROOT / "examples" / "dialectic.yaml", project / "i.yaml")
    (project / "i.yaml").write_text(
        (project / "i.yaml").read_text(encoding="utf-8").replace(
            "../patterns/dialectic.prose.md", "dialectic.prose.md"
        ),
        encoding="utf-8",
    )
    (project / "t.test.yaml").write_text(
        "instance: i.yaml\nscript: bin.yaml\nexpect: {status: ok}\n", encoding="utf-8"
    )
    result = run_prose_in_process("test", "t.test.yaml", cwd=project)
    assert result.code == 1, result.output
    assert "bin.yaml:2:118: the file is not UTF-8 text" in result.output
