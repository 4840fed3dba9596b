"""The response cache, for re-runs and `--resume` (LANGUAGE.md 4.4).

A key hashes the call site, the loop and branch path, the model, the
messages, the schema and the parameters, plus the number of times the same
key has already been asked for in this run. So within one run no call is
ever answered from another call's result (two samples at one site with the
same messages get two keys); a later run asking the same things in the same
order gets the same keys and the stored answers.

`ResponseCache` stores entries as JSON files under `.prose/cache/`, secrets masked;
`ReplayCache` serves the finished calls of an interrupted run from its trace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prose.llm.types import ToolCall
from prose.runtime.errors import ResumeRefused
from prose.runtime.integrity import Damage


@dataclass(frozen=True, slots=True)
class CachedResponse:
    """What a finished call returned: enough to replay it without paying again."""

    text: str
    parsed: Any
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # An agent's turn that asked for tools (replayed from a trace only, never cached on disk).
    tool_calls: tuple[ToolCall, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "parsed": self.parsed,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CachedResponse:
        return cls(
            str(data.get("text", "")),
            data.get("parsed"),
            str(data.get("model", "")),
            int(data.get("prompt_tokens", 0)),
            int(data.get("completion_tokens", 0)),
        )


# `json.dumps(..., sort_keys=True, ensure_ascii=False, default=str)`, its encoder made once.
_KEY_BODY = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


class KeyMaker:
    """Cache keys for one run; counts repeats so no two calls of a run share a key."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def key(
        self,
        *,
        site: str,
        path: str,
        model: str,
        messages: list[dict[str, str]],
        schema: Mapping[str, Any] | None,
        params: Mapping[str, Any],
    ) -> str:
        body = _KEY_BODY.encode(
            {
                "site": site,
                "path": path,
                "model": model,
                "messages": messages,
                "schema": schema,
                "params": params,
            }
        )
        base = hashlib.sha256(body.encode("utf-8")).hexdigest()
        occurrence = self._seen.get(base, 0)
        self._seen[base] = occurrence + 1
        return base if occurrence == 0 else f"{base}.{occurrence}"


class ResponseCache:
    """Entries as `<dir>/<k[:2]>/<k>.json`; a miss or an unreadable entry is None.

    An entry is written with the run's secrets masked (`prose.llm.redact.redact`,
    as the trace is): `secrets` (say, the LLM config's) and those of the environment.
    A provider that echoes a key back does not leave it on disk here.
    """

    def __init__(self, directory: str | Path, secrets: Iterable[str] = ()) -> None:
        from prose.llm.redact import run_secrets

        self.directory = Path(directory)
        self.secrets = run_secrets(secrets)
        self.unwritable = ""  # why the cache could not be written, once it could not

    def _file(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedResponse | None:
        try:
            data = json.loads(self._file(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return CachedResponse.from_dict(data) if isinstance(data, dict) else None

    def put(self, key: str, response: CachedResponse) -> None:
        """Store an entry atomically: written to a temporary file of a name no other process
        uses, then renamed over the entry (processes sharing the folder race on nothing). A
        cache that cannot be written (a full disk, `.prose/cache` a file) is a warning, once:
        the call was paid and its answer is the run's whatever the cache does."""
        import tempfile

        from prose.llm.redact import redact

        target = self._file(key)
        entry = redact(response.to_dict(), self.secrets)
        temporary: str | None = None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp",
                                                 dir=target.parent)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(json.dumps(entry, ensure_ascii=False))
            os.replace(temporary, target)
            temporary = None
        except OSError as error:
            if not self.unwritable:
                self.unwritable = f"{self.directory}: {error.strerror or error}"
                print(f"warning: the response cache cannot be written ({self.unwritable}); "
                      "answers are not cached", file=sys.stderr)
        finally:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)


def _replay_tool(event: Mapping[str, Any], entries: dict[str, CachedResponse],
                 results: dict[tuple[str, str], tuple[str, str | None]]) -> None:
    """A `tool` event: its turn asked for it (an entry with tool calls), and its result."""
    asked = event.get("asked")
    if not isinstance(asked, Mapping) or not asked.get("key"):
        return
    key, ident = str(asked["key"]), str(asked.get("id") or "")
    call = ToolCall(ident, str(asked.get("name") or ""), str(asked.get("arguments") or "{}"))
    turn = entries.get(key)
    if turn is None or not turn.tool_calls or turn.parsed is not None:
        turn = CachedResponse("", None, str(asked.get("model") or ""))
    if all(made.id != ident for made in turn.tool_calls):
        entries[key] = dataclasses.replace(turn, tool_calls=(*turn.tool_calls, call))
    error = event.get("error")
    results[(key, ident)] = (str(event.get("output") or ""),
                             str(error) if error is not None else None)


class ReplayCache:
    """The successful calls and judgements of an earlier run's trace, by key (read-only)."""

    def __init__(self, entries: Mapping[str, CachedResponse]) -> None:
        self.entries = dict(entries)
        self.damage: Damage | None = None  # where a forced replay stopped
        # An agent's finished tool calls: (the asking turn's key, tool call id) -> (output,
        # error), replayed instead of running the tool again (docs/agents.md).
        self.tool_results: dict[tuple[str, str], tuple[str, str | None]] = {}

    def tool_result(self, key: str, call_id: str) -> tuple[str, str | None] | None:
        """The recorded result of tool call `call_id` of the turn `key`, if the trace has it."""
        return self.tool_results.get((key, call_id))

    @classmethod
    def from_trace(cls, path: str | Path, *, force: bool = False) -> ReplayCache:
        """The answers a trace vouches for (`prose.runtime.integrity`).

        A damaged trace is refused (`ResumeRefused`, naming its first bad line),
        unless `force`: then only the lines the chain still vouches for are replayed
        (`Damage.trusted`: not the damaged line, nor the line before a broken link), and
        `damage` says where it was. Raises OSError when the file cannot be read.
        """
        from prose.runtime.integrity import check_trace

        checked = check_trace(path)
        if checked.damage is not None and not force:
            raise ResumeRefused(
                f"{path}:{checked.damage.line}: the trace to resume is damaged: "
                f"{checked.damage.reason}; nothing is replayed from it (`--resume ... --force` "
                f"replays its first {checked.damage.trusted} line(s) only)"
            )
        entries: dict[str, CachedResponse] = {}
        results: dict[tuple[str, str], tuple[str, str | None]] = {}
        for event in checked.events:
            if event.get("type") == "tool":
                _replay_tool(event, entries, results)
                continue
            key = event.get("key")
            if not key or event.get("error") is not None:
                continue
            if event.get("type") == "call":
                output = event.get("output")
                text = output if isinstance(output, str) else json.dumps(output)
                parsed = None if isinstance(output, str) else output
                usage = event.get("usage") or {}
                entries[key] = CachedResponse(
                    text,
                    parsed,
                    str(event.get("model") or ""),
                    int(usage.get("prompt_tokens", 0)),
                    int(usage.get("completion_tokens", 0)),
                )
            elif event.get("type") == "judge":
                decision = event.get("decision")
                entries[key] = CachedResponse(
                    json.dumps(decision),
                    {"decision": decision, "reason": event.get("reason")},
                    str(event.get("model") or ""),
                )
        replay = cls(entries)
        replay.damage = checked.damage
        replay.tool_results = results
        return replay

    def get(self, key: str) -> CachedResponse | None:
        return self.entries.get(key)

    def put(self, key: str, response: CachedResponse) -> None:
        """Replays are read-only; new answers go to the run's own trace."""
