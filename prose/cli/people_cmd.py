"""`prose answer` and `prose pending`: the questions a run waits on, and their answers.

A run that waits for a person (exit 6) writes its questions beside its trace
(`prose.runtime.questions`). `prose answer` checks an answer against the
question's form and records it in the run's folder (nothing is written for a
refused answer); `prose run ... --resume RUN` then continues. See docs/people.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from prose.cli.inputs import EXIT_USAGE, fail

RUNS = Path(".prose") / "runs"


def run_folder(run: str) -> Path:
    """The folder of RUN's questions: a run id under .prose/runs, a run folder, or its trace
    file (a batch row's trace: the `.people` folder beside it)."""
    from prose.runtime.questions import questions_folder

    path = Path(run)
    if path.suffix == ".jsonl":
        return questions_folder(path)
    if path.is_dir():
        return path
    return RUNS / run


def _questions(folder: Path, run: str) -> tuple[dict[str, Any], list[Any]]:
    from prose.runtime.questions import Question, read_pending

    pending = read_pending(folder)
    if pending is None:
        fail(f"run `{run}` is not waiting for anyone: no {folder / 'pending.json'}", EXIT_USAGE)
    return pending, [Question.from_dict(item) for item in pending.get("questions") or ()]


def _choose(questions: list[Any], call: str | None, run: str) -> Any:
    if call is None:
        if len(questions) == 1:
            return questions[0]
        listed = ", ".join(f"{q.id} ({q.target})" for q in questions)
        fail(f"run `{run}` waits on {len(questions)} questions: name one ({listed})", EXIT_USAGE)
    found = [q for q in questions if call in (q.id, q.target)]
    if len(found) != 1:
        listed = ", ".join(f"{q.id} ({q.target})" for q in questions)
        problem = "no question" if not found else "more than one question"
        fail(f"run `{run}` has {problem} `{call}` (questions: {listed})", EXIT_USAGE)
    return found[0]


def _value(text: str | None, file: str | None, schema: dict[str, Any]) -> Any:
    from prose.runtime.questions import parse_answer

    if (text is None) == (file is None):
        fail("give the answer with exactly one of --value TEXT and --file PATH", EXIT_USAGE)
    if text is not None:
        return parse_answer(text, schema)
    from prose.bounded import MAX_TEXT, load_yaml
    from prose.errors import InputReadError, ProseSyntaxError
    from prose.files import read_text

    try:
        body = read_text(str(file), limit=MAX_TEXT)
        if str(file).endswith((".yaml", ".yml")):
            return load_yaml(body, str(file))
        return json.loads(body)
    except InputReadError as error:
        fail(str(error), EXIT_USAGE)
    except ProseSyntaxError as error:
        fail(str(error), 1)
    except ValueError as error:
        fail(f"{file}: not valid JSON: {error}", 1)


@click.command("answer")
@click.argument("run")
@click.argument("call", required=False)
@click.option("--value", "text", metavar="JSON", help="The answer as JSON (text for a text answer).")
@click.option("--file", "file", type=click.Path(dir_okay=False),
              help="The answer from a JSON (or .yaml) file.")
@click.option("--as", "who", metavar="NAME", help="Who answers [default: the OS user].")
@click.option("--note", help="A note kept with the answer (in the trace of the resumed run).")
@click.option("--replace", is_flag=True, help="Replace an answer already given.")
def answer_command(run: str, call: str | None, text: str | None, file: str | None,
                   who: str | None, note: str | None, replace: bool) -> None:
    """Answer a question RUN waits on (CALL: its id or slot; optional when it is the only one).

    The answer is checked against the question's form (the slot's `ensures`
    schema) and refused, naming each field that does not fit, before anything
    is written. Then `prose run ... --resume RUN` continues the run.

    \b
    Examples:
      prose answer 20261206-101500-ab12cd c6 --value '{"decision": "approve", "rationale": "ok", "conditions": []}'
      prose answer 20261206-101500-ab12cd --file ruling.json --as alice --note "per committee minutes"
    Exit codes: 0 recorded, 1 refused (does not fit the form, NAME may not
    answer, already answered), 2 usage (no such run or question, unreadable file).
    """
    from prose.llm.redact import run_secrets
    from prose.llm.schema import validate
    from prose.runtime.people import answer_allowed, default_answerer
    from prose.runtime.questions import (
        answer_path,
        masked_answer,
        now_iso,
        read_answers,
        write_answer,
    )

    folder = run_folder(run)
    pending, questions = _questions(folder, run)
    question = _choose(questions, call, run)
    answerer = who or default_answerer()
    if not answer_allowed(question, answerer):
        fail(f"`{answerer}` may not answer {question.id} ({question.target}); may answer: "
             f"{', '.join(question.may_answer)} (answer --as NAME)", 1)
    earlier = read_answers(folder).get(question.key)
    if earlier is not None and not replace:
        by = (earlier.get("answered") or {}).get("by", "?")
        fail(f"{question.id} ({question.target}) is answered already, by {by} "
             f"({answer_path(folder, question.key)}); --replace to change it", 1)
    # Recorded masked for this environment's secrets, as a run's trace would record it;
    # checked as recorded, so the resumed run takes what `prose answer` accepted.
    value = masked_answer(_value(text, file, question.schema), run_secrets(), question.schema)
    problems = validate(value, question.schema)
    if problems:
        lines = "\n".join(f"  {problem}" for problem in problems)
        fail(f"the answer to {question.id} ({question.target}) does not fit its form; nothing "
             f"was written:\n{lines}", 1)
    answered: dict[str, Any] = {"by": answerer, "at": now_iso(), "via": "prose answer"}
    if note:
        answered["note"] = note
    path = write_answer(folder, question, value, answered, secrets=run_secrets())
    click.echo(f"recorded: {answerer}'s answer to {question.id} ({question.target}): {path}")
    given = read_answers(folder)
    waiting = [q for q in questions if q.key not in given]
    if waiting:
        click.echo(f"still waiting: {', '.join(f'{q.id} ({q.target})' for q in waiting)}")
    elif pending.get("resume"):
        click.echo(f"resume: {pending['resume']}")


@click.command("pending")
@click.argument("where", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the waiting runs as JSON.")
def pending_command(where: str | None, as_json: bool) -> None:
    """List the runs waiting for a person, and their questions.

    WHERE is the folder to look in (default .prose/runs): a batch's traces folder
    lists its waiting rows. A run resumed since (by a run whose trace names it)
    is not listed. Exit codes: 0 listed (nothing waiting included).
    """
    from prose.runtime.questions import PENDING, read_answers, read_pending

    root = Path(where) if where else RUNS
    folders = sorted(p.parent for p in root.rglob(PENDING)) if root.is_dir() else []
    resumed = _resumed()
    out: list[dict[str, Any]] = []
    for folder in folders:
        pending = read_pending(folder)
        if pending is None or str(Path(pending.get("trace") or "").resolve()) in resumed:
            continue
        given = read_answers(folder)
        questions = []
        for item in pending.get("questions") or ():
            answer = given.get(item.get("key"))
            questions.append({
                "question": item.get("id"), "slot": item.get("slot") if item.get("index") is None
                else f"{item.get('slot')}[{item.get('index')}]", "person": item.get("person"),
                "may_answer": item.get("may_answer") or [],
                "answered_by": (answer.get("answered") or {}).get("by") if answer else None,
                "file": str(folder / "questions" / f"{item.get('id')}.md")})
        # A run under .prose/runs is named by its id; a batch row by its trace's path.
        named = (pending.get("run_id", folder.name) if folder.parent.resolve() == RUNS.resolve()
                 else str(pending.get("trace") or folder))
        out.append({"run_id": pending.get("run_id", folder.name), "asked_at":
                    pending.get("asked_at"), "resume": pending.get("resume"),
                    "answer_as": named, "questions": questions})
    if as_json:
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    if not out:
        click.echo("no run is waiting for a person")
        return
    for run in out:
        click.echo(f"{run['run_id']} (asked {run['asked_at']})")
        for item in run["questions"]:
            who = ", ".join(item["may_answer"]) or "anyone"
            state = f"answered by {item['answered_by']}" if item["answered_by"] else "waiting"
            click.echo(f"  {item['question']}  {item['slot']} ({item['person']}; may answer: "
                       f"{who}): {state}: {item['file']}")
        if all(item["answered_by"] for item in run["questions"]):
            if run["resume"]:
                click.echo(f"  resume: {run['resume']}")
        else:
            click.echo(f"  answer: prose answer {run['answer_as']} CALL --value '{{...}}'")


def _resumed() -> set[str]:
    """The traces other runs resumed (their `run_start.resumed_from`), resolved."""
    out: set[str] = set()
    for trace in RUNS.glob("*/trace.jsonl") if RUNS.is_dir() else ():
        try:
            with trace.open(encoding="utf-8") as handle:
                first = json.loads(handle.readline() or "{}")
        except (OSError, ValueError):
            continue
        source = first.get("resumed_from") if isinstance(first, dict) else None
        if source:
            path = Path(source)
            if path.suffix != ".jsonl":
                path = RUNS / source / "trace.jsonl"
            out.add(str(path.resolve()))
    return out
