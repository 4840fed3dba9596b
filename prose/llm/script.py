"""A script: queues of canned responses, one per key, for the scripted model.

A `Script` holds a queue of responses per key; the interpreter uses keys like
`slot:proposer`, `slot:reviewers[1]`, `condition:<text>`, `choice:<text>`, and
asks for model `prose-script/<key>`. `script_provider.py` serves those models
through LiteLLM's Router; `script_client.py` builds a client that routes them.

A response is served as follows:
- a string is the reply text, as is (a YAML or JSON-looking string stays a string);
- a mapping, list, number, boolean or null is sent as JSON text and the
  client returns it parsed (`ChatResponse.parsed`);
- `{"$error": "text"}` fails that call with `ProviderError(message=text)`;
- `{"$invalid": reply}` sends `reply` (text or JSON) knowing it fails the call's schema:
  the re-ask that follows takes the next response. A reply *not* so marked that fails
  its schema is a mistake in the script: the re-ask raises `ScriptedReplyError`, naming
  the entry (`slots.critic[0]`), instead of silently taking the next response, which
  belongs to the next call;
- `{"tool": NAME, "args": {...}}` is a tool call (an agent's turn, docs/agents.md), and
  `{"tool_calls": [{"tool": NAME, "args": {...}}, ...]}` several at once; the agent runs
  the tools for real and its next turn takes the next response.
  It is retryable, so it is retried only when the request allows retries,
  and each attempt takes the next response.
Running out raises `ScriptExhaustedError` naming the key. A key with an
index (`slot:reviewers[1]`) that has no queue of its own uses the queue of
the key without it (`slot:reviewers`).

Token usage is a deterministic stand-in for a tokenizer: the number of
whitespace-separated words (`len(text.split())`) of all message contents
(prompt) and of the reply text (completion).
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prose.bounded import MAX_TEXT, load_yaml
from prose.errors import ProseSyntaxError
from prose.files import read_text
from prose.llm.decisions import choice_answer, condition_answer
from prose.llm.errors import (
    ProviderError,
    ScriptedReplyError,
    ScriptExhaustedError,
    ScriptFormatError,
)
from prose.llm.schema import REASK_OPENING
from prose.spelling import did_you_mean

SCRIPT_PROVIDER = "prose-script"
ERROR_KEY = "$error"
INVALID_KEY = "$invalid"
_INDEX = re.compile(r"\[[^\[\]]+\]$")  # a list service `[0]` or a map entry `[billing]`
_EMPHASIS = re.compile(r"\*{2,3}")
_SECTIONS = ("slots", "conditions", "choices", "people")


def script_model(key: str) -> str:
    """The model name that routes a call to the script's queue `key`."""
    return f"{SCRIPT_PROVIDER}/{key}"


def count_tokens(text: str) -> int:
    """The scripted model's token count: whitespace-separated words."""
    return len(text.split())


def slot_key(name: str, index: int | None = None) -> str:
    return f"slot:{name}" if index is None else f"slot:{name}[{index}]"


def person_key(name: str) -> str:
    """The queue of a slot bound to a person (`people:` in a script, docs/people.md)."""
    return f"person:{name}"


def condition_key(text: str) -> str:
    """`condition:<text>`, the text trimmed and without `**`/`***` markers."""
    return f"condition:{_EMPHASIS.sub('', text).strip()}"


def choice_key(text: str) -> str:
    return f"choice:{_EMPHASIS.sub('', text).strip()}"


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One call the scripted model answered (or failed): for tests to inspect."""

    key: str
    messages: tuple[tuple[str, str], ...]
    response: Any


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    text: str
    structured: bool
    prompt_tokens: int
    completion_tokens: int
    # (name, JSON arguments) of each tool call the response asks for.
    tool_calls: tuple[tuple[str, str], ...] = ()


TOOL_KEYS = (frozenset({"tool"}), frozenset({"tool", "args"}))


def scripted_tool_calls(response: Any) -> tuple[tuple[str, str], ...] | None:
    """The tool calls a scripted response asks for, or None when it is an answer."""
    if not isinstance(response, Mapping):
        return None
    if set(response) == {"tool_calls"} and isinstance(response["tool_calls"], list):
        items = response["tool_calls"]
    elif set(response) in TOOL_KEYS:
        items = [response]
    else:
        return None
    calls: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, Mapping) or set(item) not in TOOL_KEYS:
            return None
        args = item.get("args") or {}
        calls.append((str(item["tool"]), json.dumps(args, ensure_ascii=False)))
    return tuple(calls)


_TICKET = "#ticket-"
_PREFIX = f"{SCRIPT_PROVIDER}/"
_EXHAUSTED = object()


def unreserved(key: str) -> str:
    """`key` without the reservation ticket `Script.reserve` added to it."""
    return key.rpartition(_TICKET)[0] or key


def reserve_scripted(client: object, model: str) -> str:
    """For a scripted model, reserve its response now (see `Script.reserve`); else `model`."""
    script = getattr(client, "script", None)
    if not isinstance(script, Script) or not model.startswith(_PREFIX):
        return model
    return script_model(script.reserve(model[len(_PREFIX) :]))


def skip_scripted(client: object, model: str) -> None:
    """For a scripted model, drop its next response (a call replayed from a resumed trace
    used it when it was first made); nothing for another model."""
    script = getattr(client, "script", None)
    if isinstance(script, Script) and model.startswith(_PREFIX):
        script.skip(model[len(_PREFIX) :])


class Script:
    """Queues of scripted responses, one per key. Records every call in `calls`."""

    def __init__(self, responses: Mapping[str, Iterable[Any]] | None = None) -> None:
        self.id = uuid.uuid4().hex
        self.calls: list[ScriptedCall] = []
        self._queues: dict[str, deque[Any]] = {}
        self._tickets: dict[int, tuple[str, Any]] = {}
        self._next_ticket = 0
        self.file: str | None = None  # the script file, named in errors
        # How many responses each queue has given (so a response is named by its position),
        # and what each reserved call and each queue served last: (key, position, response).
        self._taken: dict[str, int] = {}
        self._served: dict[str, tuple[str, int, Any]] = {}
        self._lock = threading.Lock()
        for key, items in (responses or {}).items():
            if isinstance(items, str | Mapping):
                raise ScriptFormatError(f"`{key}`: expected a list of responses")
            self.add(key, *items)

    @classmethod
    def from_yaml(cls, text: str, file: str = "<script>") -> Script:
        """Read `slots: {name: [responses] | [[per service]...]}`,
        `conditions: {text: [bools]}`, `choices: {text: [labels]}` and
        `people: {slot: [answers]}` (a slot bound to a person).

        `file` names the text in YAML errors (`ScriptFormatError` with the line
        and column: invalid YAML, or past a bound of `prose.bounded`).
        """
        try:
            data = load_yaml(text, file)
        except ProseSyntaxError as error:
            raise ScriptFormatError(str(error)) from None
        return cls.from_mapping(data if data is not None else {})

    @classmethod
    def from_file(cls, path: str | Path) -> Script:
        """Read a script file. Raises InputReadError when it cannot be read, and
        ScriptFormatError naming the file (and the line, where there is one)."""
        try:
            data = load_yaml(read_text(path, limit=MAX_TEXT, empty_ok=True), str(path))
        except ProseSyntaxError as error:
            raise ScriptFormatError(str(error)) from None
        try:
            script = cls.from_mapping(data if data is not None else {})
        except ScriptFormatError as error:
            raise ScriptFormatError(f"{path}: {error}") from None
        script.file = str(path)
        return script

    @classmethod
    def from_mapping(cls, data: Any) -> Script:
        """Like `from_yaml`, from loaded data. A slot list whose items are all
        lists gives one queue per service: `slot:name[0]`, `slot:name[1]`, ..."""
        if not isinstance(data, Mapping):
            raise ScriptFormatError("a script is a mapping with `slots`, `conditions`, `choices`")
        unknown = [key for key in data if key not in _SECTIONS]
        if unknown:
            sections = ", ".join(_SECTIONS)
            raise ScriptFormatError(f"unknown script section `{unknown[0]}` (use {sections})")
        script = cls()
        for name, items in _section(data, "slots").items():
            entries = _entries(f"slot `{name}`", items)
            if entries and all(isinstance(item, list) for item in entries):
                for index, service in enumerate(entries):
                    script.add(slot_key(name, index), *service)
            else:
                script.add(slot_key(name), *entries)
        for name, items in _section(data, "people").items():
            script.add(person_key(name), *_entries(f"person `{name}`", items))
        for text, items in _section(data, "conditions").items():
            script.add(condition_key(text), *(_condition(text, v) for v in _entries(text, items)))
        for text, items in _section(data, "choices").items():
            script.add(choice_key(text), *(_choice(text, v) for v in _entries(text, items)))
        return script

    def add(self, key: str, *responses: Any) -> Script:
        """Queue more responses for `key`; returns the script."""
        for response in responses:
            _check_json_like(key, response)
        with self._lock:
            self._queues.setdefault(key, deque()).extend(responses)
        return self

    def remaining(self) -> dict[str, int]:
        """How many responses each key has left."""
        with self._lock:
            return {key: len(queue) for key, queue in self._queues.items()}

    def reserve(self, key: str) -> str:
        """Take `key`'s next response now and return the key that serves exactly it.

        Parallel calls reach the provider in an order that depends on timing;
        the interpreter reserves each call's response when the call starts (in
        program order, before any await), so a script gives the same result on
        every run. Serving the returned `key#ticket` raises ScriptExhaustedError
        if the queue was already empty at reservation.
        """
        with self._lock:
            queue = self._queue(key)
            ticket = self._next_ticket
            self._next_ticket += 1
            self._tickets[ticket] = (key, self._take(key) if queue else _EXHAUSTED)
        return f"{key}{_TICKET}{ticket}"

    def skip(self, key: str) -> None:
        """Drop `key`'s next response (if it has one): it was used by a call now replayed."""
        with self._lock:
            if self._queue(key):
                self._take(key)

    def _take(self, key: str) -> tuple[str, int, Any]:
        """Pop `key`'s next response (its queue is not empty; the lock is held) with the
        queue it came from and its position there."""
        queue = self._queue(key)
        assert queue
        source = key if key in self._queues else _INDEX.sub("", key)
        position = self._taken.get(source, 0)
        self._taken[source] = position + 1
        return source, position, queue.popleft()

    def _queue(self, key: str) -> deque[Any] | None:
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues.get(_INDEX.sub("", key))
        return queue

    def serve(self, key: str, messages: Sequence[Mapping[str, Any]]) -> ScriptedReply:
        """Take the next response for `key` (or the reserved one) and make a reply (or raise)."""
        pairs = tuple((str(m.get("role", "")), _content(m)) for m in messages)
        with self._lock:
            base, _, ticket = key.rpartition(_TICKET)
            if base and ticket.isdigit() and int(ticket) in self._tickets:
                key, taken = self._tickets.pop(int(ticket))
                if taken is _EXHAUSTED:
                    raise ScriptExhaustedError(key, model=script_model(key))
                self._served[base + _TICKET + ticket] = taken
            else:
                # A retry (after `$error`) or a re-ask (after a schema error) of a
                # reserved call takes the next response of the same queue.
                served = key
                key = base if base and ticket.isdigit() else key
                before = self._served.get(served)
                if before is not None and _is_reask(pairs) and not _marked_invalid(before[2]):
                    raise self._unmarked_failure(key, before, pairs)
                if not self._queue(key):
                    raise _exhausted(key, pairs)
                taken = self._served[served] = self._take(key)
            response = taken[2]
            self.calls.append(ScriptedCall(key, pairs, response))
        if isinstance(response, Mapping) and set(response) == {ERROR_KEY}:
            raise ProviderError(str(response[ERROR_KEY]), model=script_model(key))
        if _marked_invalid(response):
            response = response[INVALID_KEY]
        prompt = sum(count_tokens(content) for _, content in pairs)
        calls = scripted_tool_calls(response)
        if calls:
            written = " ".join(f"{name} {arguments}" for name, arguments in calls)
            return ScriptedReply("", False, prompt, count_tokens(written), calls)
        structured = not isinstance(response, str)
        text = json.dumps(response, ensure_ascii=False) if structured else response
        return ScriptedReply(text, structured, prompt, count_tokens(text))

    def answer(self, slot: str) -> tuple[bool, Any]:
        """The next scripted answer of the person bound to `slot`: (True, answer), or
        (False, None) when the script has none left (then the question waits)."""
        with self._lock:
            queue = self._queues.get(person_key(slot))
            if not queue:
                return False, None
            return True, queue.popleft()

    def _unmarked_failure(self, key: str, served: tuple[str, int, Any],
                          pairs: tuple[tuple[str, str], ...]) -> ScriptedReplyError:
        """A scripted reply failed its schema and was not marked `$invalid`: name it."""
        source, position, _ = served
        section, _, name = source.partition(":")
        entry = f"{section}s.{name}[{position}]"  # slots.critic[0], slots.reviewers[1][0]
        where = f" in {self.file}" if self.file else ""
        problems = [line[2:] for line in pairs[-1][1].splitlines() if line.startswith("- ")][:3]
        error = ScriptedReplyError(key, model=script_model(key))
        error.message = (
            f"the scripted reply `{entry}`{where} failed the call's schema: "
            f"{'; '.join(problems) or 'it did not match'} (reply: {_clip(pairs[-2][1])}). "
            f"A scripted reply must match its slot's schema; to test the re-ask, write it as "
            f"`{{{INVALID_KEY}: ...}}` and put the reply the re-ask gets after it"
        )
        error.entry = entry
        return error

    def __repr__(self) -> str:
        return f"Script({self.remaining()!r})"

    def slot_names(self) -> list[str]:
        """The slots the script answers (`outer.inner` for a nested pattern's), in order."""
        with self._lock:
            keys = list(self._queues)
        names = [_INDEX.sub("", key.split(":", 1)[1]) for key in keys
                 if key.startswith(("slot:", "person:"))]
        return list(dict.fromkeys(names))


def check_script_slots(
    script: Script, slots: Collection[str], nested: Mapping[str, Collection[str]] | None = None
) -> None:
    """Refuse a script that answers a slot the pattern does not have (ScriptFormatError).

    `slots` are the pattern's slots and `use` aliases; `nested` maps a slot or alias
    bound to a nested pattern to that pattern's slots, whose key is `OUTER.INNER`.
    """
    nested = nested or {}
    inner_of = {inner: outer for outer, inners in nested.items() for inner in inners}
    for name in script.slot_names():
        outer, dot, inner = name.partition(".")
        if not dot and name in slots:
            continue
        if dot and outer in nested and inner in nested[outer]:
            continue
        if dot and outer in slots and outer not in nested:
            continue  # a nested pattern the caller could not list: the run checks it
        if not dot and name in inner_of:
            raise ScriptFormatError(
                f"the script answers `{name}`, a slot of the pattern nested as "
                f"`{inner_of[name]}`: its key is `{inner_of[name]}.{name}`"
            )
        known = [*slots, *(f"{o}.{i}" for o, inners in nested.items() for i in inners)]
        listed = ", ".join(f"`{k}`" for k in known) or "none"
        raise ScriptFormatError(
            f"the script answers `{name}`, which is not a slot of this pattern"
            + did_you_mean(name, known)
            + f" (slots: {listed})"
        )


def exhausted_message(error: ScriptExhaustedError, slot: str, index: int | None = None) -> str:
    """What a run says when the script ran out for a call to `slot` (service `index`).

    Names the script key when it is not the slot's name (a nested pattern's
    `OUTER.INNER`), and keeps the reason when a reply failed its schema first.
    """
    key = unreserved(error.key).removeprefix("slot:")
    if error.message != f"the script has no response left for `{error.key}`":
        return error.message
    service = f" (service {index})" if index is not None else ""
    named = _INDEX.sub("", key)
    where = f": the script's key for it is `{named}`" if named != slot else ""
    return f"the script has no response left for slot `{slot}`{service}{where}"


def _exhausted(key: str, pairs: tuple[tuple[str, str], ...]) -> ScriptExhaustedError:
    """No response left for `key`; after a reply that failed its schema, say so and why."""
    error = ScriptExhaustedError(key, model=script_model(key))
    if len(pairs) >= 2 and pairs[-2][0] == "assistant" and pairs[-1][0] == "user":
        problems = [
            line[2:] for line in pairs[-1][1].splitlines() if line.startswith("- ")
        ][:3]
        why = "; ".join(problems) or "it did not match"
        name = unreserved(key).removeprefix("slot:")
        error.message = (
            f"the scripted reply for `{name}` failed its schema: {why} (reply: "
            f"{_clip(pairs[-2][1])}); the re-ask after it found no response left in the script: "
            "fix that reply, or add the one the re-ask should get"
        )
    return error


def _is_reask(pairs: tuple[tuple[str, str], ...]) -> bool:
    """Whether a call is the schema re-ask (`prose.llm.schema.reask_prompt`) of a reply."""
    return (len(pairs) >= 2 and pairs[-2][0] == "assistant" and pairs[-1][0] == "user"
            and pairs[-1][1].startswith(REASK_OPENING))


def _marked_invalid(response: Any) -> bool:
    return isinstance(response, Mapping) and set(response) == {INVALID_KEY}


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _section(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    section = data.get(name) or {}
    if not isinstance(section, Mapping):
        raise ScriptFormatError(f"script section `{name}` must be a mapping")
    return section


def _entries(what: str, items: Any) -> list[Any]:
    if not isinstance(items, list):
        raise ScriptFormatError(f"{what}: expected a list of responses")
    return items


def _condition(text: str, value: Any) -> Any:
    if isinstance(value, bool):
        return condition_answer(value)
    if isinstance(value, Mapping):
        return value
    raise ScriptFormatError(f"condition `{text}`: expected true or false, got {value!r}")


def _choice(text: str, value: Any) -> Any:
    if isinstance(value, str):
        return choice_answer(value)
    if isinstance(value, Mapping):
        return value
    raise ScriptFormatError(f"choice `{text}`: expected a label, got {value!r}")


def _check_json_like(key: str, value: Any) -> None:
    if value is None or isinstance(value, str | bool | int | float):
        return
    if isinstance(value, list | tuple):
        for item in value:
            _check_json_like(key, item)
        return
    if isinstance(value, Mapping):
        for name, item in value.items():
            if not isinstance(name, str):
                raise ScriptFormatError(f"`{key}`: object keys must be strings, got {name!r}")
            _check_json_like(key, item)
        return
    raise ScriptFormatError(f"`{key}`: a response must be JSON-like, got {type(value).__name__}")


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


