"""Fuzz every file reader with mutations of real files (issue 14): each either reads the
file or raises one of our documented errors; never another exception.

The mutations: bytes flipped, inserted or deleted, the file cut short, YAML anchors
and aliases (self-references, alias bombs, merge keys), deep nesting, invalid
UTF-8, and scalars up to the size bound. A call stays short because the readers
are bounded (`prose.bounded`: text size, nesting, alias expansion), not because
of a wall-clock check.

`PROSE_FUZZ_EXAMPLES` sets the examples per reader (60 by default: the file runs in
a few seconds; 1,000, as `PROSE_THOROUGH=1` runs, take some 20 s), `PROSE_FUZZ_RANDOM=1`
draws new ones each run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prose.bounded import MAX_DEPTH, MAX_TEXT
from prose.errors import InputReadError, ProseSyntaxError
from tests.conftest import ROOT, examples, run_prose_in_process

EXAMPLES = int(os.environ.get("PROSE_FUZZ_EXAMPLES", str(examples(60, 1000))))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    # The same examples on every run, so a failure in CI is reproducible; PROSE_FUZZ_RANDOM=1
    # searches anew each time.
    derandomize=os.environ.get("PROSE_FUZZ_RANDOM") != "1",
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Snippets that break YAML (and JSON) in the ways an attacker or an accident would.
BOMB = b"".join(
    [b"a: &a [x, x, x, x, x, x, x, x, x, x]\n"]
    + [
        f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]\n".encode()
        for prev, name in zip("abcdefgh", "bcdefghi", strict=False)
    ]
)
SNIPPETS = [
    b"&a ", b"*a", b"&a [*a]", b"x: &a {y: *a}\n", b"<<: *a\n", b"<<: [1]\n", BOMB,
    b"[" * (MAX_DEPTH + 1), b"{" * (MAX_DEPTH + 1), b"- " * (MAX_DEPTH + 1),
    b"[" * 2_000, b"\xff\xfe", b"\xc3", b"\x00", b"'", b'"', b": ", b"\n", b"---\n",
    b"!!python/object:os.system ", b"!!binary x", b"? [a]\n: b\n", b"\t", b"#", b"|\n",
    b"1" * 5_000, b"2001-13-45", b"\r\n", b"\xef\xbb\xbf", b"{", b"}", b"]",
]


def _mutation(snippets: list[bytes]) -> st.SearchStrategy[tuple[str, int, int, bytes]]:
    """(kind, position, length, bytes); positions are fractions of the file in 1/10,000."""
    position = st.integers(0, 10_000)
    return st.one_of(
        st.tuples(st.just("flip"), position, st.just(1), st.binary(min_size=1, max_size=1)),
        st.tuples(st.just("insert"), position, st.just(0), st.sampled_from(snippets)),
        st.tuples(st.just("insert"), position, st.just(0), st.binary(max_size=16)),
        st.tuples(st.just("delete"), position, st.integers(1, 200), st.just(b"")),
        st.tuples(st.just("cut"), position, st.just(0), st.just(b"")),
        st.tuples(st.just("scalar"), position, st.integers(1, MAX_TEXT // 2), st.just(b"")),
    )


def mutate(data: bytes, mutations: list[tuple[str, int, int, bytes]]) -> bytes:
    for kind, fraction, length, extra in mutations:
        at = len(data) * fraction // 10_000
        if kind == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + extra + data[at + 1 :]
        elif kind == "insert":
            data = data[:at] + extra + data[at:]
        elif kind == "delete":
            data = data[:at] + data[at + length :]
        elif kind == "cut":
            data = data[:at]
        elif kind == "scalar":  # a long plain scalar, within the size bound or just past it
            data = data[:at] + b"x" * length + data[at:]
    return data


MUTATIONS = st.lists(_mutation(SNIPPETS), min_size=1, max_size=4)


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the library patterns next to a copy of the examples (their `../patterns`)."""
    base = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(ROOT / "patterns", base / "patterns")
    shutil.copytree(ROOT / "examples", base / "examples")
    return base


def _seeds(folder: Path, pattern: str) -> list[Path]:
    found = sorted(folder.glob(pattern))
    assert found, f"no {pattern} in {folder}"
    return found


def _check(
    place: Path, seed: Path, mutations: list[tuple[str, int, int, bytes]], suffix: str,
    read: Callable[[Path], object], allowed: tuple[type[BaseException], ...],
) -> None:
    target = place / "examples" / f"fuzzed{suffix}"
    target.write_bytes(mutate(seed.read_bytes(), mutations))
    try:
        read(target)
    except allowed:
        pass


# --- pattern files: read, loaded, parsed and linted ------------------------------------


@FUZZ
@given(seed=st.sampled_from(_seeds(ROOT / "patterns", "*.prose.md")), mutations=MUTATIONS)
def test_pattern_files(place: Path, seed: Path, mutations: list[tuple[str, int, int, bytes]]) -> None:
    from prose.check import lint_pattern
    from prose.pattern_file import read_pattern

    def read(path: Path) -> object:
        return lint_pattern(read_pattern(path)).diagnostics

    # An empty or non-UTF-8 file is a ProseSyntaxError; everything else is a diagnostic.
    _check(place, seed, mutations, ".prose.md", read, (ProseSyntaxError,))


# --- instance files --------------------------------------------------------------------


@FUZZ
@given(
    seed=st.sampled_from([p for p in _seeds(ROOT / "examples", "*.yaml")
                          if not p.name.endswith((".script.yaml", ".test.yaml"))]),
    mutations=MUTATIONS,
)
def test_instance_files(place: Path, seed: Path, mutations: list[tuple[str, int, int, bytes]]) -> None:
    from prose.spec.instance_loader import load_instance_file

    # Never raises for content: every problem is a diagnostic.
    _check(place, seed, mutations, ".yaml", load_instance_file, ())


# --- scripts, LLM configs and test files ------------------------------------------------


@FUZZ
@given(seed=st.sampled_from(_seeds(ROOT / "examples", "*.script.yaml")), mutations=MUTATIONS)
def test_script_files(place: Path, seed: Path, mutations: list[tuple[str, int, int, bytes]]) -> None:
    from prose.llm import Script
    from prose.llm.errors import ScriptFormatError

    _check(place, seed, mutations, ".script.yaml", Script.from_file,
           (ScriptFormatError, InputReadError))


CONFIGS = [
    b"model_list:\n"
    b"  - model_name: fast\n"
    b"    litellm_params: &params {model: openai/gpt-4o-mini, api_key: os.environ/OPENAI_API_KEY}\n"
    b"  - model_name: strong\n"
    b"    litellm_params: {<<: *params, model: openai/gpt-4o}\n"
    b"router_settings:\n"
    b"  routing_strategy: simple-shuffle\n"
    b"  model_group_alias: {quick: fast}\n"
    b"  fallbacks: [{strong: [fast]}]\n"
    b"default_model: fast\njudge_model: strong\ntimeout_s: 60\nretries: 2\nconcurrency: 8\n"
    b"fallbacks: {fast: [ollama/llama3]}\n",
    b"# just defaults\ndefault_model: prose-local/smollm2-135m\nconcurrency: 2\n",
]


@FUZZ
@given(seed=st.sampled_from(range(len(CONFIGS))), mutations=MUTATIONS)
def test_llm_config_files(place: Path, seed: int, mutations: list[tuple[str, int, int, bytes]]) -> None:
    from prose.llm import LLMConfig
    from prose.llm.errors import LLMConfigError

    source = place / f"config-{seed}.yaml"
    source.write_bytes(CONFIGS[seed])

    def read(path: Path) -> object:
        config = LLMConfig.from_yaml(path)
        return config.secrets(), config.deployments(), config.router_kwargs(), repr(config)

    _check(place, source, mutations, ".config.yaml", read, (LLMConfigError,))


@FUZZ
@given(seed=st.sampled_from(_seeds(ROOT / "examples", "*.test.yaml")), mutations=MUTATIONS)
def test_test_files(place: Path, seed: Path, mutations: list[tuple[str, int, int, bytes]]) -> None:
    from prose.testing.model import PatternTestError, load_test_file

    _check(place, seed, mutations, ".test.yaml", load_test_file, (PatternTestError,))


# --- traces ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trace(place: Path) -> Iterator[Path]:
    """A real trace: the dialectic example run with its script."""
    path = place / "trace.jsonl"
    result = run_prose_in_process(
        "run", "examples/dialectic.yaml", "--script", "examples/dialectic.script.yaml",
        "-q", "--trace", str(path), cwd=place,
    )
    assert result.code == 0, result.output
    yield path


TRACE_MUTATIONS = st.lists(
    _mutation(list(SNIPPETS)),
    min_size=1,
    max_size=4,
)


@FUZZ
@given(mutations=TRACE_MUTATIONS)
def test_trace_files(place: Path, trace: Path, mutations: list[tuple[str, int, int, bytes]]) -> None:
    from prose.ledger import TraceReadError, load_trace
    from prose.ledger.export import masked, render_judgements, render_readme
    from prose.ledger.stats import trace_stats
    from prose.runtime.integrity import check_trace

    def read(path: Path) -> object:
        checked = check_trace(path)  # raises OSError only, for a file it cannot read
        loaded = masked(load_trace(path))
        readme = render_readme(loaded, {line.number: "call.md" for line in loaded.calls})
        return checked.damage, trace_stats(loaded).to_dict(), readme, render_judgements(loaded)

    _check(place, trace, mutations, ".jsonl", read, (TraceReadError,))


def test_the_audit_of_a_trace_naming_an_impossible_pattern_path(place: Path, trace: Path) -> None:
    import json

    from prose.ledger import AuditError, audit_trace

    lines = trace.read_text(encoding="utf-8").splitlines()
    start = json.loads(lines[0])
    start["pattern"] = "x" * 300 + start["pattern"]
    start.pop("policy", None)  # so the audit needs the pattern file
    path = place / "impossible.jsonl"
    path.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(AuditError):
        audit_trace(path)


def test_a_trace_line_with_a_5000_digit_number_is_a_bad_line(place: Path, trace: Path) -> None:
    from prose.runtime.integrity import check_trace

    path = place / "digits.jsonl"
    path.write_bytes(b"1" * 5_000 + trace.read_bytes())
    assert check_trace(path).damage is not None


def test_a_trace_line_nested_past_the_recursion_limit_is_a_bad_line(place: Path) -> None:
    from prose.runtime.integrity import check_trace

    path = place / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    assert check_trace(path).damage is not None


# --- JSON on the command line (`--input`, `--config`) and in `--input-file x.json` ---------


@FUZZ
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=20,
    ),
    mutations=MUTATIONS,
)
def test_json_values(value: object, mutations: list[tuple[str, int, int, bytes]]) -> None:
    import json

    from prose.bounded import load_json

    text = mutate(json.dumps(value).encode(), mutations).decode("utf-8", errors="replace")
    try:
        load_json(text, "`--input x`")
    except ProseSyntaxError:
        pass
