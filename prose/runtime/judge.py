"""The judge: a discretion condition or a choice, decided by the judge model.

A judgement is a model call like any other: it goes through the run's one
model exchange (`exchange.py`: cache, budget, scripted reservation,
concurrency cap, usage, cache write) with its own messages and schema
(`prose.llm.decisions`), and is traced as a `judge` event.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

from prose.lang import error_kinds as kinds
from prose.runtime.context import RunContext
from prose.runtime.errors import JudgeFailed, ScriptExhausted
from prose.runtime.exchange import Answer, Exchange, exchange
from prose.runtime.trace import JudgeEvent
from prose.syntax import nodes as n

Kind = Literal["condition", "choice"]


async def judge(
    ctx: RunContext,
    *,
    kind: Kind,
    text: str,
    node: n.Node,
    values: dict[str, Any],
    path: str,
    options: Sequence[str] | None = None,
) -> tuple[Any, str | None]:
    """Ask the judge; returns (decision, reason). Traced as a `judge` event and cached like calls."""
    from prose.llm.decisions import CONDITION_SCHEMA, choice_schema
    from prose.llm.errors import LLMError, ScriptedReplyError, ScriptExhaustedError
    from prose.llm.script import choice_key, condition_key, script_model

    shared = ctx.shared
    if kind == "condition":
        messages = shared.prompts.judge_messages(text, values)
        schema = CONDITION_SCHEMA
        model = script_model(condition_key(text)) if shared.scripted else shared.judge_model
    else:
        messages = shared.prompts.choice_messages(text, options or (), values)
        schema = choice_schema(options or ())
        model = script_model(choice_key(text)) if shared.scripted else shared.judge_model
    event = JudgeEvent(
        id=shared.trace.next_id("j"),
        kind=kind,
        text=text,
        file=node.span.file,
        line=node.line,
        path=path,
        model=model,
        values=values,
        options=list(options) if options is not None else None,
    )
    request = Exchange(
        node=node,
        path=path,
        what=f"the judge at line {node.line}",
        model=model,
        messages=messages,
        schema=schema,
        key_params={"judge": kind},
        metadata={"judge": kind},
    )
    decided: list[tuple[Any, str | None]] = []

    def accept(answer: Answer) -> None:  # a reply that decides nothing is not cached
        decided.append(_decision(kind, answer.parsed, options))

    started = time.perf_counter()
    try:
        await exchange(ctx, request, event, accept=accept)
    except ScriptExhaustedError as error:
        event.error = {"kind": kinds.SCRIPT_EXHAUSTED, "message": error.message}
        shared.trace.emit(event)
        told = error.message if isinstance(error, ScriptedReplyError) else (
            f"the script has no {kind} answer left for `{text}`")
        raise ScriptExhausted(told, node.span, source=ctx.source) from None
    except (LLMError, JudgeFailed) as error:
        message = error.message if isinstance(error, LLMError) else str(error)
        event.error = {"kind": getattr(error, "kind", "judge"), "message": message}
        event.latency_ms = (time.perf_counter() - started) * 1000
        shared.trace.emit(event)
        raise JudgeFailed(
            f"the judge could not decide `{text}`: {message}", node.span, source=ctx.source
        ) from None
    decision, reason = decided[0]
    event.latency_ms = (time.perf_counter() - started) * 1000
    event.decision, event.reason = decision, reason
    shared.trace.emit(event)
    return decision, reason


def _decision(kind: str, answer: Any, options: Sequence[str] | None) -> tuple[Any, str | None]:
    """The decision in a judge's (or a cached, or a replayed) answer."""
    if isinstance(answer, dict) and "decision" in answer:
        return answer["decision"], answer.get("reason")
    field = "answer" if kind == "condition" else "choice"
    if not isinstance(answer, dict) or field not in answer:
        raise JudgeFailed(f"the answer has no `{field}`: {answer!r}")
    decision = answer[field]
    if kind == "condition" and not isinstance(decision, bool):
        raise JudgeFailed(f"`answer` must be true or false, not {decision!r}")
    if kind == "choice" and decision not in (options or ()):
        raise JudgeFailed(f"`{decision}` is not one of the options {list(options or ())}")
    reason = answer.get("reason")
    return decision, str(reason) if reason is not None else None
