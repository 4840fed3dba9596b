"""The sections of the data-flow and test kinds: `### Requires` (subscriptions),
`### Maintains` (with `####` facets), `### Continuity`, `### Goal`, `### Fixtures`,
`### Expects` and `### Expects Not` (docs/contracts.md)."""

from __future__ import annotations

import re
from typing import Any

from prose.source import Span
from prose.spec.markdown_sections import RawSection, facet_headings, paragraphs, parse_bullets
from prose.spec.model import Expectation, Facet, PatternInstance, Subscription
from prose.spec.values import parse_literal

_KEYED = re.compile(r"^`([^`]+)`\s*(?::|--|—|–)?\s*(.*)$", re.S)
_HEADING_LINE = re.compile(r"^#{4,6}[ \t]")
CONTINUITY_MODES = ("input-driven", "self-driven", "external-driven")


def _point(file: str, line: int, column: int, length: int) -> Span:
    return Span(file, line, column, line, column + max(length, 1))


def _prose(section: RawSection) -> str:
    """The section's text outside fences and `####` headings (headings' bodies included)."""
    rows = [
        line
        for number, line in section.lines
        if number not in section.fenced and not _HEADING_LINE.match(line)
    ]
    return "\n".join(rows).strip()


def parse_subscriptions(section: RawSection, file: str) -> list[Subscription]:
    """`### Requires` of a responsibility: backticked bullets and `####` facet-needs."""
    out: list[Subscription] = []
    for bullet in parse_bullets(section):
        match = _KEYED.match(bullet.full_text)
        if match:
            name = match.group(1).strip()
            span = _point(file, bullet.line, bullet.column + 1, len(name))
            out.append(Subscription(name=name, description=match.group(2).strip(), span=span))
    for line, name, body in facet_headings(section):
        out.append(Subscription(name=name, description=" ".join(body), span=_point(file, line, 1, 4)))
    return out


def parse_facets(section: RawSection, file: str) -> list[Facet]:
    """The `####` facets of `### Maintains` (the named-parts rule)."""
    return [
        Facet(name=name, text=" ".join(body), span=_point(file, line, 1, 4))
        for line, name, body in facet_headings(section)
    ]


def maintains_text(section: RawSection) -> str | None:
    return paragraphs(section) or None


def parse_continuity(section: RawSection, inline: str | None) -> str | None:
    """`### Continuity`: the heading's own value (`### Continuity: external-driven`) or the body."""
    texts = [inline] if inline else []
    texts += [bullet.full_text for bullet in parse_bullets(section)]
    if not texts and (body := _prose(section)):
        texts.append(body)
    return "; ".join(text.strip() for text in texts if text and text.strip()) or None


def continuity_mode(text: str | None) -> str:
    """The wake-source mode a continuity text names (input-driven when it names none)."""
    lowered = (text or "").lower()
    return next((mode for mode in CONTINUITY_MODES if mode in lowered), "input-driven")


def parse_fixtures(section: RawSection, file: str) -> tuple[dict[str, Any], dict[str, Span]]:
    """`### Fixtures`: `` - `name`: value `` bullets; a value that is a literal is read as one."""
    values: dict[str, Any] = {}
    spans: dict[str, Span] = {}
    for bullet in parse_bullets(section):
        match = _KEYED.match(bullet.full_text)
        if not match:
            continue
        name, text = match.group(1).strip(), match.group(2).strip()
        if bullet.children:
            text = " ".join([text, *(child.full_text for child in bullet.children)]).strip()
        literal = parse_literal(text) if text else None
        value: Any = text
        if literal is not None and literal.ok and not literal.bracketless:
            value = literal.value
        values.setdefault(name, value)
        spans.setdefault(name, _point(file, bullet.line, bullet.column + 1, len(name)))
    return values, spans


def parse_expectations(section: RawSection, file: str, negated: bool) -> list[Expectation]:
    """`### Expects` / `### Expects Not`: one assertion per bullet, about a key or the result."""
    out: list[Expectation] = []
    for bullet in parse_bullets(section):
        text = bullet.full_text
        if not text:
            continue
        match = _KEYED.match(text)
        subject = match.group(1).strip() if match and match.group(2).strip() else None
        body = match.group(2).strip() if subject and match else text
        span = Span(file, bullet.line, bullet.column, bullet.end_line, bullet.column + 1)
        out.append(Expectation(subject=subject, text=body, negated=negated, span=span))
    return out


def parse_pattern_instances(section: RawSection, file: str) -> list[PatternInstance]:
    """`### Patterns`: fenced `yaml` lists of `name`, `pattern`, `with`, `config`."""
    from prose.spec.yaml_nodes import YamlProblem, compose

    out: list[PatternInstance] = []
    rows = section.lines
    for index, (number, line) in enumerate(rows):
        if number not in section.fenced or not line.strip().startswith(("```yaml", "```yml")):
            continue
        body: list[str] = []
        for _, row in rows[index + 1 :]:
            if row.strip().startswith("```"):
                break
            body.append(row)
        parsed = compose("\n".join(body))
        if isinstance(parsed, YamlProblem) or not isinstance(parsed.value, list):
            continue
        for offset, item in enumerate(parsed.value):
            if not isinstance(item, dict) or not item.get("name") or not item.get("pattern"):
                continue
            given, settings = item.get("with"), item.get("config")
            bindings: dict[Any, Any] = given if isinstance(given, dict) else {}
            config: dict[Any, Any] = settings if isinstance(settings, dict) else {}
            out.append(PatternInstance(
                name=str(item["name"]), pattern=str(item["pattern"]),
                bindings={str(k): v for k, v in bindings.items()},
                config={str(k): v for k, v in config.items()},
                span=_point(file, number + 1 + offset, 1, 1),
            ))
    return out
