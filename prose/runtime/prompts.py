"""The messages a call sends, rendered with Jinja2 in a sandbox (LANGUAGE.md 4.4).

A slot call's messages are built only from the service's role prompt, the
slot's `ensures`, the call's `prompt` and the inputs, each labelled by its
name (objects and lists as JSON). The templates never receive the pattern's
name, description, invariants or the other slots' names, so no override can
leak them. Judges get the condition (or choice criteria), the option labels
and the values of the names the text mentions.

Templates are `ImmutableSandboxedEnvironment` + `StrictUndefined` (a typo in
an override is an error, not an empty string); a project overrides any of
them with a file of the same name in `.prose/templates/`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prose.llm.types import Message
from prose.runtime.errors import InputError
from prose.runtime.values import Value, plain

TEMPLATE_DIR = Path(".prose") / "templates"

DEFAULT_TEMPLATES: dict[str, str] = {
    "call_system.j2": (
        "{% if role %}{{ role }}{% endif %}"
        "{% if role and ensures %}\n\n{% endif %}"
        "{% if ensures %}Produce: {{ ensures }}{% endif %}"
    ),
    "call_user.j2": (
        "{% if prompt %}{{ prompt }}{% endif %}"
        "{% for item in inputs %}{% if prompt or not loop.first %}\n\n{% endif %}"
        "## {{ item.name }}\n{{ item.text }}{% endfor %}"
        "{% if not prompt and not inputs %}(no input){% endif %}"
    ),
    "judge_system.j2": (
        "You decide whether a condition holds, judging only from the values given. "
        'Answer with a JSON object: {"answer": true or false, "reason": "one short sentence"}.'
    ),
    "judge_user.j2": (
        "Condition: {{ text }}"
        "{% for item in values %}\n\n## {{ item.name }}\n{{ item.text }}{% endfor %}"
    ),
    "choice_system.j2": (
        "You pick the one option that best fits the criteria, judging only from the values "
        'given. Answer with a JSON object: {"label": one of the option labels, '
        '"reason": "one short sentence"}.'
    ),
    "choice_user.j2": (
        "Criteria: {{ text }}\n\nOptions:{% for label in options %}\n- {{ label }}{% endfor %}"
        "{% for item in values %}\n\n## {{ item.name }}\n{{ item.text }}{% endfor %}"
    ),
}


class TemplateProblem(InputError):
    """A project's prompt template override cannot be loaded or rendered (exit 1)."""


@dataclass(frozen=True, slots=True)
class LabelledInput:
    name: str
    text: str


def render_value(value: Value | Any) -> str:
    """An input as the model reads it: a string as itself, anything else as JSON."""
    data = plain(value) if isinstance(value, Value) else value
    if isinstance(data, str):
        return data
    return json.dumps(data, ensure_ascii=False, indent=2)


class PromptBuilder:
    """Renders the messages of calls and judgements from (possibly overridden) templates."""

    def __init__(self, project_dir: str | Path | None = None) -> None:
        from jinja2 import (
            ChoiceLoader,
            DictLoader,
            FileSystemLoader,
            StrictUndefined,
            TemplateError,
        )
        from jinja2.loaders import BaseLoader
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        loaders: list[BaseLoader] = []
        if project_dir is not None:
            overrides = Path(project_dir) / TEMPLATE_DIR
            if overrides.is_dir():
                loaders.append(FileSystemLoader(str(overrides)))
        loaders.append(DictLoader(DEFAULT_TEMPLATES))
        self.env = ImmutableSandboxedEnvironment(
            loader=ChoiceLoader(loaders),
            undefined=StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
        )
        try:
            self._templates = {name: self.env.get_template(name) for name in DEFAULT_TEMPLATES}
        except TemplateError as error:
            raise TemplateProblem(
                f"a prompt template in {TEMPLATE_DIR} is invalid: {error}"
            ) from None

    def _render(self, name: str, **context: Any) -> str:
        from jinja2 import TemplateError

        try:
            return self._templates[name].render(**context).strip()
        except TemplateError as error:  # an override used a name it is not given, or unsafe code
            raise TemplateProblem(f"the prompt template `{name}` failed: {error}") from None

    def call_messages(
        self,
        *,
        role: str | None,
        ensures: str | None,
        prompt: str | None,
        inputs: Mapping[str, Value],
    ) -> list[Message]:
        """The messages of one slot call: a system message (if any) and the user message."""
        labelled = [LabelledInput(name, render_value(value)) for name, value in inputs.items()]
        system = self._render("call_system.j2", role=role or "", ensures=ensures or "")
        user = self._render("call_user.j2", prompt=prompt or "", inputs=labelled)
        messages = [Message.system(system)] if system else []
        messages.append(Message.user(user))
        return messages

    def judge_messages(self, text: str, values: Mapping[str, Any]) -> list[Message]:
        labelled = [LabelledInput(name, render_value(value)) for name, value in values.items()]
        return [
            Message.system(self._render("judge_system.j2")),
            Message.user(self._render("judge_user.j2", text=text, values=labelled)),
        ]

    def choice_messages(
        self, text: str, options: Sequence[str], values: Mapping[str, Any]
    ) -> list[Message]:
        labelled = [LabelledInput(name, render_value(value)) for name, value in values.items()]
        return [
            Message.system(self._render("choice_system.j2")),
            Message.user(
                self._render("choice_user.j2", text=text, options=list(options), values=labelled)
            ),
        ]


def messages_to_dicts(messages: Sequence[Message]) -> list[dict[str, str]]:
    return [{"role": message.role, "content": message.content} for message in messages]
