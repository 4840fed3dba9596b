"""`digest(x)` (prose.lang.manifest): the manifest digest of the files a value is laid out
as, the same for the built-in, the workspace a call gets (real files) and the call event's
`agent.inputs_sha256`."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from prose.lang.manifest import value_digest
from prose.runtime.builtins import call_builtin
from prose.runtime.values import plain, wrap
from prose.runtime.workspace import MANIFEST, lay_out

REPO = {"inventory.py": "def f():\n    return 1\n", "tests/test_inventory.py": "x = 1\n"}


@pytest.mark.parametrize("value", [REPO, "a text", {"verdict": "DONE"}, [1, 2]])
def test_the_digest_is_the_manifest_of_the_files_the_workspace_holds(value: Any) -> None:
    workspace = lay_out({"candidate": value})
    try:
        lines = (workspace.root / MANIFEST).read_text(encoding="utf-8").splitlines()
        if isinstance(value, dict) and "inventory.py" in value:
            own = "".join(line.replace("  candidate/", "  ") + "\n" for line in lines)
        else:  # one file, listed under `value` in the value's own manifest
            digest = lines[0].split()[0]
            own = f"{digest}  value\n"
        assert value_digest(value) == hashlib.sha256(own.encode()).hexdigest()
    finally:
        workspace.remove()


def test_the_built_in_gives_the_same_digest() -> None:
    steps: list[int] = []
    got = call_builtin("digest", [wrap(REPO)], {}, steps.append)
    assert plain(got) == value_digest(REPO) and len(plain(got)) == 64 and steps
    changed = {**REPO, "inventory.py": "def f():\n    return 2\n"}
    assert plain(call_builtin("digest", [wrap(changed)], {}, steps.append)) != plain(got)
