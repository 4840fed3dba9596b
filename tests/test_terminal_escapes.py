"""Text from outside reaches the terminal with its control characters escaped
(`prose.errors.printable`): a provider's error body in the progress line and the R008 error,
a `python:` callable's exception, an argument of `prose new`. An OSC sequence could set the
window title or (OSC 52) write the clipboard; a CSI one clear the screen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_server import FakeLLMServer, Status

from prose.errors import printable
from tests.conftest import run_prose
from tests.loopback import write_project

HOSTILE = "bad request \x1b]0;TITLE-PWNED\x07\x1b[2J\x1b[31mRED"
SHOWN = r"bad request \x1b]0;TITLE-PWNED\x07\x1b[2J\x1b[31mRED"


def _assert_no_control(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text, repr(text)


def test_a_providers_error_body_is_escaped_in_the_progress_line_and_the_error(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    server.enqueue("echo", Status(400, HOSTILE))
    project = write_project(tmp_path, server)
    ran = run_prose("run", "echo.prose.md", "--input", "task=hi", cwd=project)
    assert ran.code == 4, ran.stderr  # a model call failed
    _assert_no_control(ran.stderr)
    [progress] = [line for line in ran.stderr.splitlines() if line.startswith("  xx  worker")]
    assert progress.endswith(SHOWN)
    [error] = [line for line in ran.stderr.splitlines() if " R008 " in line]
    assert error.endswith(SHOWN)


def test_a_callables_exception_is_escaped(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text(
        f"def work(task: str) -> str:\n    raise RuntimeError({HOSTILE!r})\n", encoding="utf-8")
    write_project(tmp_path, FakeLLMServer())  # the pattern; the server is never started
    (tmp_path / "boom.yaml").write_text(
        "pattern: echo.prose.md\nwith:\n  worker: { python: 'boom:work' }\n"
        "inputs: { task: hi }\n", encoding="utf-8")
    ran = run_prose("run", "boom.yaml", cwd=tmp_path)
    assert ran.code == 4, ran.stderr  # the call failed
    _assert_no_control(ran.stderr)
    assert f"python: RuntimeError: {SHOWN}" in ran.stderr
    assert f"R008 the call to `worker` failed: RuntimeError: {SHOWN}" in ran.stderr


def test_an_argument_of_prose_new_is_escaped_in_its_error(tmp_path: Path) -> None:
    ran = run_prose("new", "a\x1b[31mred\x07", cwd=tmp_path)
    assert ran.code == 2, ran.stderr
    _assert_no_control(ran.stderr)
    assert r"`a\x1b[31mred\x07` is not a pattern name" in ran.stderr


@pytest.mark.parametrize(("text", "shown"), [
    ("\x1b]52;c;ZWNobw==\x07", r"\x1b]52;c;ZWNobw==\x07"),
    ("a\rb\x7f\x9bc\x00", r"a\x0db\x7f\x9bc\x00"),
    ("two\n\tlines é", "two\n\tlines é"),
])
def test_printable_escapes_control_characters_and_keeps_lines(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_a_question_asked_on_the_terminal_shows_the_runs_values_escaped() -> None:
    import asyncio
    import io

    from prose.cli.ask import TerminalAsker
    from prose.runtime.questions import TEXT_ANSWER, Question

    question = Question(
        id="c2", key="k", slot="approver", person="a clerk", may_answer=[], file="p.prose.md",
        line=3, column=1, schema=TEXT_ANSWER, asked_at="2026-12-07T12:00:00+00:00",
        messages=[{"role": "user", "content": f"## proposal\n{HOSTILE}"}])
    out = io.StringIO()
    typed = iter(["ok", ""])
    value, note = asyncio.run(TerminalAsker(out, lambda: next(typed))(question))
    assert (value, note) == ("ok", None)
    _assert_no_control(out.getvalue())
    assert f"## proposal\n{SHOWN}\n" in out.getvalue()
