"""The diagnostic renderers: exact text for full and concise, json shape, SARIF
validity against the vendored OASIS schema, GitHub escaping, syntax errors,
and that the lint path's imports stay light."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import prose
from prose.diagnostics import (
    RENDERERS,
    SYNTAX_CODE,
    Diagnostic,
    Label,
    RuleInfo,
    Severity,
    Summary,
    from_syntax_error,
    render,
    render_concise,
    render_full,
    render_github,
    render_json,
    render_sarif,
)
from prose.diagnostics.frame import LineIndex
from prose.diagnostics.render_github import escape_data, escape_property
from prose.diagnostics.render_sarif import artifact_uri
from prose.diagnostics.render_text import MAX_SHOWN_PER_FILE
from prose.errors import ProseSyntaxError
from prose.source import Span
from tests.conftest import run_prose_in_process

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"

FLOW = """\
let critique = ask critic
let x = draft



draft = ask writer
parallel:
  a = 1

  b = 2
  c = 3
  d = 4
  e = 5
"""

USED_BEFORE = Diagnostic(
    code="PN002",
    severity=Severity.ERROR,
    category="names",
    message="`draft` is used before it is assigned",
    span=Span("flow.prose", 2, 9, 2, 14),
    secondary=(Label(Span("flow.prose", 6, 1, 6, 6), "`draft` is assigned here"),),
    help="assign `draft` before line 2",
)
LONG_BLOCK = Diagnostic(
    code="PF010",
    severity=Severity.WARNING,
    category="flow",
    message="`parallel` block is too long",
    span=Span("flow.prose", 7, 1, 13, 8),
)
NO_SOURCE = Diagnostic(
    code="PY100",
    severity=Severity.INFO,
    category="style",
    message="file has no title",
    span=Span("other.prose", 1, 1, 1, 2),
)
# Given out of order: every format sorts by file and position.
DIAGNOSTICS = [NO_SOURCE, LONG_BLOCK, USED_BEFORE]
SOURCES = {"flow.prose": FLOW}
SUMMARY = Summary.of(DIAGNOSTICS, files=2, extra_lines=["invariants: 4 checked, 1 prose-only"])


def test_full_plain_text_is_exact() -> None:
    expected = """\
flow.prose:2:9: PN002 [error] `draft` is used before it is assigned
  |
1 | let critique = ask critic
2 | let x = draft
  |         ^^^^^
  = note: flow.prose:6:1: `draft` is assigned here
  = help: assign `draft` before line 2

flow.prose:7:1: PF010 [warning] `parallel` block is too long
   |
 6 | draft = ask writer
 7 | parallel:
   | ^^^^^^^^^
 8 |   a = 1
   |   ^^^^^
...
12 |   d = 4
   |   ^^^^^
13 |   e = 5
   |   ^^^^^

other.prose:1:1: PY100 [info] file has no title

Found 1 error, 1 warning, 1 info in 2 files.
invariants: 4 checked, 1 prose-only
"""
    assert render_full(DIAGNOSTICS, SOURCES, SUMMARY, color=False) == expected


def test_notes_are_one_line_each_and_framed_only_when_verbose() -> None:
    # A leak's path is a list of notes: one line each by default (issue 19: two errors
    # printed some 90 lines of path notes), each with its code frame with --verbose.
    note = "  = note: flow.prose:6:1: `draft` is assigned here\n"
    framed = note + "  |\n6 | draft = ask writer\n  | ^^^^^\n"
    compact = render_full(DIAGNOSTICS, SOURCES, SUMMARY, color=False)
    verbose = render_full(DIAGNOSTICS, SOURCES, SUMMARY, color=False, verbose=True)
    assert note in compact and framed not in compact
    assert framed in verbose
    assert len(verbose.splitlines()) == len(compact.splitlines()) + 3


def test_full_with_nothing_found() -> None:
    summary = Summary(files=3, extra_lines=["invariants: 4 checked"])
    assert render_full([], SOURCES, summary, color=False) == (
        "All checks passed.\ninvariants: 4 checked\n"
    )


def test_full_short_multiline_span_underlines_each_line() -> None:
    text = "parallel:\n  a = 1\n\n  b = 2\n"
    # Ends at column 1 of line 5: the span takes the last newline, not line 5.
    diagnostic = Diagnostic("PF011", Severity.WARNING, "flow", "m", Span("f.prose", 1, 1, 5, 1))
    out = render_full([diagnostic], {"f.prose": text}, Summary.of([diagnostic], 1), color=False)
    assert out.splitlines()[1:9] == [
        "  |",
        "1 | parallel:",
        "  | ^^^^^^^^^",
        "2 |   a = 1",
        "  |   ^^^^^",
        "3 |",
        "4 |   b = 2",
        "  |   ^^^^^",
    ]


def test_full_frame_aligns_carets_after_tabs_and_wide_characters() -> None:
    text = "\tlet 名前 = x\n"
    span = Span("t.prose", 1, 11, 1, 12)  # the `x`, after a tab and two wide characters
    diagnostic = Diagnostic("PN001", Severity.ERROR, "names", "`x` is undefined", span)
    out = render_full([diagnostic], {"t.prose": text}, Summary.of([diagnostic], 1), color=False)
    source_line, caret_line = out.splitlines()[2:4]
    assert source_line == "1 |     let 名前 = x"
    assert caret_line == "  |                ^"


def test_full_frame_for_an_error_at_end_of_input() -> None:
    text = "let x = (\n"
    diagnostic = Diagnostic("PS001", Severity.ERROR, "syntax", "end", Span("e.prose", 2, 1, 2, 2))
    out = render_full([diagnostic], {"e.prose": text}, Summary.of([diagnostic], 1), color=False)
    assert out.splitlines()[1:5] == ["  |", "1 | let x = (", "2 |", "  | ^"]


def test_full_in_colour_has_the_same_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    coloured = render_full(DIAGNOSTICS, SOURCES, SUMMARY, color=True)
    assert "\x1b[" in coloured
    plain = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert plain == render_full(DIAGNOSTICS, SOURCES, SUMMARY, color=False)


def test_full_is_plain_when_not_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    # pytest captures stdout, so it is not a terminal here.
    assert "\x1b[" not in render_full(DIAGNOSTICS, SOURCES, SUMMARY)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in render_full(DIAGNOSTICS, SOURCES, SUMMARY)
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in render_full(DIAGNOSTICS, SOURCES, SUMMARY)


def test_concise_is_exact() -> None:
    assert render_concise(DIAGNOSTICS, SOURCES, SUMMARY) == textwrap.dedent(
        """\
        flow.prose:2:9: PN002 `draft` is used before it is assigned
        flow.prose:7:1: PF010 `parallel` block is too long
        other.prose:1:1: PY100 file has no title
        Found 1 error, 1 warning, 1 info in 2 files.
        invariants: 4 checked, 1 prose-only
        """
    )


@pytest.mark.parametrize(
    ("summary", "line"),
    [
        (Summary(files=1), "All checks passed."),
        (Summary(files=1, errors=1), "Found 1 error in 1 file."),
        (Summary(files=3, errors=2, warnings=1), "Found 2 errors, 1 warning in 3 files."),
        (Summary(files=2, warnings=2, infos=2), "Found 2 warnings, 2 infos in 2 files."),
    ],
)
def test_summary_line(summary: Summary, line: str) -> None:
    assert summary.line() == line


def test_json_structure_and_order() -> None:
    payload = json.loads(render_json(DIAGNOSTICS, SOURCES, SUMMARY))
    assert list(payload) == ["diagnostics", "summary"]
    assert payload["summary"] == {"files": 2, "errors": 1, "warnings": 1, "infos": 1}
    assert list(payload["summary"]) == ["files", "errors", "warnings", "infos"]
    assert [d["code"] for d in payload["diagnostics"]] == ["PN002", "PF010", "PY100"]
    first = payload["diagnostics"][0]
    assert list(first) == [
        "path", "line", "column", "end_line", "end_column", "code", "severity",
        "category", "message", "help", "related",
    ]  # fmt: skip
    assert first == {
        "path": "flow.prose",
        "line": 2,
        "column": 9,
        "end_line": 2,
        "end_column": 14,
        "code": "PN002",
        "severity": "error",
        "category": "names",
        "message": "`draft` is used before it is assigned",
        "help": "assign `draft` before line 2",
        "related": [
            {
                "path": "flow.prose",
                "line": 6,
                "column": 1,
                "end_line": 6,
                "end_column": 6,
                "message": "`draft` is assigned here",
            }
        ],
    }
    assert payload["diagnostics"][1]["help"] is None
    assert payload["diagnostics"][1]["related"] == []


def test_json_with_nothing_found() -> None:
    payload = json.loads(render_json([], {}, Summary(files=4)))
    assert payload == {
        "diagnostics": [],
        "summary": {"files": 4, "errors": 0, "warnings": 0, "infos": 0},
    }


def _sarif_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)


RULES = {
    "PN002": RuleInfo(
        name="used-before-assigned",
        summary="A name is read before any statement assigns it.",
        help_uri="https://example.org/rules/PN002",
        description="## What it does\nFinds names read before they are assigned.",
    )
}


def test_sarif_validates_against_the_official_schema() -> None:
    log = json.loads(render_sarif(DIAGNOSTICS, SOURCES, SUMMARY, rules=RULES))
    errors = sorted(_sarif_validator().iter_errors(log), key=str)
    assert not errors, "\n".join(error.message for error in errors)


def test_sarif_schema_rejects_a_broken_log() -> None:
    log = json.loads(render_sarif(DIAGNOSTICS, SOURCES, SUMMARY))
    log["runs"][0]["results"][0]["level"] = "info"
    del log["runs"][0]["results"][1]["message"]
    assert len(list(_sarif_validator().iter_errors(log))) == 2


def test_sarif_empty_log_validates() -> None:
    log = json.loads(render_sarif([], {}, Summary(files=0)))
    assert not list(_sarif_validator().iter_errors(log))
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["tool"]["driver"]["rules"] == []


def test_sarif_has_what_github_code_scanning_reads() -> None:
    log = json.loads(render_sarif(DIAGNOSTICS, SOURCES, SUMMARY, rules=RULES))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "prose"
    assert driver["version"] == prose.__version__
    assert driver["informationUri"].startswith("https://")
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert sorted(rules) == ["PF010", "PN002", "PY100"]
    for rule in rules.values():
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
        assert rule["help"]["text"]
    described = rules["PN002"]
    assert described["name"] == "used-before-assigned"
    assert described["shortDescription"]["text"] == RULES["PN002"].summary
    assert described["fullDescription"]["text"] == RULES["PN002"].description
    assert described["helpUri"] == "https://example.org/rules/PN002"
    assert described["defaultConfiguration"] == {"level": "error"}
    assert rules["PF010"]["defaultConfiguration"] == {"level": "warning"}
    assert rules["PY100"]["defaultConfiguration"] == {"level": "note"}

    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("PN002", "error"),
        ("PF010", "warning"),
        ("PY100", "note"),
    ]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    first = results[0]
    assert first["message"] == {"text": "`draft` is used before it is assigned"}
    assert first["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "flow.prose"},
                "region": {"startLine": 2, "startColumn": 9, "endLine": 2, "endColumn": 14},
            }
        }
    ]
    (related,) = first["relatedLocations"]
    assert related["message"] == {"text": "`draft` is assigned here"}
    assert related["physicalLocation"]["region"] == {
        "startLine": 6,
        "startColumn": 1,
        "endLine": 6,
        "endColumn": 6,
    }
    assert "relatedLocations" not in results[1]


def test_sarif_uris_are_relative_with_forward_slashes() -> None:
    assert artifact_uri("patterns\\debate.prose.md") == "patterns/debate.prose.md"
    assert artifact_uri("./patterns/a b.prose.md") == "patterns/a%20b.prose.md"
    assert artifact_uri(str(Path.cwd() / "x" / "y.prose")) == "x/y.prose"
    assert artifact_uri("/elsewhere/y.prose").startswith("file:///")


def test_github_commands() -> None:
    assert render_github(DIAGNOSTICS, SOURCES, SUMMARY) == (
        "::error file=flow.prose,line=2,col=9,endLine=2,endColumn=14,title=PN002::"
        "`draft` is used before it is assigned\n"
        "::warning file=flow.prose,line=7,col=1,endLine=13,endColumn=8,title=PF010::"
        "`parallel` block is too long\n"
        "::notice file=other.prose,line=1,col=1,endLine=1,endColumn=2,title=PY100::"
        "file has no title\n"
    )
    assert render_github([], {}, Summary(files=1)) == ""


def test_github_escaping() -> None:
    diagnostic = Diagnostic(
        code="PN003",
        severity=Severity.ERROR,
        category="names",
        message="100% sure: `a`, `b`\r\nsecond line",
        span=Span("dir,with:odd%\\name.prose", 1, 2, 1, 3),
    )
    assert render_github([diagnostic], {}, Summary.of([diagnostic], 1)) == (
        "::error file=dir%2Cwith%3Aodd%25/name.prose,line=1,col=2,endLine=1,endColumn=3,"
        "title=PN003::100%25 sure: `a`, `b`%0D%0Asecond line\n"
    )
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("a:b,c%\r") == "a:b,c%25%0D"


def test_syntax_error_becomes_ps001_and_renders_with_its_frame() -> None:
    from prose.syntax import parse

    text = "let x = 1\nlet y = )\n"
    with pytest.raises(ProseSyntaxError) as caught:
        parse(text, "bad.prose")
    diagnostics = from_syntax_error(caught.value)
    assert len(diagnostics) == len(caught.value.problems) >= 1
    first, problem = diagnostics[0], caught.value.problems[0]
    assert (first.code, first.severity, first.category) == (SYNTAX_CODE, Severity.ERROR, "syntax")
    assert SYNTAX_CODE == "PS001"
    assert (first.path, first.span.line, first.span.column) == ("bad.prose", 2, 9)
    assert first.message == problem.message

    out = render_full(diagnostics, {"bad.prose": text}, Summary.of(diagnostics, 1), color=False)
    lines = out.splitlines()
    assert lines[0] == f"bad.prose:2:9: PS001 [error] {problem.message}"
    # The same frame the parser drew, under an opening gutter line.
    assert lines[1] == "  |"
    assert lines[2 : 2 + len(problem.frame.splitlines())] == problem.frame.splitlines()
    assert lines[-1] == "Found 1 error in 1 file."
    assert render_concise(diagnostics, {}, Summary.of(diagnostics, 1)).splitlines()[0] == (
        f"bad.prose:2:9: PS001 {problem.message}"
    )


def test_syntax_error_with_several_problems() -> None:
    from prose.errors import SyntaxProblem

    error = ProseSyntaxError(
        [
            SyntaxProblem(Span("a.prose", 3, 1, 3, 2), "unexpected indentation"),
            SyntaxProblem(Span("a.prose", 1, 5, 1, 6), "unexpected `=`"),
        ]
    )
    diagnostics = from_syntax_error(error)
    assert [(d.span.line, d.message) for d in diagnostics] == [
        (3, "unexpected indentation"),
        (1, "unexpected `=`"),
    ]
    assert render_concise(diagnostics, {}, Summary.of(diagnostics, 1)) == (
        "a.prose:1:5: PS001 unexpected `=`\n"
        "a.prose:3:1: PS001 unexpected indentation\n"
        "Found 2 errors in 1 file.\n"
    )


def test_renderers_by_name() -> None:
    assert sorted(RENDERERS) == ["concise", "full", "github", "json", "sarif"]
    for name, renderer in RENDERERS.items():
        out = renderer(DIAGNOSTICS, SOURCES, SUMMARY)
        assert out.endswith("\n"), name
        kwargs: dict[str, Any] = {"color": False} if name == "full" else {}
        assert render(name, DIAGNOSTICS, SOURCES, SUMMARY, **kwargs) == (
            render_full(DIAGNOSTICS, SOURCES, SUMMARY, color=False) if name == "full" else out
        )
    with_rules = json.loads(render("sarif", DIAGNOSTICS, SOURCES, SUMMARY, rules=RULES))
    names = [rule["name"] for rule in with_rules["runs"][0]["tool"]["driver"]["rules"]]
    assert "used-before-assigned" in names
    with pytest.raises(KeyError):
        render("xml", DIAGNOSTICS, SOURCES, SUMMARY)


HEAVY = ("rich", "yaml", "jinja2", "pydantic", "litellm", "lark")

LIGHT_PATH = """
import sys
from prose.diagnostics import Diagnostic, Severity, Summary, from_syntax_error, render
from prose.errors import ProseSyntaxError
from prose.source import Span

span = Span("a.prose", 1, 1, 1, 2)
found = [Diagnostic("PN001", Severity.ERROR, "names", "`x` is undefined", span)]
found += from_syntax_error(ProseSyntaxError.at(span, "unexpected `=`", "= 1\\n"))
summary = Summary.of(found, 1)
for name in ("concise", "json", "sarif", "github"):
    render(name, found, {"a.prose": "= 1\\n"}, summary)
render("full", found, {"a.prose": "= 1\\n"}, summary, color=False)
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)))
"""


def test_diagnostics_path_imports_no_heavy_package() -> None:
    code = f"HEAVY = {HEAVY!r}\n{LIGHT_PATH}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "", f"imported: {done.stdout.strip()}"


# --- many findings (issue 14.10) ---------------------------------------------------

MANY_SOURCE = "".join(f"let v{i} = m{i}\n" for i in range(260))


def many_findings(path: str, warnings: int, errors: int) -> list[Diagnostic]:
    """`warnings` warnings on the first lines, then `errors` errors on the lines after."""
    found = [
        Diagnostic("PN105", Severity.WARNING, "names", f"w{i}", Span(path, i + 1, 5, i + 1, 7))
        for i in range(warnings)
    ]
    found += [
        Diagnostic("PN101", Severity.ERROR, "names", f"e{i}", Span(path, line, 5, line, 7))
        for i, line in enumerate(range(warnings + 1, warnings + errors + 1))
    ]
    return found


def test_text_formats_show_200_findings_per_file_then_say_how_many_more() -> None:
    found = many_findings("a.prose", warnings=240, errors=10) + many_findings("b.prose", 3, 0)
    sources = {"a.prose": MANY_SOURCE, "b.prose": MANY_SOURCE}
    summary = Summary.of(found, files=2)
    more = "... and 50 more in a.prose: 50 warnings (use --format json for all)"
    concise = render_concise(found, sources, summary).splitlines()
    assert len(concise) == MAX_SHOWN_PER_FILE + 1 + 3 + 1
    assert concise[MAX_SHOWN_PER_FILE] == more
    # The most severe are kept: every error, then the first 190 warnings, in position order.
    shown = [line.rsplit(" ", 1)[1] for line in concise[:MAX_SHOWN_PER_FILE]]
    assert shown == [f"w{i}" for i in range(190)] + [f"e{i}" for i in range(10)]
    assert concise[-4:] == [
        "b.prose:1:5: PN105 w0",
        "b.prose:2:5: PN105 w1",
        "b.prose:3:5: PN105 w2",
        "Found 10 errors, 243 warnings in 2 files.",
    ]
    full = render_full(found, sources, summary, color=False)
    assert full.count("[warning]") == 190 + 3 and full.count("[error]") == 10
    assert f"\n{more}\n\nb.prose:1:5:" in full
    assert full.endswith("Found 10 errors, 243 warnings in 2 files.\n")
    assert render("full", found, sources, summary, color=False) == full


def test_the_count_of_findings_left_out_names_each_severity() -> None:
    found = many_findings("a.prose", warnings=300, errors=250)
    out = render_concise(found, {}, Summary.of(found, files=1))
    assert "... and 350 more in a.prose: 50 errors, 300 warnings (use --format json for all)" in out


def test_json_and_sarif_keep_every_finding() -> None:
    found = many_findings("a.prose", warnings=240, errors=10)
    summary = Summary.of(found, files=1)
    assert len(json.loads(render_json(found, {}, summary))["diagnostics"]) == 250
    assert len(json.loads(render_sarif(found, {}, summary))["runs"][0]["results"]) == 250
    assert render_concise(found, {}, summary, limit=None).count("\n") == 251


def test_the_frames_of_one_file_split_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    splits: list[int] = []
    original = LineIndex.of.__func__  # type: ignore[attr-defined]

    def counting(cls: type[LineIndex], text: str) -> LineIndex:
        splits.append(len(text))
        return original(cls, text)  # type: ignore[no-any-return]

    monkeypatch.setattr(LineIndex, "of", classmethod(counting))
    found = many_findings("a.prose", warnings=100, errors=100) + many_findings("b.prose", 5, 5)
    found.append(replace(found[0], secondary=(Label(Span("b.prose", 1, 1, 1, 4), "there"),)))
    render_full(found, {"a.prose": MANY_SOURCE, "b.prose": MANY_SOURCE},
                Summary.of(found, 2), color=False)
    assert splits == [len(MANY_SOURCE)] * 2


def test_prose_lint_caps_the_text_and_counts_everything(tmp_path: Path) -> None:
    body = "".join(f"let v{i} = missing{i}\n" for i in range(150))
    path = tmp_path / "many.prose.md"
    path.write_text(
        "---\nname: many\nkind: pattern\nversion: 0.1.0\n---\n\n# Many\n\nMany findings.\n\n"
        "### Slots\n\n- `worker`\n\n### Delegation\n\n```prose\n" + body + "return { r: 1 }\n```\n",
        encoding="utf-8",
    )
    more = f"... and 102 more in {path}: 101 warnings, 1 info (use --format json for all)"
    # 150 undefined names (errors), 150 unread values and one unused slot (warnings), an info
    concise = run_prose_in_process("lint", "--format", "concise", str(path))
    assert concise.code == 1
    lines = concise.stdout.splitlines()
    assert lines[MAX_SHOWN_PER_FILE:] == [
        more,
        "Found 150 errors, 151 warnings, 1 info in 1 file.",
        "invariants: 0 checked, 0 prose-only",
    ]
    assert sum("PN101" in line for line in lines) == 150  # no error is left out
    full = run_prose_in_process("lint", str(path))
    assert full.code == 1 and f"\n{more}\n" in full.stdout
    assert full.stdout.count(" [error] ") == 150
    everything = run_prose_in_process("lint", "--format", "json", str(path))
    assert len(json.loads(everything.stdout)["diagnostics"]) == 302
