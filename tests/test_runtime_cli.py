"""`prose run`: exit codes, output channels, and never a traceback.

The first test runs `prose run` in a new process, as a user does (the result alone
on stdout, progress on stderr); the others call the same command in this process
(`run_prose_in_process`), so LiteLLM is imported once, not once per case.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Result, run_prose_in_process

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = ROOT / "patterns"
LEAKS = ROOT / "tests" / "fixtures" / "runtime" / "leaks"
CLI = ROOT / "tests" / "fixtures" / "runtime" / "cli"
PROPOSER_ADVERSARY = PATTERNS / "proposer-adversary.prose.md"


def prose(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`prose run ARGS` in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", "from prose.cli.main import main; main()", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def run(*args: str, cwd: Path) -> Result:
    """`prose run ARGS` in this interpreter."""
    return run_prose_in_process("run", *args, cwd=cwd)


def test_json_prints_only_the_result(tmp_path: Path) -> None:
    done = prose(
        str(PATTERNS / "proposer-adversary.prose.md"),
        "--script",
        str(CLI / "proposer-adversary.yaml"),
        "--input",
        "task_brief=Design a rate limiter",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "result": {
            "proposal": "Use a token bucket per key.",
            "attack": "Shared keys defeat per-key buckets.",
        }
    }
    assert "ok  proposer" in done.stderr  # progress goes to stderr


def test_plain_run_prints_the_result_and_the_trace_path(tmp_path: Path) -> None:
    done = run(
        str(PATTERNS / "dialectic.prose.md"),
        "--script",
        str(CLI / "dialectic.yaml"),
        "--input",
        "task_brief=Is X good?",
        "--config",
        "rounds=2",
        cwd=tmp_path,
    )
    assert done.code == 0, done.stderr
    result = json.loads(done.stdout)
    assert [entry["round"] for entry in result["result"]] == [1, 2]
    assert "trace: " in done.stderr
    trace = next((tmp_path / ".prose" / "runs").glob("*/trace.jsonl"))
    assert trace.is_file()


def test_input_file(tmp_path: Path) -> None:
    (tmp_path / "brief.txt").write_text("A brief read from a file.")
    done = run(
        str(PATTERNS / "proposer-adversary.prose.md"),
        "--script",
        str(CLI / "proposer-adversary.yaml"),
        "--input-file",
        "task_brief=brief.txt",
        "--json",
        "--quiet",
        cwd=tmp_path,
    )
    assert done.code == 0, done.stderr
    trace = next((tmp_path / ".prose" / "runs").glob("*/trace.jsonl"))
    start = json.loads(trace.read_text().splitlines()[0])
    assert start["inputs"] == {"task_brief": "A brief read from a file."}
    assert done.stderr == ""


def test_library_pattern_by_name(tmp_path: Path) -> None:
    done = run(
        "proposer-adversary",
        "--script",
        str(CLI / "proposer-adversary.yaml"),
        "--input",
        "task_brief=b",
        "--json",
        cwd=tmp_path,
    )
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["result"]["proposal"] == "Use a token bucket per key."


def test_instance_file(tmp_path: Path) -> None:
    done = run(
        str(CLI / "instance.yaml"),
        "--script",
        str(CLI / "proposer-adversary.yaml"),
        "--json",
        cwd=tmp_path,
    )
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["result"]["attack"] == "Shared keys defeat per-key buckets."


def _python_binding_project(folder: Path, module: str) -> None:
    (folder / f"{module}.py").write_text(
        "def propose(task_brief):\n    return {'plan': 'computed for ' + task_brief}\n"
    )
    (folder / "run.yaml").write_text(
        f"pattern: {PATTERNS / 'proposer-adversary.prose.md'}\n"
        f"with:\n  proposer: {{python: '{module}:propose'}}\n  adversary: {{model: strong}}\n"
        "inputs:\n  task_brief: b\n"
    )


def test_instance_python_binding_stays_under_a_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The module is found on sys.path, where `python -c` puts the current folder.
    _python_binding_project(tmp_path, "run_cli_helpers")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "run_cli_helpers", raising=False)
    done = run(
        "run.yaml", "--script", str(CLI / "proposer-adversary.yaml"), "--json", cwd=tmp_path
    )
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["result"] == {
        "proposal": {"plan": "computed for b"},
        "attack": "Shared keys defeat per-key buckets.",
    }


def test_the_console_script_finds_a_python_binding_in_the_current_folder(tmp_path: Path) -> None:
    _python_binding_project(tmp_path, "helpers")
    script = Path(sys.executable).parent / "prose"
    done = subprocess.run(
        [str(script), "run", "run.yaml", "--script", str(CLI / "proposer-adversary.yaml"),
         "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180, check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["proposal"] == {"plan": "computed for b"}


def test_show_prompts_calls_no_model(tmp_path: Path) -> None:
    done = run(
        str(PATTERNS / "proposer-adversary.prose.md"),
        "--show-prompts",
        "--input",
        "task_brief=Design a rate limiter",
        cwd=tmp_path,
    )
    assert done.code == 0, done.stderr
    first_call = PROPOSER_ADVERSARY.read_text(encoding="utf-8").splitlines().index(
        "let proposal = call proposer") + 1
    assert f"=== proposer (line {first_call}," in done.stdout
    assert "## task_brief\nDesign a rate limiter" in done.stdout
    assert "## proposal\n<output of proposer>" in done.stdout
    assert not (tmp_path / ".prose").exists()


def test_lint_errors_refuse_to_run_unless_no_check(tmp_path: Path) -> None:
    leak = str(LEAKS / "never-sees-direct.prose.md")
    script = str(CLI / "leak.yaml")
    refused = run(leak, "--script", script, "--input", "task_brief=b", cwd=tmp_path)
    assert refused.code == 1
    assert "PH604" in refused.stderr and "--no-check" in refused.stderr
    stopped = run(leak, "--script", script, "--input", "task_brief=b", "--no-check", cwd=tmp_path)
    assert stopped.code == 5
    assert "R010" in stopped.stderr and "never-sees-direct.prose.md:41:16" in stopped.stderr
    trace = next((tmp_path / ".prose" / "runs").glob("*/trace.jsonl"))
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [e["slot"] for e in events if e["type"] == "call"] == ["adversary"]


def test_budget_stop_exits_3(tmp_path: Path) -> None:
    done = run(
        str(PATTERNS / "dialectic.prose.md"),
        "--script",
        str(CLI / "dialectic.yaml"),
        "--input",
        "task_brief=Is X good?",
        "--max-calls",
        "3",
        cwd=tmp_path,
    )
    assert done.code == 3
    assert "R011" in done.stderr and "call budget of 3" in done.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["missing.prose.md"], 2, "no such file"),
        (["{dialectic}", "--bogus-flag"], 2, "No such option"),
        (["{dialectic}", "--input", "novalue"], 2, "expected KEY=VALUE"),
        (["{dialectic}", "--script", "{script}"], 1, "required input `task_brief`"),
        (
            [
                "{dialectic}",
                "--script",
                "{script}",
                "--input",
                "task_brief=x",
                "--config",
                "rounds=two",
            ],
            1,
            "not `integer`",
        ),
        (
            ["{dialectic}", "--script", "{script}", "--input", "task_brief=x", "--bind", "judge=m"],
            1,
            "`judge` is not a slot",
        ),
        (["{dialectic}", "--script", "{script}", "--resume", "some-run"], 2, "no trace for run"),
        (
            [
                "{dialectic}",
                "--script",
                "{script}",
                "--input",
                "task_brief=x",
                "--config",
                "rounds=9",
            ],
            1,
            "no response left for slot `thesis`",
        ),
    ],
)
def test_usage_and_input_errors(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    filled = [
        a.format(dialectic=PATTERNS / "dialectic.prose.md", script=CLI / "dialectic.yaml")
        for a in args
    ]
    done = run(*filled, cwd=tmp_path)
    assert done.code == code, done.stderr
    assert message in done.stderr


def test_importing_the_command_or_the_runtime_does_not_import_litellm() -> None:
    code = (
        "import sys, prose.cli.run_cmd; a = 'prose.runtime' in sys.modules; import prose.runtime; "
        "print(a, 'litellm' in sys.modules, 'prose.runtime.interpreter' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "False", "True"]
