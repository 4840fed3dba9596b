"""Issue 19, a newcomer's first hour: one regression test per item found.

Scaffolds run as written (undefined model aliases), files are validated strictly
(instance keys, `--input` for an input the instance leaves out, script and `calls:`
keys), typos get a did-you-mean at the typo, and the smaller things (Ctrl-C, colour,
`--help`'s exit codes, the dialectic's result, the ledger's loop numbering, PS174).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prose.cli.model_aliases import resolve_aliases, undefined_aliases
from prose.errors import ProseSyntaxError
from prose.llm.config import LLMConfig
from prose.llm.resolve import UndefinedAliasError, is_undefined_alias
from prose.runtime.services import ModelService, PatternService
from prose.spec import load_instance
from prose.spelling import closest, did_you_mean
from prose.syntax.parser import parse_program
from tests.conftest import ROOT, run_prose_in_process
from tests.llm_server import Delay, FakeLLMServer, Reply
from tests.loopback import ctrl_c_as_in_a_terminal


def _known(name: str) -> bool:  # what LiteLLM knows, without importing it
    return name in {"gpt-4o-mini"}


@pytest.fixture
def scaffold(tmp_path: Path) -> Path:
    result = run_prose_in_process("new", "summarise-review", "--dir", ".", cwd=tmp_path)
    assert result.code == 0, result.output
    return tmp_path


# --- model aliases nothing defines ----------------------------------------------------


def test_an_alias_is_undefined_only_when_nothing_names_it() -> None:
    config = LLMConfig.from_mapping({"model_list": [
        {"model_name": "fast", "litellm_params": {"model": "openai/gpt-4o-mini"}}]})
    assert is_undefined_alias("strong", config, knows=_known)
    assert not is_undefined_alias("fast", config, knows=_known)  # prose.yaml defines it
    assert not is_undefined_alias("openai/whatever", None, knows=_known)  # a provider prefix
    assert not is_undefined_alias("gpt-4o-mini", None, knows=_known)  # LiteLLM knows it


def test_undefined_aliases_take_the_default_but_a_bind_and_a_defined_alias_stay() -> None:
    config = LLMConfig.from_mapping({"model_list": [
        {"model_name": "fast", "litellm_params": {"model": "openai/gpt-4o-mini"}}]})
    bindings = {
        "worker": ModelService("fast"),
        "critic": ModelService("strong", role="Be strict."),
        "panel": [ModelService("strong"), ModelService("gpt-4o-mini")],
        "inner": PatternService("p.prose.md", bindings={"judge": ModelService("strong")}),
    }
    assert undefined_aliases(bindings, config, knows=_known) == {
        "strong": ["critic", "panel", "inner.judge"]}
    resolved, replaced = resolve_aliases(bindings, config, "openai/x", knows=_known)
    assert replaced == {"strong": ["critic", "panel", "inner.judge"]}
    assert resolved["worker"] == ModelService("fast")
    assert resolved["critic"] == ModelService("openai/x", role="Be strict.")
    assert resolved["panel"] == [ModelService("openai/x"), ModelService("gpt-4o-mini")]
    assert resolved["inner"].bindings == {"judge": ModelService("openai/x")}
    with pytest.raises(UndefinedAliasError, match="by --bind"):
        resolve_aliases({"worker": ModelService("strong")}, config, "openai/x",
                        explicit=frozenset({"worker"}), knows=_known)


def test_an_undefined_alias_with_no_default_is_our_own_error_naming_it(
    scaffold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As on a machine without the `local` extra: no embedded model to fall back on.
    monkeypatch.setattr("prose.llm.resolve.embedded_model_available", lambda: False)
    monkeypatch.delenv("PROSE_MODEL", raising=False)
    result = run_prose_in_process("run", "examples/summarise-review.yaml", cwd=scaffold)
    assert result.code == 2
    assert "LLM Provider NOT provided" not in result.output
    assert "the model aliases `fast` (bound to `worker`), `strong` (bound to `critic`)" in (
        result.stderr)
    for way in ("model_list", "--bind worker=", "--model MODEL", "$PROSE_MODEL", "--script"):
        assert way in result.stderr


def test_prose_model_applies_to_undefined_aliases(scaffold: Path) -> None:
    with FakeLLMServer() as server:
        server.enqueue("gpt-4o-mini", Reply("A draft."),
                       Reply('{"issues": [], "no_issues_found": true}'))
        result = run_prose_in_process(
            "run", "examples/summarise-review.yaml", cwd=scaffold,
            env={"PROSE_MODEL": "openai/gpt-4o-mini", "OPENAI_API_BASE": server.base_url,
                 "OPENAI_API_KEY": "sk-loopback"})
        assert result.code == 0, result.output
        assert "using openai/gpt-4o-mini (from $PROSE_MODEL)" in result.stderr
        assert server.models_called() == ["gpt-4o-mini", "gpt-4o-mini"]


def test_a_bind_to_an_undefined_alias_is_refused_before_any_call(scaffold: Path) -> None:
    result = run_prose_in_process("run", "examples/summarise-review.yaml", "--model",
                                  "openai/gpt-4o-mini", "--bind", "worker=fasst", cwd=scaffold)
    assert result.code == 2
    assert "the model alias `fasst` (bound to `worker`) by --bind is defined nowhere" in (
        result.stderr)


# --- instance files -------------------------------------------------------------------


def _instance(tmp_path: Path, text: str) -> list[tuple[str, str, int, int, str]]:
    pattern = ROOT / "patterns" / "dialectic.prose.md"
    path = tmp_path / "i.yaml"
    path.write_text(text.replace("PATTERN", str(pattern)))
    result = load_instance(path.read_text(), str(path))
    return [(d.code, d.severity.value, d.span.line, d.span.column, d.message)
            for d in result.diagnostics]


def test_a_misspelt_instance_key_is_an_error_at_its_line_with_the_likely_key(
    tmp_path: Path,
) -> None:
    found = _instance(tmp_path, "pattern: PATTERN\nwith:\n  thesis: {model: a}\n"
                      "  antithesis: {model: b}\nconfg:\n  rounds: 1\ninputs: {task_brief: x}\n")
    assert found == [("PS173", "error", 5, 1,
                      "unknown key `confg` in the instance file; did you mean `config`?")]


def test_input_for_inputs_is_reported_at_input_not_at_pattern(tmp_path: Path) -> None:
    found = _instance(tmp_path, "pattern: PATTERN\nwith:\n  thesis: {model: a}\n"
                      "  antithesis: {model: b}\ninput:\n  task_brief: x\n")
    assert found == [("PS173", "error", 5, 1,
                      "unknown key `input` in the instance file; did you mean `inputs`?")]


def test_a_service_with_a_misspelt_kind_names_the_key(tmp_path: Path) -> None:
    found = _instance(tmp_path, "pattern: PATTERN\nwith:\n  thesis: {modle: a}\n"
                      "  antithesis: {model: b}\ninputs: {task_brief: x}\n")
    codes = [(code, line, message) for code, _, line, _, message in found]
    assert ("PS174", 3, "the binding of `thesis` does not say what answers the slot: it has "
            "no `model:`, `pattern:`, `python:` or `person:`") in codes
    assert any(code == "PS173" and "`modle`" in message and "did you mean `model`?" in message
               for code, _, message in codes)
    assert not any("service kind" in message for *_, message in codes)  # the old jargon


def test_a_misspelt_slot_binding_suggests_the_slot(tmp_path: Path) -> None:
    found = _instance(tmp_path, "pattern: PATTERN\nwith:\n  thesis: {model: a}\n"
                      "  antitesis: {model: b}\ninputs: {task_brief: x}\n")
    assert any(code == "PS176" and message.endswith("did you mean `antithesis`?")
               for code, _, _, _, message in found)


def test_input_supplies_an_input_the_instance_leaves_out(scaffold: Path) -> None:
    instance = scaffold / "examples" / "summarise-review.yaml"
    text = instance.read_text()
    instance.write_text(text[: text.index("inputs:")])
    script = "examples/summarise-review.script.yaml"
    result = run_prose_in_process("run", str(instance), "--script", script, "--input",
                                  "task_brief=Summarise it.", "--json", cwd=scaffold)
    assert result.code == 0, result.output
    missing = run_prose_in_process("run", str(instance), "--script", script, cwd=scaffold)
    assert missing.code == 1
    assert "required input `task_brief` is not supplied" in missing.stderr


# --- script keys and test `calls:` ----------------------------------------------------


def test_a_misspelt_script_key_is_named_with_the_slot(scaffold: Path) -> None:
    script = scaffold / "s.yaml"
    script.write_text("slots:\n  wroker: [a]\n  critic: [{issues: [], no_issues_found: true}]\n")
    result = run_prose_in_process("run", "examples/summarise-review.yaml", "--script",
                                  str(script), cwd=scaffold)
    assert result.code == 1
    assert "the script answers `wroker`, which is not a slot of this pattern; did you mean " \
           "`worker`?" in result.stderr
    assert "no response left" not in result.stderr


def test_a_misspelt_calls_key_in_a_test_is_named_with_the_slot(scaffold: Path) -> None:
    test = scaffold / "examples" / "summarise-review.test.yaml"
    test.write_text(test.read_text().replace("worker: 2", "wroker: 2"))
    result = run_prose_in_process("test", str(test), cwd=scaffold)
    assert result.code == 1
    assert "`calls: {wroker: ...}` names no slot of the pattern; did you mean `worker`?" in (
        result.stdout)
    assert "called 0 time(s)" not in result.stdout


def test_a_scripted_reply_that_fails_its_schema_says_so(scaffold: Path) -> None:
    script = scaffold / "s.yaml"
    script.write_text("slots:\n  worker: [a]\n  critic: [{issues: none, no_issues_found: yes}]\n")
    result = run_prose_in_process("run", "examples/summarise-review.yaml", "--script",
                                  str(script), cwd=scaffold)
    assert result.code == 1
    assert f"the scripted reply `slots.critic[0]` in {script} failed the call's schema: " \
        "$.issues: expected array" in result.stderr
    assert "to test the re-ask, write it as `{$invalid: ...}`" in result.stderr


def test_a_reply_marked_invalid_is_re_asked_and_the_re_ask_runs_out_says_so(
        scaffold: Path) -> None:
    script = scaffold / "s.yaml"
    script.write_text("slots:\n  worker: [a]\n"
                      "  critic: [{$invalid: {issues: none, no_issues_found: yes}}]\n")
    result = run_prose_in_process("run", "examples/summarise-review.yaml", "--script",
                                  str(script), cwd=scaffold)
    assert result.code == 1
    assert "the scripted reply for `critic` failed its schema: $.issues: expected array" in (
        result.stderr)
    assert "the re-ask after it found no response left in the script" in result.stderr


def test_a_nested_slot_scripted_under_its_own_name_is_told_its_key() -> None:
    from prose.llm.errors import ScriptFormatError
    from prose.llm.script import Script, check_script_slots

    script = Script.from_mapping({"slots": {"critic": ["x"]}})
    with pytest.raises(ScriptFormatError, match=r"nested as `review`: its key is `review.critic`"):
        check_script_slots(script, ["review", "author"], {"review": ["worker", "critic"]})
    check_script_slots(Script.from_mapping({"slots": {"review.critic": ["x"]}}),
                       ["review", "author"], {"review": ["worker", "critic"]})


def test_running_out_in_a_nested_pattern_names_the_script_key() -> None:
    from prose.llm.errors import ScriptExhaustedError
    from prose.llm.script import exhausted_message

    error = ScriptExhaustedError("slot:review.critic#ticket-3")
    assert exhausted_message(error, "critic") == (
        "the script has no response left for slot `critic`: the script's key for it is "
        "`review.critic`")
    plain = ScriptExhaustedError("slot:critic")
    assert exhausted_message(plain, "critic") == "the script has no response left for slot `critic`"


# --- typos ----------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "line", "column", "message"), [
    ("let d = null\nloop until done (max: 3):\n  cal writer\n    brief: x\n", 3, 3,
     "unknown statement `cal`; did you mean `call`?"),
    ("lopo until done (max: 3):\n  x = call writer\n", 1, 1,
     "unknown statement `lopo`; did you mean `loop`?"),
    ("let x = 1\nretrun x\n", 2, 1, "unknown statement `retrun`; did you mean `return`?"),
    ("prallel for x in xs:\n  call w\n", 1, 1,
     "unknown statement `prallel`; did you mean `parallel`?"),
])
def test_a_misspelt_keyword_is_reported_at_the_typo(
    source: str, line: int, column: int, message: str
) -> None:
    with pytest.raises(ProseSyntaxError) as raised:
        parse_program(source, "t.prose")
    problem = raised.value.problems[0]
    assert (problem.span.line, problem.span.column, problem.message) == (line, column, message)


def test_a_name_that_is_not_close_to_a_keyword_keeps_the_parser_message() -> None:
    with pytest.raises(ProseSyntaxError) as raised:
        parse_program("draft writer\n", "t.prose")
    assert "did you mean" not in raised.value.problems[0].message


def test_an_undefined_name_gets_the_likely_name(tmp_path: Path) -> None:
    text = (ROOT / "patterns" / "dialectic.prose.md").read_text()
    path = tmp_path / "d.prose.md"
    path.write_text(text.replace("prior_thesis: last_thesis", "prior_thesis: last_thesiss"))
    result = run_prose_in_process("lint", "--format", "concise", str(path))
    assert "PN101 undefined name `last_thesiss`; did you mean `last_thesis`?" in result.stdout


def test_closest_takes_swaps_and_case_and_refuses_far_words() -> None:
    assert closest("lopo", ["loop", "let"]) == "loop"
    assert closest("Red-Team", ["red_team", "blue_team"]) == "red_team"
    assert closest("feeback", ["feedback", "draft"]) == "feedback"
    assert closest("zzz", ["loop", "call"]) is None
    assert did_you_mean("zzz", ["loop"]) == ""


# --- the smaller things ---------------------------------------------------------------


def test_help_lists_every_exit_code_a_command_uses() -> None:
    from prose.runtime import errors

    shown = run_prose_in_process("--help").stdout
    codes = [getattr(errors, name) for name in dir(errors) if name.startswith("EXIT_")]
    for code in [*codes, 70, 130, 143]:
        assert f"\n    {code} " in shown, code


def test_the_dialectic_returns_its_exchange_once(tmp_path: Path) -> None:
    result = run_prose_in_process(
        "run", "examples/dialectic.yaml", "--script", "examples/dialectic.script.yaml",
        "--json", "--trace", str(tmp_path / "t.jsonl"))
    assert result.code == 0, result.output
    assert result.stdout.count('"round": 1') == 1
    assert list(__import__("json").loads(result.stdout)) == ["result"]


def test_the_ledger_numbers_rounds_as_the_language_does() -> None:
    from prose.ledger.stats import loop_words

    assert loop_words("/loop@60:3#0") == "`loop` at 60:3 round 1"
    assert loop_words("/repeat@5:1#2/for@7:3#0") == "`repeat` at 5:1 round 3, `for` at 7:3 item 0"
    assert loop_words("") == "top level"


def test_an_exported_ledger_shows_rounds_from_1(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    ran = run_prose_in_process("run", "examples/dialectic.yaml", "--script",
                               "examples/dialectic.script.yaml", "--trace", str(trace), "-q")
    assert ran.code == 0, ran.output
    exported = run_prose_in_process("export", str(trace), str(tmp_path / "ledger"))
    assert exported.code == 0, exported.output
    summary = next((tmp_path / "ledger").glob("*.md")).read_text()
    index = (tmp_path / "ledger" / "README.md").read_text() if (
        tmp_path / "ledger" / "README.md").is_file() else summary
    assert "round 1" in index and "round 2" in index and "round 0" not in index


def test_colour_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    from prose.diagnostics.render_text import paint, wants_color

    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert wants_color(Terminal())  # type: ignore[arg-type]
    assert not wants_color(open(os.devnull, "w"))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color(Terminal())  # type: ignore[arg-type]
    assert paint("error", "error", True) == "\x1b[1;31merror\x1b[0m"
    assert paint("error", "error", False) == "error"


def test_a_run_error_is_coloured_when_forced_and_plain_otherwise(scaffold: Path) -> None:
    script = scaffold / "s.yaml"
    script.write_text("slots:\n  worker: [a]\n")
    args = ("run", "examples/summarise-review.yaml", "--script", str(script), "-q")
    coloured = run_prose_in_process(*args, cwd=scaffold, env={"FORCE_COLOR": "1"})
    plain = run_prose_in_process(*args, cwd=scaffold, env={"NO_COLOR": "1"})
    assert coloured.code == plain.code == 1
    assert "\x1b[" in coloured.stderr and "\x1b[" not in plain.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_prints_the_run_id_the_trace_and_the_resume_command(scaffold: Path) -> None:
    with FakeLLMServer() as server:
        server.enqueue("gpt-4o-mini", Delay(60))
        env = {**os.environ, "OPENAI_API_BASE": server.base_url, "OPENAI_API_KEY": "sk-x",
               "PROSE_MODEL": "openai/gpt-4o-mini"}
        process = subprocess.Popen(
            [sys.executable, "-c", "from prose.cli.main import main; main()", "run",
             "examples/summarise-review.yaml"],
            cwd=scaffold, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=ctrl_c_as_in_a_terminal)
        deadline = time.monotonic() + 90
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.requests, "the run never sent its first call"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    run_id = next(p.name for p in (scaffold / ".prose" / "runs").iterdir())
    assert f"interrupted: run {run_id}; the trace keeps every finished call: " \
           f".prose/runs/{run_id}/trace.jsonl" in stderr
    assert f"resume: prose run examples/summarise-review.yaml --resume {run_id}" in stderr


def test_a_script_may_answer_sessions_under_their_names() -> None:
    # Sessions (`session "..."`, an agent's sessions) are scripted under their names:
    # the script-key check knows them (prose.syntax.walk.session_names).
    fixtures = ROOT / "tests" / "fixtures" / "prosescript"
    result = run_prose_in_process(
        "run", str(fixtures / "every-construct.prose.md"), "--script",
        str(fixtures / "every-construct.script.yaml"), "--input", "subject=tides",
        "--input", 'claims=["moon", "wind", "sun"]', "--config", "max_claims=2", "-q", "--json")
    assert result.code == 0, result.output


def test_lint_prints_a_leak_path_compactly_and_in_full_with_verbose(tmp_path: Path) -> None:
    text = (ROOT / "patterns" / "proposer-adversary.prose.md").read_text()
    leak = ('\nlet summary = "Attack: {attack}"\nlet again = call proposer\n'
            "  task_brief: summary\n\nreturn { result")
    assert "\nreturn { result" in text
    path = tmp_path / "leak.prose.md"
    path.write_text(text.replace("\nreturn { result", leak, 1))
    compact = run_prose_in_process("lint", str(path), env={"NO_COLOR": "1"})
    verbose = run_prose_in_process("lint", "--verbose", str(path), env={"NO_COLOR": "1"})
    assert compact.code == verbose.code == 1
    notes = [line for line in compact.stdout.splitlines() if line.startswith("  = note: ")]
    assert len(notes) >= 4  # the leak's path, one line per step
    assert len(verbose.stdout.splitlines()) >= len(compact.stdout.splitlines()) + 3 * len(notes)
    after_note = compact.stdout.split(notes[0], 1)[1].lstrip("\n")
    assert after_note.startswith(("  = note: ", "  = help: ", "\n")) or not after_note.strip()
