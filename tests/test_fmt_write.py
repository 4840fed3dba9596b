"""`prose fmt` rewrites a file whole or not at all (a real `prose fmt` process).

A write that fails (the disk full, a file-size limit) used to leave the file cut at the
point the write stopped; now the formatted text goes to a temporary file beside it first
(`prose.files.write_whole`), so the file is either as it was or formatted. Links are
written through, hard links stay one file, and permissions are kept.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _unformatted(folder: Path) -> Path:
    text = (ROOT / "patterns" / "worker-critic.prose.md").read_text(encoding="utf-8")
    assert "\n  result = call worker" in text
    path = folder / "full.prose.md"
    path.write_text(text.replace("\n  result = call worker", "\n  result   =   call worker"),
                    encoding="utf-8")
    return path


def _fmt(path: Path, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def small_files() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-c", "from prose.cli.main import main; main()",
                           "fmt", path.name], cwd=path.parent, capture_output=True, text=True,
                          timeout=120, preexec_fn=small_files)


def test_a_write_that_fails_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = _unformatted(tmp_path)
    before = path.read_bytes()
    done = _fmt(path, limit=len(before) // 2)  # no file may grow past half of it
    assert done.returncode == 2, done.stderr
    assert "cannot write" in done.stderr and "Traceback" not in done.stderr
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full.prose.md"]  # no temporary left
    assert _fmt(path).returncode == 0 and path.read_bytes() != before  # it did need formatting


def test_links_hard_links_and_permissions_are_kept(tmp_path: Path) -> None:
    path = _unformatted(tmp_path)
    path.chmod(0o640)
    link = tmp_path / "link.prose.md"
    link.symlink_to(path.name)
    done = _fmt(link)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and "result   =" not in path.read_text(encoding="utf-8")
    assert path.stat().st_mode & 0o777 == 0o640

    twin = tmp_path / "twin.prose.md"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "\n  result = call worker", "\n  result   =   call worker"), encoding="utf-8")
    os.link(path, twin)
    assert _fmt(twin).returncode == 0
    assert os.path.samefile(path, twin) and "result   =" not in path.read_text(encoding="utf-8")
