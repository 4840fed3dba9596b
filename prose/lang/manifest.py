"""What a value is as files, and the digest of their manifest: one rule for the sealed
workspace (`prose.runtime.workspace`), the call event's record of what an agent read
(`agent.inputs_sha256`) and the built-in `digest(x)` a program or an invariant computes.

Seed 002 binds each review to the candidate's manifest digest: "Generate
`manifest.sha256` ... use that value as the candidate digest", and "Both contain valid
`DONE` verdicts for the current `vN` and identical digest". A workspace lays an input
out as files: a map of relative paths to text as those files, any other text as one
file, any other value as its JSON. The manifest lists each file's SHA-256 and path as
`sha256sum` writes them, sorted by path; the digest is the SHA-256 of that text. So a
gate that records `digest(candidate)` with each review records the digest of the files
the reviewer's workspace held under `candidate/`, and two reviews of one digest are
two reviews of the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

# The path a value that is not a map of files is listed under in its own manifest.
WHOLE_VALUE = "value"


def safe_relative(path: str) -> bool:
    """A relative POSIX path with no `..`, no empty or absolute part."""
    pure = PurePosixPath(path)
    return (bool(path) and not pure.is_absolute() and "\\" not in path and "\0" not in path
            and all(part not in ("..", "") for part in pure.parts))


def is_file_map(value: Any) -> bool:
    """Whether a value is a map of relative paths to text contents (laid out as files)."""
    if not isinstance(value, Mapping) or not value:
        return False
    return all(isinstance(key, str) and isinstance(text, str) and safe_relative(key)
               and ("." in key or "/" in key) for key, text in value.items())


def value_text(value: Any) -> str:
    """The text of a value laid out as one file: a string as itself, else its JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def as_files(value: Any) -> dict[str, str]:
    """The files a value is laid out as, by their paths inside its place."""
    if is_file_map(value):
        return {str(path): str(text) for path, text in value.items()}
    return {WHOLE_VALUE: value_text(value)}


def manifest_text(digests: Mapping[str, str]) -> str:
    """A manifest as `sha256sum` writes it: one `DIGEST  PATH` line per file, by path."""
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(digests.items()))


def value_digest(value: Any) -> str:
    """The SHA-256 of the manifest of the files `value` is laid out as (see the module)."""
    digests = {path: hashlib.sha256(text.encode("utf-8")).hexdigest()
               for path, text in as_files(value).items()}
    return hashlib.sha256(manifest_text(digests).encode("utf-8")).hexdigest()
