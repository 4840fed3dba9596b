"""A person's questions and answers on disk, beside a run's trace (docs/people.md).

A run that waits for a person writes, in its folder (the trace's):

    pending.json            the run, how to resume it, and every waiting question
    questions/<id>.md       one question as a person reads it (one file per question,
                            so a person is shown their own question and no other)
    answers/<key>.json      written by `prose answer`, one per answered question

A trace not named `trace.jsonl` (a row of `prose batch`, many to a folder) keeps these
in a folder of its own beside it, `<trace name>.people/` (`questions_folder`).

Every file is written whole and then renamed into place, so a `kill -9` at any moment
leaves either the old file or the new one, never half of one. Every file is masked as the
trace is (`prose.llm.redact.redact`): a question for the run's secrets, an answer for the
secrets of the process that writes it; a resumed run masks an answer for its own secrets
again before it uses it (`masked_answer`), so what the run sees is what its trace records.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prose.files import write_whole
from prose.llm.redact import redact, replace_secrets

PENDING = "pending.json"
QUESTIONS = "questions"
ANSWERS = "answers"
TEXT_ANSWER: dict[str, Any] = {"type": "string", "minLength": 1}


def questions_folder(trace: Path) -> Path:
    """Where a run's questions and answers live: its trace's folder, or, for a trace that
    shares its folder with others (not named `trace.jsonl`), a folder beside it."""
    if trace.name == "trace.jsonl":
        return trace.parent
    return trace.parent / f"{trace.stem}.people"


def clear_pending(trace: Path) -> None:
    """A run that no longer waits (it was resumed in place and finished): drop its
    `pending.json`, so `prose pending` does not list it."""
    try:
        (questions_folder(trace) / PENDING).unlink()
    except FileNotFoundError:
        pass


def now_iso() -> str:
    """The time now, ISO 8601 in UTC to the second (`answered.at`)."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Question:
    """One question to a person: what the call would send a model, and the answer's form.

    `id` is the call's id in the trace that asked it; `key` identifies the question
    across runs (the cache key of the call: its site, path, messages and schema), so
    a resumed run finds the answer given to the same question.
    """

    id: str
    key: str
    slot: str
    person: str
    may_answer: list[str]
    file: str
    line: int
    column: int
    messages: list[dict[str, Any]]
    schema: dict[str, Any]
    asked_at: str
    index: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> str:
        return self.slot if self.index is None else f"{self.slot}[{self.index}]"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Question:
        names = set(cls.__dataclass_fields__)
        return cls(**{key: value for key, value in data.items() if key in names})


def write_atomic(path: Path, text: str) -> None:
    """Write `path` whole (`prose.files.write_whole`), making its folder if need be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, text.encode("utf-8"))


def masked_question(question: Question, secrets: Sequence[str]) -> Question:
    """`question` with `secrets` masked in what it shows (its messages, mostly: the inputs a
    run was given). Its answer's form is the pattern's and is kept as is: masking the
    schema of a field named `password` would make the question unanswerable."""
    data = question.to_dict()
    schema = data.pop("schema")
    return Question.from_dict({**redact(data, secrets), "schema": schema})


def masked_answer(value: Any, secrets: Sequence[str], schema: Mapping[str, Any]) -> Any:
    """An answer's value as a run uses it: masked as the trace masks it, unless that masking
    gives a value its form (`schema`) refuses where the answer fitted (a boolean field named
    like a secret, `password_reset: true`): then only the known `secrets` are masked in it."""
    from prose.llm.schema import validate

    masked = redact(value, secrets)
    if masked == value or not validate(masked, schema) or validate(value, schema):
        return masked
    return replace_secrets(value, secrets)


def write_pending(folder: Path, run_id: str, questions: list[Question], resume: str | None,
                  trace: str, secrets: Sequence[str] = ()) -> Path:
    """Write `pending.json` and one markdown file per question, `secrets` (the trace's)
    masked in both; the pending file's path."""
    questions = [masked_question(question, secrets) for question in questions]
    for question in questions:
        write_atomic(folder / QUESTIONS / f"{question.id}.md", render_markdown(question, run_id))
    data = {"run_id": run_id, "trace": redact(trace, secrets), "resume": redact(resume, secrets),
            "asked_at": now_iso(), "questions": [question.to_dict() for question in questions]}
    path = folder / PENDING
    write_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    return path


def read_pending(folder: Path) -> dict[str, Any] | None:
    """The run's `pending.json` as data, or None when it has none (or it cannot be read)."""
    try:
        data = json.loads((folder / PENDING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def answer_path(folder: Path, key: str) -> Path:
    return folder / ANSWERS / f"{key}.json"


def write_answer(folder: Path, question: Question, value: Any, answered: Mapping[str, Any],
                 secrets: Sequence[str] = ()) -> Path:
    """Record an answer to `question` (checked already) in the run's `answers/` folder:
    `value` as given (masked already, `masked_answer`, and checked as masked), `answered`
    (who, the note) with `secrets` masked."""
    data = {"key": question.key, "question": question.id, "slot": question.target,
            "value": value, "answered": redact(dict(answered), secrets)}
    path = answer_path(folder, question.key)
    write_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    return path


def read_answers(folder: Path) -> dict[str, dict[str, Any]]:
    """The answers recorded in a run's folder, by question key (unreadable files skipped)."""
    out: dict[str, dict[str, Any]] = {}
    directory = folder / ANSWERS
    if not directory.is_dir():
        return out
    for path in sorted(directory.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("key"), str) and "value" in data:
            out[data["key"]] = data
    return out


def parse_answer(text: str, schema: Mapping[str, Any]) -> Any:
    """The value of an answer given as text: JSON when it parses, else the text itself
    (so `--value yes` answers a question whose answer is text)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def field_lines(schema: Mapping[str, Any]) -> list[str]:
    """The answer's form, one line per field: `- decision (string, one of: a, b)`."""
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, Mapping):
        return [f"- the answer ({describe_type(schema)})"]
    required = set(schema.get("required") or ())
    lines = []
    for name, item in properties.items():
        optional = "" if name in required else ", optional"
        lines.append(f"- `{name}` ({describe_type(item)}{optional})")
    return lines


def describe_type(schema: Any) -> str:
    """A field's type as a person reads it: `string`, `list of string`, `one of: a, b`."""
    if not isinstance(schema, Mapping):
        return "any value"
    if "enum" in schema:
        return "one of: " + ", ".join(json.dumps(option) for option in schema["enum"])
    if isinstance(schema.get("anyOf"), list):  # `T?` (T or null), `A | B`
        return " or ".join(describe_type(option) for option in schema["anyOf"])
    kind = schema.get("type", "any value")
    if kind == "array":
        return "list of " + describe_type(schema.get("items", {}))
    if kind == "object" and isinstance(schema.get("properties"), Mapping):
        fields = ", ".join(f"{name}: {describe_type(item)}"
                           for name, item in schema["properties"].items())
        return "object with { " + fields + " }"
    return " or ".join(kind) if isinstance(kind, list) else str(kind)


def render_markdown(question: Question, run_id: str) -> str:
    """A question as a person reads it: who asks, what they are given, the answer's form."""
    who = ", ".join(question.may_answer) if question.may_answer else "anyone"
    lines = [
        f"# A question for `{question.target}` ({question.person})",
        "",
        f"Run `{run_id}`, question `{question.id}`, asked {question.asked_at} by "
        f"{Path(question.file).name}:{question.line}. May answer: {who}.",
        "",
    ]
    for message in question.messages:
        heading = "Your role" if message.get("role") == "system" else "The question"
        lines += [f"## {heading}", "", str(message.get("content", "")).rstrip(), ""]
    lines += ["## Your answer", "", *field_lines(question.schema), "", "Answer with:", "",
              "```sh", f"prose answer {run_id} {question.id} --value '{example(question.schema)}'",
              "```", ""]
    return "\n".join(lines)


def example(schema: Mapping[str, Any]) -> str:
    """A JSON skeleton of the answer (the shape to fill in), for the `--value` hint."""
    return json.dumps(_skeleton(schema), ensure_ascii=False)


def _skeleton(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object":
        return {name: _skeleton(item) for name, item in (schema.get("properties") or {}).items()}
    return {"array": [], "boolean": False, "integer": 0, "number": 0, "string": "..."}.get(
        str(kind), "...")
