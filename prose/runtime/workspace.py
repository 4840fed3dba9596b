"""The sealed workspace of one agent call: a fresh folder holding only what the call passes.

Each input is a file (`NAME.txt` for text, `NAME.json` for other values); an input that
maps relative paths to text (a candidate's files) is laid out as those files under
`NAME/`. `manifest.sha256` lists every file's digest (as `sha256sum` writes it), so the
call's workspace can be told apart from any other. Built-in tools resolve every path
inside the folder (`resolve`: no absolute path, no `..` out, no symlink out). After the
call the folder is hashed again (`changes`) and removed unless the run keeps it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from prose.lang.manifest import is_file_map, manifest_text, safe_relative, value_text

MANIFEST = "manifest.sha256"
MAX_FILE_BYTES = 4 * 1024 * 1024  # a single laid-out file


class PathRefused(Exception):
    """A path a tool may not reach; the message says why (the tool result tells the model)."""


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(65536), b""):
            sha.update(chunk)
    return sha.hexdigest()


@dataclass
class Workspace:
    """One call's folder and the digests it was laid out with."""

    root: Path
    manifest: dict[str, str] = field(default_factory=dict)
    laid_out_size: int = 0  # bytes of the files it was laid out with (the quota's base)

    def resolve(self, relative: str) -> Path:
        """The file or folder `relative` names inside the workspace; PathRefused else."""
        text = (relative or ".").strip()
        if "\0" in text:
            raise PathRefused("the path holds a NUL byte")
        if os.path.isabs(text):
            raise PathRefused(f"`{text}` is an absolute path: paths are relative to the "
                              "workspace")
        if ".." in PurePosixPath(text).parts:
            raise PathRefused(f"`{text}` leaves the workspace (`..`)")
        target = (self.root / text).resolve()
        if target != self.root and not target.is_relative_to(self.root):
            raise PathRefused(f"`{text}` resolves outside the workspace (a symbolic link "
                              "out)")
        return target

    def files(self, under: Path | None = None) -> Iterator[Path]:
        """Every regular file inside (sorted: a folder's files, then its folders'), never
        following a link out of the folder."""
        yield from self._files(under or self.root)

    def _files(self, folder: Path) -> Iterator[Path]:
        # Walked without following links, a regular file is inside by construction: only a
        # link (to a file) needs resolving; a link to a folder is never entered, as os.walk.
        try:
            with os.scandir(folder) as found:
                entries = sorted(found, key=lambda entry: entry.name)
        except OSError:
            return
        folders = []
        for entry in entries:
            if entry.is_symlink():
                path = Path(entry.path)
                try:
                    real = path.resolve()
                except OSError:
                    continue
                if not entry.is_dir() and real.is_relative_to(self.root) and real.is_file():
                    yield path
            elif entry.is_dir(follow_symlinks=False):
                folders.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                yield Path(entry.path)
        for inner in folders:
            yield from self._files(Path(inner))

    def size(self) -> int:
        """Bytes of every file inside (links not followed): what the disk quota counts."""
        return folder_size(self.root)

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def digests(self) -> dict[str, str]:
        """The digest of every file but the manifest."""
        return {self.relative(path): _digest(path) for path in self.files()
                if self.relative(path) != MANIFEST}

    def changes(self) -> dict[str, list[str]]:
        """What changed since the layout: files added, removed and changed (empty lists: none)."""
        now = self.digests()
        before = self.manifest
        changed = sorted(p for p in set(now) & set(before) if now[p] != before[p])
        removed = sorted(set(before) - set(now))
        # The manifest is the workspace's own record of what it was given: editing it is a
        # change too (a call that rewrites its manifest could hide the others).
        manifest = self.root / MANIFEST
        if not manifest.is_file() or manifest.is_symlink():
            removed = sorted([*removed, MANIFEST])
        elif manifest.read_text(encoding="utf-8", errors="replace") != self.manifest_text():
            changed = sorted([*changed, MANIFEST])
        return {"added": sorted(set(now) - set(before)), "removed": removed,
                "changed": changed}

    def written(self, folder: str) -> tuple[dict[str, str], list[str]]:
        """The text files under `folder` (keyed by their paths inside it), and the paths of
        the files there that are not UTF-8 text or are too large (left out of the value)."""
        start = self.root / folder
        if not start.is_dir() or start.is_symlink():
            return {}, []
        files: dict[str, str] = {}
        skipped: list[str] = []
        for path in self.files(start):
            relative = path.relative_to(start).as_posix()
            try:
                data = path.read_bytes()
                if len(data) > MAX_FILE_BYTES or b"\0" in data:
                    raise ValueError(relative)
                files[relative] = data.decode("utf-8")
            except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
                skipped.append(relative)
        return files, skipped

    def manifest_sha256(self) -> str:
        return hashlib.sha256(self.manifest_text().encode()).hexdigest()

    def manifest_text(self) -> str:
        return manifest_text(self.manifest)

    def restore(self, folder: str, files: Mapping[str, Any]) -> None:
        """Make `folder` hold exactly `files` (paths inside it to text): a resumed agent's
        recorded value, written back without running what first wrote it. A path that is
        not a safe relative one, or a content that is not text, is left out."""
        start = self.root / folder
        if start.is_symlink() or start.is_file():
            start.unlink()
        shutil.rmtree(start, ignore_errors=True)
        start.mkdir(parents=True, exist_ok=True)
        for relative, text in files.items():
            if isinstance(relative, str) and isinstance(text, str) and safe_relative(relative):
                _write(start, relative, text)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def folder_size(root: Path) -> int:
    """Bytes of the regular files under `root`, never following a link."""
    total = 0
    for folder, _dirs, names in os.walk(root, followlinks=False):
        for name in names:
            try:
                found = os.lstat(os.path.join(folder, name))
            except OSError:
                continue  # removed while walking (a command still running)
            if stat.S_ISREG(found.st_mode):
                total += found.st_size
    return total


def _write(root: Path, relative: str, text: str) -> bytes:
    """Write one laid-out file; the bytes written."""
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")[:MAX_FILE_BYTES]
    target.write_bytes(data)
    return data


def lay_out(inputs: Mapping[str, Any], prefix: str = "prose-ws-") -> Workspace:
    """A fresh workspace holding `inputs` (plain values) and its manifest."""
    root = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    os.chmod(root, 0o700)
    # The manifest and the quota's base come from the bytes written, not a walk that reads
    # them back: the folder is new and private (0700) and nothing else runs in it yet.
    written: dict[str, bytes] = {}
    for name, value in inputs.items():
        if not safe_relative(name) or "/" in name:
            continue  # an input name is an identifier; anything else is not laid out
        if is_file_map(value):  # the files of `prose.lang.manifest.as_files`
            for relative, text in value.items():
                written[f"{name}/{relative}"] = _write(root, f"{name}/{relative}", text)
        else:
            relative = f"{name}.txt" if isinstance(value, str) else f"{name}.json"
            written[relative] = _write(root, relative, value_text(value))
    workspace = Workspace(root)
    workspace.manifest = {path: hashlib.sha256(data).hexdigest()
                          for path, data in written.items() if path != MANIFEST}
    manifest = workspace.manifest_text().encode("utf-8")
    (root / MANIFEST).write_bytes(manifest)
    workspace.laid_out_size = sum(len(data) for path, data in written.items()
                                  if path != MANIFEST) + len(manifest)
    return workspace
