"""A call of a slot bound to a person (docs/people.md): asked, answered on the record.

The question is the call's messages, built by the same `PromptBuilder.call_messages`
from the same payload a model would be sent (the rule is `MESSAGE_KINDS` in
`prose.lang.channels`), after the same policy check (`calls.enforce_policy`) and the
same content check: a person is never shown what the slot's model would not be.
The slot's `ensures` schema (or the call's `schema:`) is the answer's form.

An answer comes, in this order, from: the answers this run was resumed with (given
in the earlier run's trace, or by `prose answer` since); the terminal, when the run
has one; else the question waits. A waiting question does not stop its branch's
siblings: the run stops (`WaitingForPerson`, exit 6) once nothing else can move,
so the questions of parallel branches are all asked at once.
"""

from __future__ import annotations

import asyncio
import getpass
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.lang import error_kinds as kinds
from prose.runtime.content import checked_messages
from prose.runtime.errors import InputError, WaitingForPerson
from prose.runtime.integrity import output_sha256
from prose.runtime.prompts import messages_to_dicts
from prose.runtime.questions import (
    TEXT_ANSWER,
    Question,
    masked_answer,
    masked_question,
    now_iso,
    questions_folder,
    read_answers,
)
from prose.runtime.trace import CallEvent, read_events

if TYPE_CHECKING:
    from prose.runtime.call_site import Payload
    from prose.runtime.context import RunContext
    from prose.runtime.services import PersonService
    from prose.syntax import nodes as n

# Event-loop turns with nothing moving (no call in flight, no new event or question)
# after which the run is taken to be waiting on people only.
_SETTLED_TURNS = 20


def default_answerer() -> str:
    """Who answers when nobody says (`--as`): the operating system's user."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


@dataclass(frozen=True)
class Given:
    """An answer on record: its value, who gave it and how, and whether it is replayed
    from an earlier trace (True) or given since the run stopped (False)."""

    value: Any
    answered: dict[str, Any]
    replayed: bool


@dataclass
class Desk:
    """The run's questions to people: the answers known, the questions waiting."""

    answers: dict[str, Given] = field(default_factory=dict)
    # Asks on the terminal; None when the run has none (then questions wait).
    terminal: Any = None
    # Answers for people from a script (`people:`, `prose.llm.script.Script.answer`), asked
    # before the terminal; None when the run has no script.
    script: Any = None
    answerer: str = field(default_factory=default_answerer)
    capacity: int = 1
    pending: list[Question] = field(default_factory=list)
    _stop: asyncio.Future[None] | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def wait(self, ctx: RunContext) -> None:
        """Wait until the run cannot move without a person, then stop it."""
        if self._stop is None:
            self._stop = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().create_task(self._watch(ctx))
        await asyncio.shield(self._stop)

    async def _watch(self, ctx: RunContext) -> None:
        shared = ctx.shared
        semaphore = shared.semaphore
        settled, last = 0, None
        while settled < _SETTLED_TURNS:
            busy = getattr(semaphore, "_value", self.capacity) < self.capacity
            state = (len(shared.trace.events), len(self.pending))
            if busy or state != last:
                settled, last = 0, state
                await asyncio.sleep(0.005 if busy else 0)
                continue
            settled += 1
            await asyncio.sleep(0)
        if self._stop is not None and not self._stop.done():
            self._stop.set_result(None)


def load_answers(trace_path: str | Path) -> dict[str, Given]:
    """The answers a resumed run starts with: those its trace records (replayed) and those
    written by `prose answer` in its folder since (given)."""
    path = Path(trace_path)
    out: dict[str, Given] = {}
    for event in read_events(path):
        if (event.get("type") == "call" and str(event.get("service", "")).startswith("person:")
                and event.get("error") is None and event.get("key")):
            out[str(event["key"])] = Given(event.get("output"), dict(event.get("answered") or {}),
                                           replayed=True)
    for key, data in read_answers(questions_folder(path)).items():
        out.setdefault(key, Given(data.get("value"), dict(data.get("answered") or {}),
                                  replayed=False))
    return out


def _emit(ctx: RunContext, event: CallEvent, started: float) -> None:
    event.latency_ms = round((time.perf_counter() - started) * 1000, 3)
    ctx.shared.trace.emit(event)


async def person_attempt(
    ctx: RunContext,
    node: n.Call,
    slot: str,
    service: PersonService,
    payload: Payload,
    schema: Mapping[str, Any] | None,
    path: str,
    event: CallEvent,
) -> Any:
    """One attempt of a call of a person: the answer on record, from the terminal, or wait.

    `schema` is the answer's form as a JSON schema (None: a text).
    """
    from prose.llm.schema import validate

    shared = ctx.shared
    desk: Desk = shared.people if shared.people is not None else Desk()
    messages = checked_messages(ctx, node, slot, payload)
    texts = [message.content for message in messages]
    sent = messages_to_dicts(messages)
    schema = dict(schema) if schema else TEXT_ANSWER
    key = shared.keys.key(site=f"{node.span.file}:{node.line}:{node.column}", path=path,
                          model=service.label, messages=sent, schema=schema, params={})
    event.model, event.messages, event.key = service.label, sent, key
    if shared.shown is not None:
        shared.shown.append({"slot": event.slot, "index": event.index, "line": node.line,
                             "model": service.label, "messages": sent})
    started = time.perf_counter()
    question = Question(
        id=event.id, key=key, slot=slot, index=event.index, person=service.name,
        may_answer=list(service.may_answer), file=node.span.file, line=node.line,
        column=node.column, messages=sent, schema=schema, asked_at=now_iso())
    given = desk.answers.get(key)
    if given is not None:
        # An answer file may hold what its writer's environment did not know as a secret:
        # the run uses it masked for its own, as its trace records it.
        given = Given(masked_answer(given.value, shared.trace.secrets, schema), given.answered,
                      given.replayed)
        problems = validate(given.value, schema)
        if problems:
            raise InputError(f"the answer recorded for `{question.target}` does not fit its "
                             f"form: {'; '.join(problems)}", node.span, source=ctx.source)
        by = str(given.answered.get("by") or "")
        if not given.replayed and not service.allows(by):  # an answer file written by hand
            raise InputError(f"the answer recorded for `{question.target}` is by `{by or '?'}`,"
                             f" who may not answer it (may answer: "
                             f"{', '.join(service.may_answer)})", node.span, source=ctx.source)
        value, answered, event.cache_hit = given.value, given.answered, given.replayed
        if given.replayed and answered.get("via") == "script" and desk.script is not None:
            desk.script.answer(slot)  # the replayed answer used up its scripted one
    elif desk.script is not None and (scripted := desk.script.answer(slot))[0]:
        value = scripted[1]
        problems = validate(value, schema)
        if problems:
            raise InputError(f"the script's answer for the person of `{question.target}` does "
                             f"not fit its form: {'; '.join(problems)}", node.span,
                             source=ctx.source)
        answered = {"by": "script", "at": now_iso(), "via": "script"}
    elif desk.terminal is not None and service.allows(desk.answerer):
        async with desk._lock:
            value, note = await desk.terminal(masked_question(question, shared.trace.secrets))
        answered = {"by": desk.answerer, "at": now_iso(), "via": "terminal"}
        if note:
            answered["note"] = note
    else:
        desk.pending.append(question)
        try:
            await desk.wait(ctx)
        except asyncio.CancelledError:
            event.error = {"kind": kinds.WAITING, "message": "cancelled while waiting for a person"}
            _emit(ctx, event, started)
            raise
        event.error = {"kind": kinds.WAITING,
                       "message": f"waiting for a person: question {question.id} "
                                  f"({service.name}) is not answered yet"}
        _emit(ctx, event, started)
        raise WaitingForPerson(
            f"waiting for a person to answer `{question.target}` ({service.name})",
            node.span, source=ctx.source, slot=slot)
    event.answered = dict(answered)
    event.output = value
    event.sha256 = output_sha256(value)
    _emit(ctx, event, started)
    if ctx.content.active:
        ctx.content.record(slot, node.line, value, texts)
    return value


def answer_allowed(question: Question | Mapping[str, Any], who: str) -> bool:
    """Whether `who` may answer `question` (anyone, when it names nobody)."""
    allowed = question.may_answer if isinstance(question, Question) else question.get(
        "may_answer") or []
    return not allowed or who in allowed
