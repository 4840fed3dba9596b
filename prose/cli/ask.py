"""Asking a person on the terminal `prose run` was started from (docs/people.md).

The question is shown as the person would read its markdown file (who asks,
the role, the inputs), then each field of the answer's form is asked for on
its own line, parsed by its type, checked against its schema and asked again
until it fits. Prompts go to stderr; stdout keeps only the run's result.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from prose.errors import printable

if TYPE_CHECKING:
    from prose.runtime.questions import Question

_YES = {"y", "yes", "true"}
_NO = {"n", "no", "false"}


def parse_field(text: str, schema: Mapping[str, Any]) -> Any:
    """A typed line as the value its schema asks for (raises ValueError when it is none)."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "enum" in schema:
        for option in schema["enum"]:
            if text == (option if isinstance(option, str) else json.dumps(option)):
                return option
        raise ValueError("type one of the options as shown")
    if "boolean" in kinds:
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
        raise ValueError("type yes or no")
    if "integer" in kinds:
        return int(text)
    if "number" in kinds:
        return float(text)
    if "string" in kinds:
        return text
    if not text:
        return [] if "array" in kinds else None
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError("type it as JSON (a list: [\"a\", \"b\"])") from None


class TerminalAsker:
    """Asks one question at a time on a terminal; `read` gives one line (None at its end)."""

    def __init__(self, out: TextIO | None = None,
                 read: Callable[[], str | None] | None = None) -> None:
        self.out = out or sys.stderr
        self.read = read or _read_line

    def show(self, text: str) -> None:
        # The question quotes the run's values (a model's reply): escaped, as every message.
        self.out.write(printable(text))
        self.out.flush()

    async def line(self, prompt: str) -> str:
        self.show(prompt)
        text = await asyncio.to_thread(self.read)
        if text is None:
            from prose.runtime.errors import InputError

            raise InputError("the terminal closed before the question was answered")
        return text.strip()

    async def __call__(self, question: Question) -> tuple[Any, str | None]:
        from prose.llm.schema import validate
        from prose.runtime.questions import describe_type

        self.show(render(question))
        schema = question.schema
        properties = schema.get("properties")
        if schema.get("type") == "object" and isinstance(properties, Mapping):
            value: Any = {}
            required = set(schema.get("required") or ())
            for name, item in properties.items():
                field = await self.ask(f"  {name} ({describe_type(item)}): ", item,
                                       optional=name not in required)
                if field is not _SKIPPED:
                    value[name] = field
        else:
            value = await self.ask(f"  answer ({describe_type(schema)}): ", schema)
        problems = validate(value, schema)
        while problems:  # a rule across fields (the field checks above passed)
            self.show("".join(f"  not accepted: {problem}\n" for problem in problems))
            value = await self.ask("  the whole answer as JSON: ", {})
            problems = validate(value, schema)
        note = await self.line("  note (optional, Enter to skip): ")
        self.show("  answer recorded\n")
        return value, note or None

    async def ask(self, prompt: str, schema: Mapping[str, Any], optional: bool = False) -> Any:
        """One field, asked until it fits its schema."""
        from prose.llm.schema import validate

        while True:
            text = await self.line(prompt)
            if optional and not text:
                return _SKIPPED
            try:
                value = parse_field(text, schema)
            except ValueError as error:
                self.show(f"  not accepted: {error}; try again\n")
                continue
            problems = validate(value, schema)
            if not problems:
                return value
            self.show("".join(f"  not accepted: {p.removeprefix('$: ')}; try again\n"
                              for p in problems))


_SKIPPED = object()


def _read_line() -> str | None:
    text = sys.stdin.readline()
    return text if text else None


def render(question: Question) -> str:
    """The question as the terminal shows it: who asks, then each message."""
    who = ", ".join(question.may_answer) if question.may_answer else "anyone"
    lines = ["", f"=== A question for `{question.target}` ({question.person}; may answer: "
             f"{who})"]
    for message in question.messages:
        heading = "Your role" if message.get("role") == "system" else "The question"
        lines += [f"--- {heading}", str(message.get("content", "")).rstrip()]
    lines += ["--- Your answer", ""]
    return "\n".join(lines)
