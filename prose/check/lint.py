"""The lint pipeline for one file: spec, parse, rules, suppressions, profile."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from prose.check.declarations import Declarations, from_spec
from prose.check.registry import all_rules
from prose.check.rule import CheckContext
from prose.check.semantic import build_model
from prose.diagnostics.model import Diagnostic, Severity
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.pattern_file import PatternFile
    from prose.spec.model import PatternSpec

PROFILES = ("compat", "strict")
_SUPPRESS = re.compile(r"#\s*prose:\s*ignore(?:\[([A-Za-z0-9_,\s]+)\])?")


@dataclass
class LintResult:
    """Everything linting one file produced."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    spec: PatternSpec | None = None
    program: n.Program | None = None
    context: CheckContext | None = None

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)


def check(spec: PatternSpec, program: n.Program, *, select: Collection[str] | None = None,
          ignore: Collection[str] = (), strict_flow: bool = False) -> list[Diagnostic]:
    """Run every rule (or the selected ones) on a loaded spec and its program."""
    return _run(from_spec(spec), program, spec, select, ignore, strict_flow)[0]


def _run(decl: Declarations, program: n.Program, spec: PatternSpec, select: Collection[str] | None,
         ignore: Collection[str], strict_flow: bool = False) -> tuple[list[Diagnostic], CheckContext]:
    context = CheckContext(decl, program, build_model(decl, program), spec, strict_flow)
    return _rules(context, select, ignore), context


def _rules(context: CheckContext, select: Collection[str] | None,
           ignore: Collection[str]) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for rule in all_rules():
        if not _selected(rule.code, select, ignore):
            continue
        found.extend(rule.check(context))
    return found


def _selected(code: str, select: Collection[str] | None, ignore: Collection[str]) -> bool:
    def hit(prefixes: Collection[str]) -> bool:
        return any(code.startswith(prefix) for prefix in prefixes)

    if select and not hit(select):
        return False
    return not hit(ignore)


def lint_text(text: str, path: str, *, profile: str = "compat",
              select: Collection[str] | None = None, ignore: Collection[str] = (),
              strict_flow: bool = False,
              separate_tools: frozenset[str] = frozenset()) -> LintResult:
    """Lint a pattern file's text: spec problems, syntax errors and rule findings.

    `strict_flow` checks implicit flows too (`prose.lang.flows`), whatever the
    pattern's own `flow:` says; `separate_tools` as for `lint_pattern`."""
    from prose.pattern_file import pattern_from_text

    return lint_pattern(pattern_from_text(text, path), profile=profile, select=select,
                        ignore=ignore, strict_flow=strict_flow, separate_tools=separate_tools)


def check_context(pattern: PatternFile, strict_flow: bool = False) -> CheckContext | None:
    """The checking context of a pattern file (its declarations, program, policy and, on
    first use, data flow), made once per file and strictness and kept on the file; None
    when its spec does not load or its program does not parse."""
    key = ("context", strict_flow)
    if key not in pattern.analyses:
        spec, program = pattern.spec, pattern.program
        context = None
        if spec is not None and program is not None:
            decl = from_spec(spec)
            context = CheckContext(decl, program, build_model(decl, program), spec, strict_flow)
        pattern.analyses[key] = context
    found: CheckContext | None = pattern.analyses[key]
    return found


def lint_pattern(pattern: PatternFile, *, profile: str = "compat",
                 select: Collection[str] | None = None, ignore: Collection[str] = (),
                 strict_flow: bool = False,
                 separate_tools: frozenset[str] = frozenset()) -> LintResult:
    """Lint a pattern file already read, loaded and parsed (`prose.pattern_file`).

    The full lint (every rule, the `compat` profile) is kept on the file: the run's lint
    gate, the audit and the report's graph of one command share it. `separate_tools` are
    the external tools an instance binds `separate` (docs/agents.md): no channel."""
    from prose.diagnostics import from_syntax_error

    whole = profile == "compat" and not select and not ignore
    key = ("lint", strict_flow, separate_tools)
    if whole and key in pattern.analyses:
        kept: LintResult = pattern.analyses[key]
        return kept
    result = LintResult(pattern.path)
    result.spec = pattern.spec
    diagnostics = [d for d in pattern.spec_diagnostics if _selected(d.code, select, ignore)]
    result.program = pattern.program
    if pattern.syntax_error is not None:
        diagnostics.extend(from_syntax_error(pattern.syntax_error))
    context = check_context(pattern, strict_flow)
    if context is not None and separate_tools:
        context = replace(context, separate_tools=separate_tools)  # its analyses are shared
    if context is not None:
        diagnostics.extend(_rules(context, select, ignore))
        result.context = context
    diagnostics = _imported_style(_suppress(diagnostics, result.program), result.program)
    if profile == "strict":
        diagnostics = [_escalate(d) for d in diagnostics]
    result.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
    if whole:
        pattern.analyses[key] = result
    return result


def _imported_style(diagnostics: list[Diagnostic], program: n.Program | None) -> list[Diagnostic]:
    """Keep, of the findings inside blocks imported from other files (`prose.use_blocks`:
    their nodes carry the span of the `use`), only the errors: an unused variable of a
    library's block is the library's own lint's to report, a leak through it is this one's."""
    if program is None:
        return diagnostics
    uses = {s.span for s in program.body if isinstance(s, n.Use)}
    if not uses:
        return diagnostics
    return [d for d in diagnostics
            if d.span not in uses or d.severity is Severity.ERROR or d.code.startswith("PS")]


def _suppress(diagnostics: list[Diagnostic], program: n.Program | None) -> list[Diagnostic]:
    """Drop diagnostics on a line that carries `# prose: ignore[CODE]`."""
    if program is None or not program.comments:
        return diagnostics
    by_line: dict[int, set[str] | None] = {}
    for comment in program.comments:
        match = _SUPPRESS.search(comment.text)
        if not match:
            continue
        codes = match.group(1)
        by_line[comment.line] = (
            None if codes is None else {code.strip() for code in codes.split(",") if code.strip()}
        )
    if not by_line:
        return diagnostics
    kept = []
    for diagnostic in diagnostics:
        if diagnostic.span.line in by_line:
            codes = by_line[diagnostic.span.line]
            if codes is None or diagnostic.code in codes:
                continue
        kept.append(diagnostic)
    return kept


def _escalate(diagnostic: Diagnostic) -> Diagnostic:
    from prose.check.registry import rule_by_code

    rule = rule_by_code(diagnostic.code)
    if rule is not None and rule.compat_only and diagnostic.severity is not Severity.ERROR:
        return replace(diagnostic, severity=Severity.ERROR)
    return diagnostic
