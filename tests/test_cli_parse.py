"""`prose parse`: exit codes, messages, no tracebacks, no litellm.

A missing file, `--version` through the installed `prose` console script and the
litellm check run in a new process, as a user runs them; the other cases call the
same command in this process (`run_prose_in_process`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, run_prose, run_prose_in_process


def test_parse_patterns_library() -> None:
    result = run_prose_in_process("parse", "patterns/dialectic.prose.md", "patterns/proposer-adversary.prose.md")
    assert result.code == 0
    assert "patterns/dialectic.prose.md: 5 statements" in result.stdout


def test_parse_json_is_the_ast_dump() -> None:
    result = run_prose_in_process("parse", "--json", "patterns/proposer-adversary.prose.md")
    assert result.code == 0
    tree = json.loads(result.stdout)
    assert tree["type"] == "Program"
    assert [stmt["type"] for stmt in tree["body"]] == ["Let", "Let", "Return"]


def test_missing_file_is_exit_2() -> None:
    result = run_prose("parse", "does-not-exist.prose.md")
    assert result.code == 2
    assert "does-not-exist.prose.md: no such file" in result.stderr


def test_usage_error_is_exit_2() -> None:
    assert run_prose_in_process("parse").code == 2
    assert run_prose_in_process("parse", "--no-such-flag", "x").code == 2


def test_syntax_error_is_exit_1_with_position(tmp_path: Path) -> None:
    bad = tmp_path / "bad.prose"
    bad.write_text('let x = "abc\n', encoding="utf-8")
    result = run_prose_in_process("parse", str(bad))
    assert result.code == 1
    assert f"{bad}:1:9: string opened at 1:9 is not closed" in result.stderr


def test_empty_and_binary_files_are_input_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.prose.md"
    empty.write_text("", encoding="utf-8")
    binary = tmp_path / "binary.prose.md"
    binary.write_bytes(b"---\nname: x\n\xff\xfe\x00garbage")
    no_block = tmp_path / "noblock.prose.md"
    no_block.write_text("---\nname: x\nkind: pattern\n---\n# X\n", encoding="utf-8")
    for path, message in [
        (empty, ":1:1: the file is empty"),
        (binary, ":3:1: the file is not UTF-8 text"),
        (no_block, ":1:1: no `### Delegation` section"),
    ]:
        result = run_prose_in_process("parse", str(path))
        assert result.code == 1, path
        assert message in result.stderr


def test_the_installed_console_script_runs() -> None:
    script = Path(sys.executable).parent / "prose"
    command = str(script) if script.is_file() else shutil.which("prose")
    assert command is not None, "the `prose` console script is not installed (pip install -e .)"
    done = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0 and "prose, version" in done.stdout, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_fast_commands_do_not_import_litellm() -> None:
    code = (
        "import sys\n"
        "from prose.cli.main import main\n"
        "for args in (['parse', 'patterns/dialectic.prose.md'], ['fmt', '--check', 'patterns'],"
        " ['lint', 'patterns']):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = [m for m in ('litellm', 'openai', 'jinja2') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    assert "HEAVY []" in done.stdout, done.stdout + done.stderr
