"""`prose test` on `kind: test` contracts: fixtures in, the subject run, assertions judged.

A `kind: test` file names its `subject:` (a function, found as a call would
find it: `prose.contracts.resolve_call`, or a path ending in `.prose.md`),
supplies `### Fixtures` as the subject's inputs, and states `### Expects` and
`### Expects Not` in natural language. `prose test` runs the subject with a
script (`NAME.script.yaml` beside the test, `NAME` being the test file's name
without `.prose.md`, or `--script`) and then judges every assertion:

- an assertion about a key (`` - `summary`: ... ``) fails outright when the
  result has no such key;
- otherwise the judge decides whether the statement holds of the value; in a
  scripted test the verdict is the script's `conditions:` entry for the
  statement's text (true: it holds). An `### Expects` passes when it holds,
  an `### Expects Not` when it does not. An assertion with no scripted
  verdict fails, naming the entry to add.

A subject that is a responsibility or a gateway is a standing job that
prose does not run (docs/contracts.md): its test is skipped, with the reason.
A subject that is a pattern is refused (OpenProse: tests do not run patterns).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prose.llm.script import Script
    from prose.pattern_file import PatternFiles
    from prose.spec.model import Expectation, PatternSpec

SUFFIX = ".prose.md"


@dataclass
class ContractTestOutcome:
    """One test: passed, failed (with reasons) or skipped (with why), and each assertion."""

    name: str
    file: str
    reasons: list[str] = field(default_factory=list)
    skipped: str | None = None
    assertions: list[tuple[str, bool]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.skipped is None and not self.reasons


def is_contract_test(path: Path) -> bool:
    """Whether `path` is a `*.prose.md` file whose frontmatter says `kind: test`."""
    import re

    if not path.name.endswith(SUFFIX):
        return False
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return False
    match = re.match(r"\s*---\n(.*?)\n(?:---|\.\.\.)", head, re.S)
    return bool(match and re.search(r"^kind:\s*['\"]?test['\"]?\s*$", match.group(1), re.M))


def find_contract_tests(paths: Iterable[str]) -> list[Path]:
    """The `kind: test` files among PATHS (folders searched recursively)."""
    out: list[Path] = []
    for given in paths:
        path = Path(given)
        candidates = sorted(path.rglob("*" + SUFFIX)) if path.is_dir() else [path]
        out.extend(candidate for candidate in candidates if is_contract_test(candidate))
    return out


def resolve_subject(test: PatternSpec) -> Path | None:
    """The subject's file: a path (relative to the test) or a name resolved like a call."""
    from prose.contracts import resolve_call

    subject = test.subject or ""
    if subject.endswith(SUFFIX) or "/" in subject:
        candidate = Path(test.path).parent / (subject if subject.endswith(SUFFIX)
                                              else subject + SUFFIX)
        return candidate if candidate.is_file() else None
    found = resolve_call(subject, test.path, [])
    return Path(found) if found is not None and not found.startswith("#") else None


def script_for(test_path: Path, given: str | None) -> Path | None:
    """`--script`, else `NAME.script.yaml` beside the test file."""
    if given is not None:
        return Path(given)
    beside = test_path.with_name(test_path.name[: -len(SUFFIX)] + ".script.yaml")
    return beside if beside.is_file() else None


async def run_contract_test(path: Path, *, script: str | None = None,
                            files: PatternFiles | None = None) -> ContractTestOutcome:
    """Run one `kind: test` file; never raises for a problem in the test or its subject."""
    from prose.errors import ProseError
    from prose.llm.script import Script
    from prose.pattern_file import PatternFiles

    files = files if files is not None else PatternFiles()
    outcome = ContractTestOutcome(path.name[: -len(SUFFIX)], str(path))
    try:
        test = files.get(path).spec
    except ProseError as error:
        outcome.reasons.append(str(error))
        return outcome
    if test is None or not test.subject:
        outcome.reasons.append("the test names no `subject:` in its frontmatter")
        return outcome
    outcome.name = test.name or outcome.name
    target = resolve_subject(test)
    if target is None:
        outcome.reasons.append(f"the subject `{test.subject}` is found nowhere (no sibling "
                               f"contract has that name)")
        return outcome
    try:
        subject = files.get(target)
    except ProseError as error:
        outcome.reasons.append(f"the subject: {error}")
        return outcome
    spec = subject.spec
    if spec is None:
        outcome.reasons.append(f"the subject {target} cannot be read")
        return outcome
    if spec.kind in ("responsibility", "gateway", "system"):
        outcome.skipped = (f"the subject `{test.subject}` is a {spec.kind}, a standing job prose "
                           "does not run")
        return outcome
    if spec.kind == "pattern":
        outcome.reasons.append(f"the subject `{test.subject}` is a pattern; a test runs a "
                               "function (instantiate the pattern in one)")
        return outcome
    missing = [p.name for p in spec.required_inputs() if p.name not in test.fixtures]
    if missing:
        outcome.reasons.append("### Fixtures does not supply " + ", ".join(f"`{m}`" for m in missing))
        return outcome
    script_path = script_for(path, script)
    if script_path is None:
        outcome.reasons.append(f"no script: write {path.name[: -len(SUFFIX)]}.script.yaml beside "
                               "the test, or pass --script")
        return outcome
    try:
        scripted = Script.from_file(script_path)
    except ProseError as error:
        outcome.reasons.append(str(error))
        return outcome
    value = await _run_subject(subject, test, scripted, files, outcome)
    if outcome.reasons:
        return outcome
    for expectation in test.expectations:
        verdict = _judge(expectation, value, scripted)
        outcome.assertions.append((expectation.statement, verdict is None))
        if verdict is not None:
            outcome.reasons.append(verdict)
    return outcome


async def _run_subject(subject: Any, test: PatternSpec, script: Script, files: PatternFiles,
                       outcome: ContractTestOutcome) -> Any:
    from prose.runtime import RunOptions, run_pattern

    known = {p.name for p in subject.spec.parameters}
    inputs = {name: value for name, value in test.fixtures.items() if name in known}
    try:
        result = await run_pattern(subject, RunOptions(inputs=inputs, script=script,
                                                       write_trace=False, files=files))
    except Exception as error:  # a crash fails this test, not the whole command
        outcome.reasons.append(f"the run crashed: {type(error).__name__}: {error}")
        return None
    if result.exit_code != 0:
        message = result.error.message if result.error is not None else "no message"
        outcome.reasons.append(f"the subject's run ended with exit {result.exit_code}: {message}")
    return result.value


def _judge(expectation: Expectation, value: Any, script: Script) -> str | None:
    """Why the assertion fails, or None when it passes."""
    from prose.llm.errors import LLMError
    from prose.llm.script import condition_key

    subject = expectation.subject
    if subject is not None:
        if not isinstance(value, dict) or subject not in value:
            return f"{expectation.span.line}: the result has no `{subject}` ({expectation.statement})"
        value = value[subject]
    key = condition_key(expectation.text)
    messages = [{"role": "user", "content": f"{expectation.statement}\n\n"
                 + json.dumps(value, ensure_ascii=False, default=str)}]
    try:
        reply = script.serve(key, messages)
    except LLMError:
        return (f"{expectation.span.line}: no scripted verdict for `{expectation.text}` (add it "
                "under `conditions:` in the script: true when it holds)")
    try:
        answer = json.loads(reply.text)
    except ValueError:
        answer = reply.text
    holds = answer.get("answer") if isinstance(answer, dict) else answer
    if not isinstance(holds, bool):
        return f"{expectation.span.line}: the verdict for `{expectation.text}` is not true/false"
    if holds == expectation.negated:
        return f"{expectation.span.line}: {expectation.statement} (the judge: it "\
               + ("holds" if holds else "does not hold") + ")"
    return None
