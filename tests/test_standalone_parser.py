"""The parser runs from prose/syntax/standalone_parser.py, generated from the grammar by
`prose.syntax.generate_parser` (Lark's standalone tool, tables renumbered in one order):
the grammar stays the one definition, so the checked-in module must be what the grammar
and the installed Lark write, and must parse as a parser Lark builds from the grammar."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from prose.resources import patterns_dir
from prose.syntax import delegation_blocks
from prose.syntax import parser as prose_parser
from prose.syntax.generate_parser import GRAMMAR_DIGEST, TARGET, generate, grammar_digest
from prose.syntax.lark_api import UnexpectedInput
from prose.syntax.lexer import ProseIndenter

ROOT = Path(__file__).resolve().parent.parent


def _written_by_this_lark() -> None:
    """Skip a byte-for-byte comparison when another Lark wrote the module (a fresh install
    may bring a newer Lark 1.x): its runtime part is Lark's own text. The grammar digest and
    the parse comparisons below still hold the module to the grammar."""
    import lark

    from prose.syntax import standalone_parser

    if lark.__version__ != standalone_parser.__version__:
        pytest.skip(f"the parser was written by Lark {standalone_parser.__version__}, Lark "
                    f"{lark.__version__} is installed: regenerate it with "
                    "`python -m prose.syntax.generate_parser` to compare")


def test_the_parser_was_generated_from_this_grammar() -> None:
    assert f"{GRAMMAR_DIGEST}{grammar_digest()}\n" in TARGET.read_text(encoding="utf-8"), (
        "grammar/prose.lark changed: run `python -m prose.syntax.generate_parser`")


def test_the_checked_in_parser_is_what_the_grammar_generates() -> None:
    _written_by_this_lark()
    assert TARGET.read_text(encoding="utf-8") == generate(), (
        "grammar/prose.lark or Lark changed: run `python -m prose.syntax.generate_parser`")


def test_generating_twice_under_other_hash_seeds_writes_the_same_module() -> None:
    _written_by_this_lark()
    # Lark numbers states in an order that depends on string hashing; the generator
    # renumbers them, so any process writes the same file (the check exits 0).
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-m", "prose.syntax.generate_parser", "--check"],
                              cwd=ROOT, capture_output=True, text=True, timeout=300,
                              env={**_environment(), "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr


def test_the_check_fails_on_a_stale_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _written_by_this_lark()
    from prose.syntax import generate_parser

    stale = tmp_path / "standalone_parser.py"
    stale.write_text(TARGET.read_text(encoding="utf-8").replace("'start'", "'begin'", 1),
                     encoding="utf-8")
    monkeypatch.setattr(generate_parser, "TARGET", stale)
    assert generate_parser.main(["--check"]) == 1


def _programs() -> list[str]:
    found = []
    for path in sorted(patterns_dir().rglob("*.prose.md")):
        blocks = delegation_blocks(path.read_text(encoding="utf-8"), "delegation")
        if blocks:
            found.append(blocks[0].source)
    return found


def _tokens_and_shape(lark: object, text: str, start: str) -> object:
    try:
        tree = lark.parse(text, start=start)  # type: ignore[attr-defined]
    except UnexpectedInput as error:
        return ("error", type(error).__name__, getattr(error, "line", None),
                getattr(error, "column", None))
    except Exception as error:  # Lark's own classes when the parser is Lark's
        return ("error", type(error).__name__, getattr(error, "line", None),
                getattr(error, "column", None))
    return tree.pretty()  # type: ignore[attr-defined]


def test_the_generated_tables_parse_as_lark_builds_them() -> None:
    # Parse trees (no builder) of every library program, a broken one and a predicate,
    # from the generated module and from a parser Lark compiles from the grammar now.
    generated = prose_parser.new_parser(postlex=ProseIndenter())
    compiled = prose_parser.build_lark()
    programs = _programs()
    assert len(programs) > 10
    cases = [(text, "start") for text in programs]
    cases += [("let x = \n", "start"), ("call a\n  b: [1, 2\n", "start"),
              ("x.y == 3 and not z", "predicate_start"), ("length(a) >", "predicate_start")]
    for text, start in cases:
        assert _tokens_and_shape(generated, text, start) == \
            _tokens_and_shape(compiled, text, start), text[:80]


def test_linting_does_not_import_lark() -> None:
    code = ("import sys\n"
            "from prose.cli.main import main\n"
            "try:\n"
            "    main(['lint', 'patterns/'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "print('LARK', sorted(m for m in sys.modules if m == 'lark' or m.startswith('lark.')"
            " or m == 'regex'))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert "LARK []" in done.stdout, done.stdout + done.stderr


def _environment() -> dict[str, str]:
    import os

    return dict(os.environ)
