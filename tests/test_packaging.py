"""The wheel ships the grammar and the pattern library and works without the checkout."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_wheel_parses_a_pattern_without_the_checkout(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True,
    )
    wheel = next(wheels.glob("prose_patterns-*.whl"))
    env_dir = tmp_path / "env"
    # No pip in the new environment (ensurepip costs seconds): the test's own pip installs
    # into it (`pip --python`).
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    python = env_dir / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                    "-q", str(wheel)], check=True, capture_output=True)
    # The dependencies come from the environment running the tests; a path in
    # a .pth file does not process that folder's own .pth files, so the
    # editable checkout of prose stays invisible.
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = (
        "import prose, prose.resources as r\n"
        "from prose.syntax import parse\n"
        "assert '_data' in str(r.grammar_file()), r.grammar_file()\n"
        "path = r.patterns_dir() / 'dialectic.prose.md'\n"
        "program = parse(path.read_text(), str(path))\n"
        "print(prose.__file__, len(program.body))\n"
    )
    done = subprocess.run([str(python), "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    location, statements = done.stdout.split()
    assert str(env_dir) in location and statements == "5"
