"""The run's content index: the message-boundary check of `prose.lang.content`.

Every model call's output is recorded (its shingles, and which of them are novel for the
slot that wrote it); before a model request is sent, its rendered messages are probed
for novel text of a slot the receiving slot must never see. A hit stops the call with
R010 and an `error` event whose `rules` name `content`: the labels missed that flow.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from prose.lang import content
from prose.lang.policy import Policy
from prose.runtime.errors import InformationHidingViolation
from prose.runtime.trace import ErrorEvent, Trace
from prose.runtime.values import to_text
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.llm.types import Message
    from prose.runtime.call_site import Payload
    from prose.runtime.context import RunContext

CONTENT_RULE = "content"


class ContentIndex:
    """What the slots of one pattern run wrote, for the content check."""

    def __init__(self, policy: Policy, source: str) -> None:
        self.hidden_from = {
            slot: tuple(sorted({hidden.other for hidden in rules.hidden}))
            for slot, rules in policy.slots.items() if rules.hidden
        }
        self.watched = frozenset(other for hidden in self.hidden_from.values() for other in hidden)
        self.source = source
        self._known: set[int] | None = None
        # Per slot, as sets, so that recording an output is set arithmetic in C rather
        # than a Python loop over its shingles: the novel text a watched slot wrote first,
        # and every shingle any slot's output holds.
        self.novel: dict[str, set[int]] = {}
        self.written: dict[str, set[int]] = {}
        self.lines: dict[str, int] = {}  # a watched slot -> the line of its call that wrote text
        self._sent: dict[str, set[int]] = {}  # recent message texts -> their shingles

    @property
    def active(self) -> bool:
        """Whether the pattern hides any slot from another (else the check costs nothing)."""
        return bool(self.watched)

    def record(self, slot: str, line: int, output: Any, sent: Sequence[str]) -> None:
        """A call of `slot` (at `line`) was sent `sent` and answered `output`."""
        if not self.watched:
            return
        found: set[int] = set()
        for text in _texts(output):
            found |= content.shingles(text)
        self.written.setdefault(slot, set()).update(found)
        if slot not in self.watched:
            return
        fresh = found - self.known()
        for text in sent:
            if not fresh:
                break
            fresh -= self._shingles_of_sent(text)
        if fresh:
            self.novel.setdefault(slot, set()).update(fresh)
            self.lines.setdefault(slot, line)

    def _shingles_of_sent(self, text: str) -> set[int]:
        """A sent message's shingles, remembered for the next calls: the messages of a
        call site's calls share their system message and often an input."""
        cached = self._sent.get(text)
        if cached is None:
            if len(self._sent) >= _SENT_REMEMBERED:
                self._sent.pop(next(iter(self._sent)))
            cached = self._sent[text] = content.shingles(text)
        return cached

    def known(self) -> set[int]:
        """The pattern's own text: never novel."""
        if self._known is None:
            self._known = content.shingles(self.source)
        return self._known

    def leak(self, slot: str, messages: Sequence[str]) -> str | None:
        """The hidden slot whose novel text the messages to `slot` hold, if any: a shingle
        one of them wrote first and no other slot's output holds."""
        hidden = self.hidden_from.get(slot)
        if not hidden or not self.novel:
            return None
        sources = [(other, self.novel[other]) for other in hidden if other in self.novel]
        if not sources:
            return None
        for text in messages:
            probed = content.probes(text)
            for other, novel in sources:
                for hit in probed & novel:
                    if not any(hit in held for writer, held in self.written.items()
                               if writer != other):
                        return other
        return None


# How many distinct sent messages keep their shingles (first in, first out).
_SENT_REMEMBERED = 64


def check_messages(index: ContentIndex, trace: Trace, node: n.Node, slot: str,
                   messages: Sequence[str], source: str) -> None:
    """Stop the call (R010, nothing sent) when its messages hold novel text of a slot
    `slot` must never see, recording that the labels missed it."""
    other = index.leak(slot, messages)
    if other is None:
        return
    made = index.lines.get(other)
    where = f" (made by the call at line {made})" if made else ""
    message = (f"information hiding: the call to `{slot}` is not sent: its messages hold text "
               f"that `{other}` wrote{where}, which `{slot}` must never see (the content check "
               "found what the labels missed)")
    error = InformationHidingViolation(message, node.span, source=source, slot=slot,
                                       rules=[CONTENT_RULE])
    trace.emit(ErrorEvent(code=error.code, kind=error.kind, message=error.message,
                          file=node.span.file, line=node.line, column=node.column, slot=slot,
                          rules=[CONTENT_RULE],
                          refused={"content": {"other": other, "made_at_line": made}}))
    raise error


def _texts(output: Any) -> Iterator[str]:
    """The strings of an output (object keys too: they are data)."""
    stack = [output]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            for key, value in item.items():
                yield str(key)
                stack.append(value)
        elif isinstance(item, list | tuple):
            stack.extend(item)


def checked_messages(ctx: RunContext, node: n.Node, slot: str, payload: Payload) -> list[Message]:
    """The messages a call sends (to a model or to a person: the same rendering), after the
    content check at the message boundary (docs/language.md 5.3)."""
    shared = ctx.shared
    messages = shared.prompts.call_messages(
        role=payload.role,
        ensures=payload.ensures,
        prompt=to_text(payload.prompt) if payload.prompt is not None else None,
        inputs=payload.inputs,
    )
    if ctx.content.active:
        check_messages(ctx.content, shared.trace, node, slot,
                       [message.content for message in messages], ctx.source)
    return messages
