"""`prose batch` resolves model aliases that nothing defines as `prose run` does (issue 16/19).

An instance from `prose new` binds `model: fast`; with a prose.yaml that does not
define `fast`, every row's slot takes the batch's default model, with one note on
stderr. A `--bind` to an undefined alias is an error before any row runs. The rows
go through the real Router to the loopback server of test_batch.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import test_batch
from click.testing import CliRunner
from test_batch import Stub, batch, project, results, stderr

from prose.cli.main import cli

stub = test_batch.stub  # the loopback server fixture of test_batch.py

INSTANCE = """pattern: draft-check.prose.md
with:
  drafter: { model: fast }
  checker: { model: stub }
"""


def instance_batch(tmp_path: Path, stub: Stub, *args: str) -> Any:
    project(tmp_path, stub, [{"task": f"t{i}"} for i in range(4)])
    (tmp_path / "draft-check.yaml").write_text(INSTANCE)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return CliRunner().invoke(cli, ["batch", "draft-check.yaml", "--inputs", "rows.jsonl",
                                        "--out", "out.jsonl", *args])
    finally:
        os.chdir(cwd)


def test_an_undefined_alias_takes_the_default_model_with_a_note(tmp_path: Path,
                                                                 stub: Stub) -> None:
    done = instance_batch(tmp_path, stub)
    assert done.exit_code == 0, stderr(done)
    lines = results(tmp_path / "out.jsonl")
    assert [line["status"] for line in lines] == ["ok"] * 4
    assert len(stub.received) == 8  # both slots of every row reached the server
    assert "the model alias `fast` is defined nowhere" in stderr(done)
    assert "using stub" in stderr(done)


def test_a_bind_to_an_undefined_alias_stops_before_any_row(tmp_path: Path, stub: Stub) -> None:
    done = instance_batch(tmp_path, stub, "--bind", "checker=strong")
    assert done.exit_code == 2, stderr(done)
    assert "strong" in stderr(done)
    assert stub.received == []
    assert not (tmp_path / "out.jsonl").exists() or results(tmp_path / "out.jsonl") == []


def test_the_pattern_itself_still_runs_with_its_default(tmp_path: Path, stub: Stub) -> None:
    project(tmp_path, stub, [{"task": "t0"}])
    done = batch(tmp_path, "--inputs", "rows.jsonl", "--out", "out.jsonl", "-q")
    assert done.exit_code == 0, stderr(done)
    assert "defined nowhere" not in stderr(done)
