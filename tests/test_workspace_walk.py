"""The workspace's own walk and layout agree with reading the folder back from disk.

`lay_out` records the manifest and the quota's base from the bytes it writes, and
`Workspace.files` walks with `os.scandir`; both are checked here against the plain
way (os.walk, resolving every path, hashing what is on disk) over generated inputs and
over folders with links in and out.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from prose.runtime.workspace import MANIFEST, Workspace, folder_size, lay_out

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
PARTS = st.from_regex(r"[a-z][a-z0-9]{0,4}", fullmatch=True)
RELATIVE = st.builds(lambda folders, leaf: "/".join([*folders, f"{leaf}.txt"]),
                     st.lists(PARTS, max_size=2), PARTS)
TEXT = st.text(max_size=40)
VALUES = st.one_of(TEXT, st.integers(), st.lists(TEXT, max_size=3),
                   st.dictionaries(RELATIVE, TEXT, min_size=1, max_size=4))


def walked(root: Path) -> list[Path]:
    """The files the walk should yield: os.walk, every path resolved and kept inside."""
    out = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            real = path.resolve()
            if real.is_relative_to(root) and real.is_file():
                out.append(path)
    return out


def on_disk(workspace: Workspace) -> dict[str, str]:
    return {workspace.relative(path): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in walked(workspace.root) if workspace.relative(path) != MANIFEST}


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(NAMES, VALUES, max_size=5))
def test_the_layout_records_what_is_on_disk(inputs: dict[str, Any]) -> None:
    workspace = lay_out(inputs)
    try:
        assert workspace.manifest == on_disk(workspace)
        assert workspace.laid_out_size == folder_size(workspace.root)
        assert workspace.changes() == {"added": [], "removed": [], "changed": []}
        assert list(workspace.files()) == walked(workspace.root)
    finally:
        workspace.remove()


def test_the_walk_follows_no_link_out_and_matches_os_walk(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not yours")
    workspace = lay_out({"task": "read me", "files": {"src/a.py": "x = 1", "b.txt": "b"}})
    try:
        root = workspace.root
        (root / "link-out.txt").symlink_to(outside / "secret.txt")
        (root / "dir-out").symlink_to(outside)
        (root / "link-in.txt").symlink_to(root / "task.txt")
        (root / "dir-in").symlink_to(root / "files")
        (root / "broken.txt").symlink_to(root / "nothing-here")
        (root / "files" / "src" / "deeper").mkdir()
        (root / "files" / "src" / "deeper" / "c.txt").write_text("c")
        found = list(workspace.files())
        assert found == walked(root)
        names = [workspace.relative(path) for path in found]
        assert "link-in.txt" in names and "files/src/deeper/c.txt" in names
        assert not any(name.startswith(("link-out", "dir-out", "dir-in", "broken"))
                       for name in names)
        assert workspace.changes()["added"] == ["files/src/deeper/c.txt", "link-in.txt"]
    finally:
        workspace.remove()
