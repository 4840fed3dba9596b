"""Every shell command the documentation shows runs as written (issue 19).

The commands are read from README.md and docs/tutorial.md (fenced `sh`, `console`,
`bash` and `shell` blocks) and from docs/cli.md (the `Examples:` of every command's
help). Each document runs in its own scratch folder, in order (the tutorial's
`prose new` makes the files its later commands use), with the real `prose` CLI in
this interpreter (`run_prose_in_process`). A command that names a hosted model
(`--model openai/gpt-4o-mini`) reaches a loopback OpenAI-compatible server through
`OPENAI_API_BASE`, which answers every schema with a value of that schema. A command
that cannot run here is listed in `SKIPPED` with its reason; a listed command that
no document shows any more fails the test, so the list cannot go stale.
"""

from __future__ import annotations

import glob
import json
import re
import shlex
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_prose_in_process
from tests.llm_server import FakeLLMServer, Recorded, Reply

DOCS = ("README.md", "docs/tutorial.md", "docs/cli.md")
SHELL_BLOCKS = ("sh", "console", "bash", "shell")

# Any command that installs with pip (the README's quick start) is not run here.
PIP = "a pip install: CI runs the install itself (.ci/run), in a fresh venv"
SKIPPED: dict[str, str] = {
    "ANTHROPIC_API_KEY=... prose run patterns/dialectic.prose.md --model "
    "anthropic/claude-3-5-haiku-latest --input task_brief=\"...\"":
        "needs Anthropic's API (a key and the network); the openai/ line above it runs here",
    "prose run patterns/dialectic.prose.md --model ollama/llama3.1 --input task_brief=\"...\"":
        "needs an Ollama server on localhost:11434",
    "prose run patterns/dialectic.prose.md --bind thesis=openai/gpt-4o-mini --bind "
    "antithesis=ollama/llama3.1 --input task_brief=\"...\"":
        "needs an Ollama server on localhost:11434",
    "prose run examples/summarise-review.yaml --bind worker=openai/gpt-4o-mini --bind "
    "critic=anthropic/claude-3-5-haiku-latest":
        "needs Anthropic's API (a key and the network); the --model line above it runs here",
    "prose run examples/summarise-review.yaml --model ollama/llama3.1":
        "needs an Ollama server on localhost:11434",
    "prose batch summarize.prose.md --inputs big.jsonl --executor ray --address auto":
        "needs a running Ray cluster (tests/test_batch_ray.py starts a local one)",
    "OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 prose export --otel trace.jsonl":
        "sends spans to a collector on the network (tests/test_otel.py uses a loopback one)",
    "prose lsp": "a server that waits for an editor on stdin (tests/test_lsp_server.py drives it)",
    "prose lsp --stdio": "a server that waits for an editor on stdin (tests/test_lsp_server.py)",
    "prose answer 20261206-101500-ab12cd c6 --value '{\"decision\": \"approve\", "
    "\"rationale\": \"ok\", \"conditions\": []}'":
        "answers a run waiting for a person (tests/test_people.py drives a real one)",
    "prose answer 20261206-101500-ab12cd --file ruling.json --as alice --note \"per committee "
    "minutes\"":
        "answers a run waiting for a person (tests/test_people.py drives a real one)",
    "prose report .prose/runs/20260101-120000-abc123/trace.jsonl --open":
        "opens a web browser; `prose report trace.jsonl -o run.html` runs here",
    "prose run examples/code-review/gate.yaml --script examples/code-review/gate.script.yaml "
    "--trace gate.jsonl":
        "runs from a checkout (examples/code-review/), not the tutorial's empty folder; "
        "tests/test_agent_library.py runs it, and its trace's stats and report",
    "prose stats gate.jsonl": "reads the trace of the line above (tests/test_agent_library.py)",
    "prose report gate.jsonl": "reads the trace of the line above (tests/test_agent_library.py)",
}

# Commands whose documented purpose is to report findings: their exit code, and why.
EXPECTED_EXIT: dict[str, tuple[int, str]] = {
    "prose lint --strict-flow patterns/": (
        1, "strict mode reports the implicit flows of two-reviewer-gate (its loop runs the "
           "reviewers again because of their own verdicts), as the README's remark says"),
}

# Paths a command writes outside its folder, kept inside it.
REDIRECTED = {"/tmp/traces": "traces"}


@dataclass(frozen=True)
class Command:
    doc: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


def shell_blocks(doc: str) -> Iterator[Command]:
    """The lines of the fenced shell blocks of `doc`."""
    fence: str | None = None
    lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if fence is None:
            if stripped.startswith("```"):
                fence = stripped[3:].strip() or "text"
            continue
        if stripped.startswith("```"):
            fence = None
            continue
        if fence in SHELL_BLOCKS and stripped and not stripped.startswith("#"):
            yield Command(doc, number, _without_comment(stripped))


def help_examples(doc: str) -> Iterator[Command]:
    """The commands under `Examples:` in the help texts docs/cli.md shows."""
    lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
    inside = False
    for number, line in enumerate(lines, 1):
        if re.match(r"^  Examples?:\s*$", line):
            inside = True
            continue
        if inside and line.startswith("    ") and line.strip():
            yield Command(doc, number, _without_comment(line.strip()))
            continue
        inside = False


def _without_comment(text: str) -> str:
    """The command without a trailing remark: ` # ...` (as the shell reads it) or
    `  (after a crash)` in a help text's example."""
    return re.split(r"\s+#.*$|\s{2,}\(.*$", text)[0].strip()


def commands(doc: str) -> list[Command]:
    return list(help_examples(doc) if doc == "docs/cli.md" else shell_blocks(doc))


def skip_reason(command: Command) -> str | None:
    """Why a command is not run here, or None: it runs."""
    if "pip install" in command.text:
        return PIP
    return SKIPPED.get(command.text)


# --- the loopback model ---------------------------------------------------------------


class SchemaServer(FakeLLMServer):
    """Answers a request with a schema by a value of that schema, any other with text."""

    def __init__(self) -> None:
        super().__init__()
        self._current = threading.local()

    def _enter(self, record: Recorded) -> tuple[int, threading.Event]:
        self._current.body = record.body
        return super()._enter(record)

    def _next(self, model: str) -> Reply:  # type: ignore[override]
        body: dict[str, Any] = getattr(self._current, "body", {}) or {}
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        if schema is None:
            return Reply("A short, concrete answer from the loopback model.")
        return Reply(json.dumps(value_of(schema)))


def value_of(schema: dict[str, Any]) -> Any:
    """A value that the JSON schema accepts (booleans true: a critic's loop converges)."""
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return value_of(schema[key][0])
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {name: value_of(sub) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    return {"boolean": True, "integer": 1, "number": 1, "null": None}.get(str(kind), "ok")


@pytest.fixture(scope="module")
def server() -> Iterator[SchemaServer]:
    with SchemaServer() as running:
        yield running


# --- the folders the documents run in -------------------------------------------------


def _repository_copy(folder: Path, examples: tuple[str, ...] = ()) -> None:
    """patterns/ and examples/ (only those of the `examples` patterns, when given)."""
    shutil.copytree(ROOT / "patterns", folder / "patterns")
    keep = shutil.ignore_patterns("*") if examples else None
    shutil.copytree(ROOT / "examples", folder / "examples", ignore=keep)
    for name in examples:
        for path in (ROOT / "examples").glob(f"{name}.*"):
            shutil.copy(path, folder / "examples" / path.name)


def _prepare(doc: str, folder: Path, env: dict[str, str], base_url: str) -> None:
    """What a document's commands take for granted: the checkout's files, and for the CLI
    reference the files its examples name."""
    if doc == "docs/tutorial.md":
        return  # the tutorial starts from an empty folder
    if doc != "docs/cli.md":
        _repository_copy(folder)
        return
    # The help examples name these two; `prose test` with no path runs every test under
    # the folder, and tests/test_examples.py runs the whole library's already.
    _repository_copy(folder, ("dialectic", "proposer-adversary"))
    # `prose test tests/fixtures/ -k budget`: the passing test fixtures (the failing ones
    # fail on purpose, whatever `-k` selects)
    passing = Path("tests", "fixtures", "ledger", "pass")
    shutil.copytree(ROOT / passing, folder / passing)
    # `prose lint --kind function --kind test packages/`: a function and its test
    (folder / "packages").mkdir()
    for name in ("condense.prose.md", "condense.test.prose.md"):
        shutil.copy(ROOT / "tests" / "fixtures" / "contracts" / "newsroom" / name,
                    folder / "packages" / name)
    models = "\n".join(
        f"  - model_name: {alias}\n    litellm_params: {{ model: openai/gpt-4o-mini, "
        f"api_base: \"{base_url}\", api_key: sk-loopback }}"
        for alias in ("fast", "strong", "strong-alt")
    )
    (folder / "prose.yaml").write_text(f"default_model: fast\nmodel_list:\n{models}\n")
    scripted = ["--script", "examples/proposer-adversary.script.yaml", "-q"]
    pattern_run = ["run", "examples/proposer-adversary.yaml", *scripted]
    for trace in ("trace.jsonl", ".prose/runs/20260101-120000-abc123/trace.jsonl"):
        _ok(run_prose_in_process(*pattern_run, "--trace", trace, cwd=folder, env=env))
    shutil.copy(ROOT / "patterns" / "dialectic.prose.md", folder / "pattern.prose.md")
    shutil.copy(ROOT / "patterns" / "dialectic.prose.md", folder / "my-pattern.prose.md")
    _ok(run_prose_in_process("new", "summarize", "--dir", ".", cwd=folder, env=env))
    rows = [{"task_brief": f"Summarise article {i}."} for i in (1, 2)]
    (folder / "articles.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    # review.yaml: an instance whose pattern takes `task` (mapped from the CSV's pr_text)
    _ok(run_prose_in_process("new", "review", "--dir", ".", cwd=folder, env=env))
    pattern = (folder / "review.prose.md").read_text().replace("task_brief", "task")
    (folder / "review.prose.md").write_text(pattern)
    instance = (folder / "examples" / "review.yaml").read_text().replace("task_brief", "task")
    (folder / "examples" / "review.yaml").write_text(instance)
    (folder / "review.yaml").write_text(instance.replace("../review.prose.md", "review.prose.md"))
    (folder / "prs.csv").write_text('pr_text\n"Fix the retry loop"\n"Add a cache"\n')


def _function_test(folder: Path) -> None:
    """`prose test summarize.test.prose.md --script summarize.script.yaml`: a function
    contract `summarize`, its test and the script (the newsroom fixture's `condense`,
    renamed). In a folder of its own: the batch examples' `summarize.prose.md` is a pattern."""
    newsroom = ROOT / "tests" / "fixtures" / "contracts" / "newsroom"
    folder.mkdir()
    for source, target in (("condense.prose.md", "summarize.prose.md"),
                           ("condense.test.prose.md", "summarize.test.prose.md"),
                           ("condense.test.script.yaml", "summarize.script.yaml")):
        text = (newsroom / source).read_text(encoding="utf-8")
        (folder / target).write_text(text.replace("condense", "summarize"), encoding="utf-8")


# Commands that run in a folder of their own, made by the function.
OWN_FOLDER = {"prose test summarize.test.prose.md --script summarize.script.yaml": _function_test}


def _ok(result: Any) -> None:
    assert result.code == 0, result.output


# --- running one command --------------------------------------------------------------


def run_command(command: Command, folder: Path, env: dict[str, str]) -> Any:
    """Run one documented command in `folder`; `export NAME=VALUE` sets `env` for the rest."""
    words = shlex.split(command.text)
    if words[0] == "export":
        name, _, value = words[1].partition("=")
        env[name] = value
        return None
    own = dict(env)
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        name, _, value = words.pop(0).partition("=")
        own[name] = value
    output: str | None = None
    if ">" in words:
        at = words.index(">")
        output, words = words[at + 1], words[:at]
    assert words[0] == "prose", f"{command}: only `prose` commands are run; add it to SKIPPED"
    arguments = [_argument(word, folder) for word in words[1:]]
    arguments = [item for word in arguments for item in word]
    result = run_prose_in_process(*arguments, cwd=folder, env=own)
    if output is not None:
        (folder / output).write_text(result.stdout)
    return result


def _argument(word: str, folder: Path) -> list[str]:
    if word in REDIRECTED:
        return [str(folder / REDIRECTED[word])]
    if "<run-id>" in word:
        runs = sorted((folder / ".prose" / "runs").iterdir())
        assert runs, "a `<run-id>` command needs an earlier run in the same document"
        return [word.replace("<run-id>", runs[-1].name)]
    if "*" in word:
        found = sorted(glob.glob(word, root_dir=folder))
        assert found, f"`{word}` matches nothing"
        return found
    return [word]


# --- the tests ------------------------------------------------------------------------


@pytest.mark.parametrize("doc", DOCS)
def test_every_command_in_the_document_runs_as_written(
    doc: str, tmp_path: Path, server: SchemaServer
) -> None:
    env = {"OPENAI_API_BASE": server.base_url, "OPENAI_API_KEY": "sk-loopback", "NO_COLOR": "1"}
    _prepare(doc, tmp_path, env, server.base_url)
    ran = 0
    for command in commands(doc):
        if skip_reason(command) is not None:
            continue
        own = OWN_FOLDER.get(command.text)
        folder = tmp_path / f"own-{command.line}" if own is not None else tmp_path
        if own is not None:
            own(folder)
        result = run_command(command, folder, env)
        if result is None:
            continue
        ran += 1
        expected = EXPECTED_EXIT.get(command.text, (0, ""))[0]
        assert result.code == expected, f"{command}\nexit {result.code}\n{result.output}"
    assert ran >= 5, f"{doc}: only {ran} command(s) found: is the extraction broken?"


def test_every_skipped_command_is_still_in_the_documents() -> None:
    shown = {command.text for doc in DOCS for command in commands(doc)}
    stale = [text for text in [*SKIPPED, *EXPECTED_EXIT, *OWN_FOLDER] if text not in shown]
    assert stale == [], "no document shows these any more: remove them from SKIPPED"


def test_the_tutorial_runs_against_a_model_with_the_scaffold_aliases_undefined(
    tmp_path: Path, server: SchemaServer
) -> None:
    # Section 5: the instance binds `fast` and `strong`, no prose.yaml defines them, and
    # --model routes both to the loopback model (before: LiteLLM's "LLM Provider NOT
    # provided ... model=fast", exit 4).
    env = {"OPENAI_API_BASE": server.base_url, "OPENAI_API_KEY": "sk-loopback"}
    _ok(run_prose_in_process("new", "summarise-review", "--dir", ".", cwd=tmp_path, env=env))
    server.reset()
    result = run_prose_in_process("run", "examples/summarise-review.yaml", "--model",
                                  "openai/gpt-4o-mini", cwd=tmp_path, env=env)
    assert result.code == 0, result.output
    assert "note: the model aliases `fast`, `strong` are defined nowhere" in result.stderr
    assert "using openai/gpt-4o-mini (from --model)" in result.stderr
    assert set(server.models_called()) == {"gpt-4o-mini"}


def test_the_extraction_finds_the_commands_and_drops_remarks() -> None:
    cli = [command.text for command in commands("docs/cli.md")]
    assert "prose fmt patterns/" in cli  # "  # every *.prose.md under it" dropped
    assert "prose batch summarize.prose.md --inputs articles.jsonl --resume" in cli
    quick_start = [c for c in commands("README.md") if skip_reason(c) == PIP]
    assert len(quick_start) == 2  # the README's two commands (pip, then prose run / pytest)
    tutorial = [command.text for command in commands("docs/tutorial.md")]
    assert tutorial[0] == "prose new summarise-review --dir ."
    assert "prose audit run.jsonl" in tutorial
