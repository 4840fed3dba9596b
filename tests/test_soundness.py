"""Soundness: the linter's information hiding over-approximates what a run does.

Hypothesis generates whole patterns (tests/soundness_programs.py) with
checkable invariants (`never sees`, `never sees ..., even indirectly`, `is
unaware of`, `are independent`), lints each one, and runs it with the
scripted model. Every scripted reply carries a marker naming its slot
(`MARK-adversary-3`), so the messages of every call the run sent show whose
output they copy. Then:

1. a run the policy stopped (exit 5) must have been flagged by the linter
   at that call;
2. a sent call of slot A whose messages carry a marker of B, where A must
   not see B, must have been flagged by the linter at that call; for the
   `even indirectly` form the markers are followed through calls too (a
   call's reply carries whatever its messages carried);
3. a sent call of A whose literal text names B, B's role word or the
   pattern, where A is unaware of B, must have been flagged at that call;
4. the run-time policy must not have sent a call of 2. or 3. at all.

"Flagged at that call" means an information-hiding error whose primary line
is the call's head or one of its property lines and whose message names A.

`sees only`, `each A sees only its own chain`, `A runs only if `gate.ok``
(a condition no program binds: every call of A is stopped, so the linter must
find every place A may be called), `at most one of A, B runs` (per run or
per iteration), `A runs at most once` and `every call of A gets the same `text``
invariants are generated too, and so are `` the returned `result` carries only / never
carries `A` `` (a result the run time failed, R061, must be flagged by PH642 at the
program's `return`) and `` `A` is never told `w` `` (checked like 3., by PH606, for that
word). `` `progress` grows only after `A` returns `ok` == true `` (programs with it bind
`progress` and grow it, under a test of an approval or not: a growth the run time
stopped must be flagged by PH643 at that statement), `` `A` runs only after `B` returns
`ok` == true `` and `` `A` gets the same `text` `B` got `` (programs with them call `A`
under a test of `B`'s reply, or after a call of `B` given the same name, sometimes with
another call of `B` in between: a call the run time stopped must be flagged by PH631 or
PH632) are drawn too, and so is `` `A` is blind to the source of `samplers` `` (a
list-valued slot declared by the patterns with it, bound to two scripted services;
programs collect its outputs in binding order, sometimes with the loop counter, and hand
them to A shuffled or not: a call the run time stopped must be flagged by PH634); each of
these four also by a seeded sample of its own.
One pattern in five sets
`flow: strict`; those are checked through 1. only (the markers say nothing about input names, branches or implicit
flows). A string config key's default, sometimes naming a slot, is the
pattern's own literal text.

Which programs are skipped: those that do not parse (PS001), and those the
linter rejects as unable to run (`CANNOT_RUN`) when the run agrees by
stopping with the matching run-time error. A program the linter calls
broken but that runs anyway is kept: its `undefined name` findings are
exactly where the analysis lost a binding (a block defined inside an `if`,
a `let` nested in a parallel branch), so that is where leaks hide.

The precision of the linter (programs it flags whose run is clean) is not
asserted, only reported: hypothesis statistics (`pytest
--hypothesis-show-statistics`), a summary printed after the test, and a
JSON file when `PROSE_SOUNDNESS_REPORT` names one.

The counterexamples this test found, and issue 40's cases of a later call of an
approver, are kept as fixed programs in tests/test_soundness_cases.py.

A failure is reported with the program as generated and a minimised one
(statements deleted while the same check still fails; `minimise`), each
with the lint errors, how the run ended and the leaking call's messages.
Hypothesis' own shrinking is off because it takes minutes here.

    .venv/bin/pytest tests/test_soundness.py                    # 150 examples
    PROSE_THOROUGH=1 .venv/bin/pytest tests/test_soundness.py   # 1,500 (docs/testing.md)
    PROSE_SOUNDNESS_EXAMPLES=3000 .venv/bin/pytest tests/test_soundness.py
    PROSE_SOUNDNESS_SECONDS=3600 .venv/bin/pytest -n 0 -s tests/test_soundness.py  # an hour

Environment: `PROSE_SOUNDNESS_EXAMPLES` (default 150, 1,500 with `PROSE_THOROUGH=1`),
`PROSE_SOUNDNESS_SHRINK=1` (also let hypothesis shrink),
`PROSE_SOUNDNESS_MINIMISE_SECONDS` (default 60), `PROSE_SOUNDNESS_REPORT`
(a path for the statistics). With `CI` set the examples are derandomized,
so a failure reproduces run after run.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, seed, settings

from prose.check import lint_text
from prose.diagnostics.model import Diagnostic, Severity
from prose.llm import Script
from prose.runtime import RunOptions, RunResult, run_pattern
from tests.conftest import examples
from tests.soundness_programs import (
    GATED_FORMS,
    MARKER_PREFIX,
    GeneratedPattern,
    Invariant,
    describe_failures,
    forbidden_words,
    patterns,
    script_for,
)

EXAMPLES = int(os.environ.get("PROSE_SOUNDNESS_EXAMPLES", str(examples(150, 1500))))
GATED_EXAMPLES = 30  # a fixed sample (seeded) of patterns with each of GATED_FORMS
# The thorough run: rounds of ROUND fresh examples until this many seconds have passed.
SECONDS = float(os.environ.get("PROSE_SOUNDNESS_SECONDS", "0"))
ROUND = 100
# Hypothesis' shrinking costs minutes here; `minimise` does the job in seconds.
SHRINK = os.environ.get("PROSE_SOUNDNESS_SHRINK", "") not in ("", "0")
PHASES = tuple(phase for phase in Phase if SHRINK or phase not in (Phase.shrink, Phase.explain))
MINIMISE_SECONDS = float(os.environ.get("PROSE_SOUNDNESS_MINIMISE_SECONDS", "60"))
INFORMATION_HIDING = "information-hiding"
# The control-flow invariants (`runs only if`, `at most one of`): a call the run time stops
# for one (R060, exit 5) must be flagged by its rule at that call.
GATE_CODES = frozenset({"PH630", "PH631", "PH632", "PH633", "PH643"})
# A growth the run time stopped (R060, rule `grows-only-after`) must be flagged by PH643 at
# that statement; a result the run time failed for `the returned ... carries` (R061) by
# PH642 at the program's `return`.
GROWTH_RULE, GROWTH_CODE = "grows-only-after", "PH643"
CARRIES_CODE = "PH642"
BRACKETED = re.compile(r"\{ [^{}]*\}|(?<![\w\]])\[[^\[\]]*\]")  # an innermost object or array literal
MARKER = re.compile(rf"{MARKER_PREFIX}-([a-z]+)-(\d+)[a-z]?")

# Lint errors that say the program cannot run, with the run-time errors that
# confirm it (docs/language-runtime-decisions.md). A program with one of these
# is skipped only when its run stops with one of the confirming codes.
CANNOT_RUN: dict[str, frozenset[str]] = {
    "PN101": frozenset({"R002"}),  # undefined name
    "PN102": frozenset({"R002", "R004"}),  # unknown call target
    "PN103": frozenset({"R003"}),  # assignment to a read-only name
    "PN108": frozenset({"R004", "R002"}),  # block arity
    "PF201": frozenset({"R015"}),  # break/continue outside a loop
    "PF202": frozenset({"R001"}),  # orphan else/catch
    "PF204": frozenset({"R006"}),  # two parallel branches bind one name
    "PF205": frozenset({"R006"}),  # a parallel branch assigns an outer name
}

STATS: Counter[str] = Counter()

# Cancelled parallel branches can leave a scripted reply's coroutine unawaited;
# that is the runtime's business (and harmless here), not this property's.
pytestmark = pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")


# --- what the run did --------------------------------------------------------------------


@dataclass(frozen=True)
class Leak:
    """A sent call that carried what an invariant forbids."""

    viewer: str
    source: str
    how: str  # direct, transitive or words
    line: int
    messages: list[dict[str, Any]]
    evidence: str

    def describe(self) -> str:
        what = {
            "direct": f"carries output of `{self.source}` ({self.evidence})",
            "transitive": f"carries something derived from `{self.source}` ({self.evidence})",
            "words": f"has literal text naming `{self.evidence}` (unaware of `{self.source}`)",
            "told": f"has literal text holding `{self.source}` (never told it)",
        }[self.how]
        sent = "\n".join(f"    [{m.get('role')}] {_content(m)}".replace("\n", "\n      ")
                         for m in self.messages)
        return f"the call to `{self.viewer}` at line {self.line} {what}; it sent:\n{sent}"


def _content(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    return content if isinstance(content, str) else json.dumps(content)


def whole_word(word: str) -> re.Pattern[str]:
    """`word` as a whole word, ignoring case; `_` and `-` separate words (LANGUAGE.md 1.1)."""
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", re.IGNORECASE)


def leaks(pattern: GeneratedPattern, events: list[Any]) -> Iterator[Leak]:
    """The sent calls that break an invariant, judged from the markers in their messages."""
    rules = [rule for invariant in pattern.invariants for rule in invariant.rules()]
    derived: dict[tuple[str, str], frozenset[str]] = {}  # marker -> slots it was computed from
    for call in (e for e in events if e.type == "call"):
        text = "\n".join(_content(message) for message in call.messages)
        marks = set(MARKER.findall(text))
        direct = {slot for slot, _ in marks}
        transitive = set(direct).union(*(derived.get(mark, frozenset()) for mark in marks))
        literal = MARKER.sub(" ", text)
        for viewer, source, how in rules:
            if call.slot != viewer:
                continue
            if how == "direct" and source in direct:
                shown = sorted(f"{MARKER_PREFIX}-{s}-{i}" for s, i in marks if s == source)
                yield Leak(viewer, source, how, call.line, call.messages, ", ".join(shown))
            elif how == "transitive" and source in transitive:
                shown = sorted(f"{MARKER_PREFIX}-{s}-{i}" for s, i in marks)
                yield Leak(viewer, source, how, call.line, call.messages, ", ".join(shown))
            elif how == "told":
                if whole_word(source).search(literal):
                    yield Leak(viewer, source, how, call.line, call.messages, source)
            elif how == "words":
                for word in forbidden_words(source):
                    if whole_word(word).search(literal):
                        yield Leak(viewer, source, how, call.line, call.messages, word)
                        break
        produced = json.dumps([call.output, call.error])
        for mark in MARKER.findall(produced):
            derived[mark] = frozenset({call.slot, *transitive})


# --- what the linter said ------------------------------------------------------------------


def call_lines(text: str, line: int) -> range:
    """The markdown lines of the call whose head is on `line`: the head and its properties."""
    lines = text.splitlines()
    head = lines[line - 1]
    depth = len(head) - len(head.lstrip())
    end = line
    while end < len(lines) and lines[end].strip() and \
            len(lines[end]) - len(lines[end].lstrip()) > depth and \
            not lines[end].strip().startswith(("call ", "let ", "```")):
        end += 1
    return range(line, end + 1)


def flagged(text: str, errors: list[Diagnostic], line: int, viewer: str) -> bool:
    """Whether the linter reported an information-hiding error about `viewer` at that call."""
    where = call_lines(text, line)
    return any(d.span.line in where and whole_word(viewer).search(d.message) for d in errors)


def render(diagnostics: list[Diagnostic]) -> str:
    return "\n".join(f"    {d.code} line {d.span.line}: {d.message}" for d in diagnostics) or "    (none)"


# --- the property ----------------------------------------------------------------------------


def run(pattern: GeneratedPattern, path: Path) -> RunResult:
    options = RunOptions(inputs={"task_brief": "the brief"},
                         script=Script.from_mapping(pattern.script),
                         trace_path=path.with_name("trace.jsonl"))
    return asyncio.run(run_pattern(path, options))


@dataclass
class Outcome:
    """What lint and the run did with one pattern, and which check (if any) failed."""

    pattern: GeneratedPattern
    diagnostics: list[Diagnostic]
    result: RunResult
    leaks: list[Leak]
    skipped: str | None = None
    failure: str | None = None  # stopped, sent, words or run-time
    detail: str = ""

    @property
    def errors(self) -> list[Diagnostic]:
        """The linter's information-hiding errors."""
        return [d for d in self.diagnostics
                if (d.category == INFORMATION_HIDING or d.code in GATE_CODES)
                and d.severity is Severity.ERROR]

    def report(self) -> str:
        errors = [d for d in self.diagnostics if d.severity is Severity.ERROR]
        error = self.result.error
        stopped = "none"
        if error is not None:
            stopped = error.format()
            if error.span is not None:
                stopped = stopped.replace(str(error.span.file), Path(error.span.file).name)
        return (
            f"{self.detail}\n\n{self.pattern.numbered()}\n"
            f"Lint errors:\n{render(errors)}\n"
            f"Run: exit {self.result.exit_code}; error: {stopped}\n"
            f"{describe_failures(self.pattern.script)}\n"
        )


# The failures that say the linter missed what the run did, and those that say the run
# time let a forbidden flow through (a leak the labels and the content check both missed).
STATIC_UNSOUND = frozenset({"stopped", "sent", "words", "grown", "returned"})
RUN_TIME_UNSOUND = frozenset({"sent", "words", "run-time"})

FAILURES = {
    "stopped": "The run-time policy stopped a call that the linter did not flag.",
    "sent": "The run sent a call carrying a forbidden slot's output; neither the linter "
            "nor the run-time policy caught it.",
    "words": "The run sent literal text that an `is unaware of` invariant forbids; neither "
             "the linter nor the run-time policy caught it.",
    "grown": "The run time stopped a growth (`grows only after`) that the linter did not "
             "flag (PH643) at that statement.",
    "returned": "The run time failed the returned result (`the returned ... carries`) and "
                "the linter did not flag the program's `return` (PH642).",
    "run-time": "The linter flagged the call, but the run-time policy sent it anyway.",
}


def coded_at(errors: list[Diagnostic], code: str, line: int) -> bool:
    """Whether the linter reported `code` with its primary line at `line`."""
    return any(d.code == code and d.span.line == line for d in errors)


def evaluate(pattern: GeneratedPattern) -> Outcome:
    """Lint and run `pattern`, then check that lint over-approximates what the run did."""
    with tempfile.TemporaryDirectory(prefix="prose-soundness-") as directory:
        path = Path(directory) / "generated.prose.md"
        path.write_text(pattern.text, encoding="utf-8")
        diagnostics = list(lint_text(pattern.text, str(path)).diagnostics)
        result = run(pattern, path)
    outcome = Outcome(pattern, diagnostics, result, list(leaks(pattern, result.events)))
    outcome.skipped = why_skip(diagnostics, result)
    if outcome.skipped is not None:
        return outcome
    error = result.error
    if (result.exit_code == 5 and error is not None and error.span is not None
            and GROWTH_RULE in getattr(error, "rules", ())):
        if not coded_at(outcome.errors, GROWTH_CODE, error.span.line):
            outcome.failure = "grown"
            outcome.detail = (f"the growth at line {error.span.line} was stopped by the run "
                              f"time ({error.message}); the linter reported no {GROWTH_CODE} "
                              "there")
            return outcome
    elif error is not None and error.code == "R061" and "the returned `" in error.message:
        end = pattern.program_start + len(pattern.program.splitlines()) - 1  # the `return`
        if not coded_at(outcome.errors, CARRIES_CODE, end):
            outcome.failure = "returned"
            outcome.detail = (f"the run time failed the result ({error.message}); the linter "
                              f"reported no {CARRIES_CODE} at the `return` (line {end})")
            return outcome
    elif result.exit_code == 5 and error is not None and error.span is not None:
        if not flagged(pattern.text, outcome.errors, error.span.line, error.slot or ""):
            outcome.failure = "stopped"
            outcome.detail = (f"the call to `{error.slot}` at line {error.span.line} was stopped "
                              "by the run-time policy; the linter reported nothing there")
            return outcome
    for how, failure in (("direct", "sent"), ("transitive", "sent"), ("words", "words"),
                         ("told", "words")):
        for leak in outcome.leaks:
            if leak.how == how and not flagged(pattern.text, outcome.errors, leak.line, leak.viewer):
                outcome.failure, outcome.detail = failure, leak.describe()
                return outcome
    if outcome.leaks:
        outcome.failure = "run-time"
        outcome.detail = "\n".join(leak.describe() for leak in outcome.leaks)
    return outcome


def why_skip(diagnostics: list[Diagnostic], result: RunResult) -> str | None:
    """Programs that do not parse, or that lint and run agree cannot run."""
    codes = {d.code for d in diagnostics if d.severity is Severity.ERROR}
    if "PS001" in codes:
        return "syntax error"
    spec_errors = [d for d in diagnostics if d.code.startswith("PS1") and d.severity is Severity.ERROR]
    assert not spec_errors, f"the generator wrote a broken pattern:\n{render(spec_errors)}"
    assert not [e for e in result.events if e.type == "judge"], "the generator wrote discretion text"
    if result.error is not None and any(
            result.error.code in CANNOT_RUN[code] for code in codes & set(CANNOT_RUN)):
        return "cannot run (lint and run agree)"
    return None


# --- minimising a counterexample -----------------------------------------------------------------


def statements(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) of every line with the deeper-indented lines after it (its body)."""
    spans = []
    for first, line in enumerate(lines):
        depth = len(line) - len(line.lstrip())
        end = first + 1
        while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) > depth:
            end += 1
        spans.append((first, end))
    return spans


def minimise(outcome: Outcome, budget_s: float = MINIMISE_SECONDS) -> Outcome:
    """A smaller program on which the same check fails, found within `budget_s` seconds.

    Tries one invariant instead of all, a script without failures, then
    repeatedly: deleting a statement (with its body), replacing a compound
    statement by its body, and replacing a bracketed literal by `task_brief`.
    """
    deadline = time.monotonic() + budget_s
    best = outcome

    def attempt(lines: list[str], invariants: tuple[Invariant, ...] | None = None,
                script: dict[str, Any] | None = None) -> bool:
        nonlocal best
        if time.monotonic() > deadline:
            return False
        trial = evaluate(best.pattern.rebuild("\n".join(lines), invariants, script))
        if trial.failure == outcome.failure and trial.skipped is None:
            best = trial
            return True
        return False

    def program() -> list[str]:
        return best.pattern.program.splitlines()

    for invariant in outcome.pattern.invariants:
        if len(outcome.pattern.invariants) > 1 and attempt(program(), (invariant,)):
            break
    attempt(program(), script=script_for([True], {}))
    attempt([*program()[:-1], "return { result: task_brief }"])
    while time.monotonic() < deadline and any(_smaller(program(), attempt)):
        pass
    return best


def _smaller(lines: list[str], attempt: Callable[[list[str]], bool]) -> Iterator[bool]:
    """Try each simplification of `lines` once; yields True (and stops) at the first that works."""
    for first, end in sorted(statements(lines[:-1]), key=lambda span: span[0] - span[1]):
        if attempt(lines[:first] + lines[end:]):
            yield True
            return
        header = lines[first].strip()
        if header.endswith(":") and end > first + 1 and not header.startswith("block "):
            if attempt(lines[:first] + [line[2:] for line in lines[first + 1:end]] + lines[end:]):
                yield True
                return
    for number, line in enumerate(lines[:-1]):
        for literal in BRACKETED.finditer(line):
            simpler = line[:literal.start()] + "task_brief" + line[literal.end():]
            if attempt([*lines[:number], simpler, *lines[number + 1:]]):
                yield True
                return
    yield False


# --- the test ------------------------------------------------------------------------------------


def record_statistics(outcome: Outcome) -> None:
    if outcome.skipped is not None:
        STATS[f"skipped: {outcome.skipped}"] += 1
        event(f"skipped: {outcome.skipped}")
        return
    result, errors = outcome.result, outcome.errors
    mode = "strict" if outcome.pattern.strict else "normal"
    STATS["examples"] += 1
    STATS[f"{mode}: programs"] += 1
    STATS[f"{mode}: unsound, static"] += outcome.failure in STATIC_UNSOUND
    STATS[f"{mode}: unsound, run time"] += outcome.failure in RUN_TIME_UNSOUND
    if errors:
        STATS[f"{mode}: lint flagged"] += 1
        STATS[f"{mode}: lint flagged, run clean"] += (result.exit_code == 0 and not outcome.leaks)
    STATS[f"exit {result.exit_code}"] += 1
    event(f"exit {result.exit_code}")
    for construct in outcome.pattern.constructs:
        STATS[f"construct: {construct}"] += 1
    for form in {invariant.form for invariant in outcome.pattern.invariants}:
        STATS[f"form: {form}"] += 1
    if result.error is not None:
        STATS[f"stopped by {result.error.code}"] += 1
    if errors:
        STATS["lint flagged"] += 1
        if result.exit_code == 0 and not outcome.leaks:
            STATS["lint flagged, run clean (exit 0, nothing leaked)"] += 1
            event("precision: flagged, but the run was clean")
        elif result.exit_code == 5 or outcome.leaks:
            event("flagged, and the run leaked or was stopped")
    if outcome.failure is not None:
        STATS[f"failed: {outcome.failure}"] += 1


def check_pattern(pattern: GeneratedPattern) -> None:
    """The property for one generated pattern (see the module docstring)."""
    outcome = evaluate(pattern)
    record_statistics(outcome)
    assume(outcome.skipped is None)
    if outcome.failure is not None:
        smaller = minimise(outcome)
        raise AssertionError(
            f"{FAILURES[outcome.failure]}\n\n"
            f"Minimised:\n  {smaller.report()}\n"
            f"As generated:\n  {outcome.report()}"
        )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    phases=PHASES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                           HealthCheck.data_too_large],
    print_blob=True,
)
@given(pattern=patterns())
def test_lint_over_approximates_the_run(pattern: GeneratedPattern) -> None:
    check_pattern(pattern)


@pytest.mark.parametrize("form", GATED_FORMS)
def test_gated_forms_on_a_fixed_sample(form: str) -> None:
    """`grows only after`, `runs only after` and `gets the same ... got` on a fixed sample
    each (a random draw holds one of them now and then: this makes sure every run does)."""
    @seed(40)
    @settings(max_examples=GATED_EXAMPLES, deadline=None, database=None,
              phases=(Phase.generate,),
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                     HealthCheck.data_too_large])
    @given(pattern=patterns(required=(form,)))
    def check(pattern: GeneratedPattern) -> None:
        check_pattern(pattern)

    check()


@pytest.mark.skipif(not SECONDS, reason="the thorough run: PROSE_SOUNDNESS_SECONDS=3600")
def test_lint_over_approximates_the_run_for_a_while() -> None:
    """Rounds of fresh random examples (no database, not derandomized) until
    `PROSE_SOUNDNESS_SECONDS` have passed: an hour's run draws thousands of programs."""
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        one_round = settings(
            max_examples=ROUND, deadline=None, database=None, derandomize=False, phases=PHASES,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                   HealthCheck.data_too_large],
        )(given(pattern=patterns())(check_pattern))
        one_round()


@pytest.fixture(scope="module", autouse=True)
def _summary(pytestconfig: pytest.Config) -> Iterator[None]:
    """After the module: how many programs ran, how they ended, and the linter's precision."""
    STATS.clear()
    yield
    flagged_runs = STATS["lint flagged"]
    false_alarms = STATS["lint flagged, run clean (exit 0, nothing leaked)"]
    ratio = f"{false_alarms}/{flagged_runs}" + (
        f" = {false_alarms / flagged_runs:.0%}" if flagged_runs else "")
    lines = [f"soundness: {STATS['examples']} programs checked; flagged by lint but clean "
             f"when run: {ratio}"]
    for mode in ("normal", "strict"):
        flagged, clean = STATS[f"{mode}: lint flagged"], STATS[f"{mode}: lint flagged, run clean"]
        lines.append(f"  {mode} mode: {STATS[f'{mode}: programs']} programs, unsound statically "
                     f"{STATS[f'{mode}: unsound, static']}, unsound at run time "
                     f"{STATS[f'{mode}: unsound, run time']}, false alarms {clean}/{flagged}")
    lines += [f"  {key}: {value}" for key, value in sorted(STATS.items())]
    target = os.environ.get("PROSE_SOUNDNESS_REPORT")
    if target:
        Path(target).write_text(json.dumps(dict(STATS), indent=2, sort_keys=True) + "\n")
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    if capture is None:
        print("\n".join(lines))
        return
    with capture.global_and_fixture_disabled():
        print("\n" + "\n".join(lines))
