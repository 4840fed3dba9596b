"""Who chooses the model a call goes to (docs/security.md, "Who is trusted with what").

A pattern file is data anyone may write and share; the person who runs it holds the
keys and pays for the calls. So a model a pattern names (`agent critic: model: premium`,
a call's or a session's `model: "openai/gpt-4o"`) is a *request*: the call goes there
only when the person running it granted that model, by

- naming it as the run's default or judge model, or binding a slot to it (`--model`,
  `--judge-model`, `--bind`, the instance's `with:`, prose.yaml's `default_model`,
  `judge_model`), or
- allowing it outright: the instance file's `allow_models: [premium, ...]` or the
  command line's `--allow-model premium` (repeatable).

A deployment in prose.yaml's `model_list` is not granted by being there: the list holds
what the user *may* use, with the user's keys. The linter reports every model a pattern
names (PK508, a warning); the run refuses a call to a model not granted (R018, exit 1),
before anything is sent. A scripted run sends nothing and refuses nothing.

This module is the rule, for the linter and the run time alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from prose.source import Span
from prose.syntax import nodes as n

ALLOW_MODELS_KEY = "allow_models"  # the instance file's key
ALLOW_MODEL_FLAG = "--allow-model"  # the command line's flag


@dataclass(frozen=True)
class ModelChoice:
    """A model a pattern names: `model` is its text when written as a literal (None when an
    expression computes it), `where` says who names it (`agent `critic``)."""

    model: str | None
    where: str
    span: Span
    agent: str | None = None  # the agent whose `model:` it is (unused when its slot is bound)


def model_choices(body: Iterable[n.Node]) -> Iterator[ModelChoice]:
    """Every `model:` of an agent, a call or a session in a program, in source order."""
    from prose.syntax.walk import children

    stack: list[n.Node] = list(reversed(list(body)))
    while stack:
        node = stack.pop()
        prop: n.Property | None = None
        where = ""
        if isinstance(node, n.AgentDef):
            prop, where = node.property("model"), f"agent `{node.name}`"
        elif isinstance(node, n.Session):
            prop, where = node.property("model"), f"the session of `{node.slot}`"
        elif isinstance(node, n.Call):
            prop, where = node.property("model"), "a call"
        if prop is not None:
            # An agent's `model: sonnet` is a word (`prose.runtime.sessions`); a call's a name.
            word = (prop.value.name if isinstance(node, n.AgentDef)
                    and isinstance(prop.value, n.Name) else None)
            yield ModelChoice(word or literal_model(prop.value), where, prop.value.span,
                              node.name if isinstance(node, n.AgentDef) else None)
        stack.extend(reversed(list(children(node))))


def literal_model(value: n.Expr) -> str | None:
    """The model a `model:` value names when written as text or a bare word."""
    if isinstance(value, n.String) and all(isinstance(part, str) for part in value.parts):
        return value.text
    return None


def refused_choices(body: Iterable[n.Node], allowed: Iterable[str],
                    bound: Iterable[str] = ()) -> Iterator[ModelChoice]:
    """The models written in a program that a run may not send to: literal ones not granted
    (an agent whose slot the run binds uses the binding, not its `model:`). A computed
    model is checked when its call is made."""
    allowed, bound = set(allowed), set(bound)
    for choice in model_choices(body):
        if choice.model is None or (choice.agent is not None and choice.agent in bound):
            continue
        if not granted(choice.model, allowed):
            yield choice


def granted(model: str, allowed: Iterable[str]) -> bool:
    """Whether a call may go to `model`, which a pattern named, given the models the person
    running it chose or allowed."""
    return model in set(allowed)


def how_to_allow(model: str) -> str:
    """The help line of PK508 and R018."""
    return (f"the person running the pattern grants it: `{ALLOW_MODEL_FLAG} {model}`, or "
            f"`{ALLOW_MODELS_KEY}: [{model}]` in the instance file")
