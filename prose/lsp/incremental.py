"""Pattern files read from a document's text, reusing the last parse when it still holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prose.pattern_file import PatternFile


class ProgramCache:
    """The last `PatternFile` per path, returned again for the same text."""

    def __init__(self) -> None:
        self._last: dict[str, PatternFile] = {}

    def pattern(self, text: str, path: str) -> PatternFile:
        """The pattern file of `text` (`prose.pattern_file.pattern_from_text`)."""
        from prose.pattern_file import pattern_from_text

        last = self._last.get(path)
        if last is not None and last.text == text:
            return last
        found = self._last[path] = pattern_from_text(text, path)
        return found

    def forget(self, path: str) -> None:
        self._last.pop(path, None)
