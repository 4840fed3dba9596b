"""`### Metadata`, `### Returns`, `### Invariants` and `### Shape`."""

from __future__ import annotations

import re

from prose.diagnostics.model import Diagnostic
from prose.source import Span
from prose.spec.codes import make
from prose.spec.invariants import backticked_names, parse_invariant_form
from prose.spec.markdown_sections import RawSection, parse_bullets, walk
from prose.spec.model import Invariant, ReturnKey, Shape

_KEYED = re.compile(r"^`([^`]+)`\s*(?::|--|—|–)?\s*(.*)$", re.S)
_IDENT = re.compile(r"[A-Za-z_][\w.-]*")
# A result key present only sometimes: "reason when the pattern aborts",
# "only if ...", "(optional)", "optional ...".
_CONDITION = re.compile(
    r"\(\s*optional\b[^)]*\)|^optional\b.*|\b(?:only\s+)?(?:when|if|unless)\b.*", re.I | re.S
)


def _span(file: str, line: int, column: int, length: int) -> Span:
    return Span(file, line, column, line, column + max(length, 1))


def parse_metadata(section: RawSection) -> dict[str, str]:
    """`- `key`: value` bullets as a mapping (values stripped of surrounding backticks)."""
    out: dict[str, str] = {}
    for bullet in parse_bullets(section):
        match = _KEYED.match(bullet.full_text)
        if match:
            out.setdefault(match.group(1).strip(), match.group(2).strip().strip("`").strip())
    return out


def parse_returns(section: RawSection, file: str, out: list[Diagnostic]) -> list[ReturnKey]:
    """The result keys: top-level bullets that start with a backticked name.

    Other bullets, nested bullets and paragraphs are prose about the result.
    """
    keys: list[ReturnKey] = []
    seen: set[str] = set()
    for bullet in parse_bullets(section):
        match = _KEYED.match(bullet.full_text)
        if not match or not _IDENT.fullmatch(match.group(1)):
            continue
        name = match.group(1)
        span = _span(file, bullet.line, bullet.column + 1, len(name))
        if name in seen:
            out.append(make("PS144", f"result key `{name}` is listed twice", span))
        seen.add(name)
        description = match.group(2).strip()
        condition = _CONDITION.search(description)
        keys.append(
            ReturnKey(
                name=name,
                description=description,
                span=span,
                condition=condition.group(0).strip(" ()") if condition else None,
            )
        )
    return keys


def parse_invariants(section: RawSection, file: str) -> list[Invariant]:
    """Every bullet (nested ones too, in file order), with its checkable form if any."""
    invariants: list[Invariant] = []
    for bullet in walk(parse_bullets(section)):
        text = bullet.full_text
        if not text:
            continue
        end_line = bullet.continuation[-1][0] if bullet.continuation else bullet.line
        end_column = (
            bullet.continuation[-1][1] + len(bullet.continuation[-1][2])
            if bullet.continuation
            else bullet.column + len(bullet.text)
        )
        span = Span(file, bullet.line, bullet.column, end_line, end_column)
        names: dict[str, Span] = {}
        for name, offset in backticked_names(bullet.text):
            names.setdefault(name, _span(file, bullet.line, bullet.column + offset, len(name)))
        for name, _ in backticked_names(text):
            names.setdefault(name, span)
        invariants.append(
            Invariant(text=text, span=span, form=parse_invariant_form(text), name_spans=names)
        )
    return invariants


def parse_shape(section: RawSection, file: str) -> Shape:
    """`self`, `delegates` (nested `` `name`: text `` bullets) and `prohibited`."""
    self_text: str | None = None
    prohibited: str | None = None
    delegates: dict[str, str] = {}
    delegate_spans: dict[str, Span] = {}
    for bullet in parse_bullets(section):
        match = _KEYED.match(bullet.full_text)
        if not match:
            continue
        key, value = match.group(1).strip().lower(), match.group(2).strip()
        if key == "self":
            self_text = value
        elif key == "prohibited":
            prohibited = value
        elif key == "delegates":
            for child in bullet.children:
                entry = _KEYED.match(child.full_text)
                if entry:
                    name = entry.group(1).strip()
                    delegates.setdefault(name, entry.group(2).strip())
                    delegate_spans.setdefault(
                        name, _span(file, child.line, child.column + 1, len(name))
                    )
    end = section.end_line
    return Shape(
        self_text=self_text,
        delegates=delegates,
        delegate_spans=delegate_spans,
        prohibited=prohibited,
        span=Span(
            file, section.line, 1, end, 1 + len(section.lines[-1][1]) if section.lines else 1
        ),
    )
