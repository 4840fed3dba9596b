"""`### Slots`: slot bullets, their markers, `requires:` entries and `ensures:` text."""

from __future__ import annotations

import re
from typing import Any

from prose.diagnostics.model import Diagnostic
from prose.lang.schema_types import known_words
from prose.lang.tools import (
    OPTIONAL_MARKERS,
    READ_MARKERS,
    WRITES_MARKERS,
    WRITING_BUILTINS,
    needs_provider,
    parse_tool_name,
    returns_written_files,
)
from prose.lang.types import problem as type_problem
from prose.source import Span
from prose.spec.codes import make
from prose.spec.markdown_sections import Bullet, RawSection, parse_bullets
from prose.spec.model import Requirement, Slot, ToolDecl
from prose.spec.values import find_close, split_top

IDENTIFIER = re.compile(r"[A-Za-z_][\w-]*")
_BACKTICKED = re.compile(r"^`([^`]*)`")
_FIELD = re.compile(r"^`?(requires|ensures|maintains|tools|max_turns)`?\s*:\s*", re.I)
_SCHEMA = re.compile(r"^(?P<lead>.*?)\bobject\s+with\s+(?P<fields>.+?)[\s.]*$", re.I | re.S)
_FIELD_HEAD = re.compile(r"`([A-Za-z_][\w-]*)`\s*\(")
_SCHEMA_SEP = re.compile(r"\s*,\s*and\s+|\s*,\s*|\s*and\s+", re.I)
_DICT_LIKE = re.compile(r"\{\s*['\"][^'\"]*['\"]\s*:")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_NONE_WORDS = frozenset({"none", "nothing", "n/a", "-"})
MARKERS = frozenset({"primary", "list", "map"})

# Words skipped when looking for the first noun of an `ensures:` line: articles,
# determiners, prepositions and the adjectives that open role descriptions.
ROLE_STOPWORDS = frozenset(
    """a an the this that these those each every some any all one its their his her our your my
    of for to in on with from by and or as at into about over per
    single multiple several many few more most other another same
    new final full complete completed short long detailed concise structured clear brief
    independent initial improved revised refined prior previous next proposed original raw
    specific overall updated current possible optional exact valid concrete explicit
    written plain formal informal candidate's""".split()
)


def _point(file: str, line: int, column: int, length: int) -> Span:
    return Span(file, line, column, line, column + max(length, 1))


def role_word(ensures: str) -> str | None:
    """The first noun of an `ensures:` text, lowercased: its first non-stopword word.

    With an output schema (`review object with ...`) only the words before
    `object` count; none there gives None.
    """
    schema = _SCHEMA.match(ensures)
    text: str = schema.group("lead") if schema else ensures
    for word in _WORD.findall(text):
        lowered = str(word).lower()
        if lowered not in ROLE_STOPWORDS:
            return lowered
    return None


def output_schema(ensures: str) -> tuple[dict[str, str] | None, bool]:
    """`(schema, malformed)` for an ``<words> object with `f` (type), ...`` text.

    Each field is `` `name` (type) `` with a type of the type language
    (`prose.lang.types`): its parentheses may hold braces, brackets, quotes and
    parentheses of their own (`` `subtasks` ({ kind: "code" | "docs" }[]) ``).
    Fields are separated by `,`, `and` or `, and`. `malformed` is True when the
    text says `object with` but a field is not `` `name` (type) ``.
    """
    match = _SCHEMA.match(ensures.strip())
    if not match or "`" not in match.group("fields"):
        return None, bool(match and "`" in ensures)
    fields: dict[str, str] = {}
    rest = match.group("fields").strip()
    while rest:
        field = _FIELD_HEAD.match(rest)
        if field is None:
            return None, True
        close = find_close(rest, field.end() - 1)
        if close < 0:
            return None, True
        fields[field.group(1)] = rest[field.end() : close].strip()
        rest = rest[close + 1 :].strip()
        separator = _SCHEMA_SEP.match(rest)
        if rest and separator is None:
            return None, True
        rest = rest[separator.end() :] if separator else ""
    return fields, False


def parse_requirements(
    value: str, line: int, column: int, file: str
) -> tuple[list[Requirement], bool]:
    """The entries of a `requires:` value starting at `line`:`column`; and whether any was declared."""
    if value.strip().rstrip(".").lower() in _NONE_WORDS:
        return [], True
    out: list[Requirement] = []
    for offset, raw in split_top(value):
        entry = raw.strip().rstrip(".").strip()
        start = offset + len(raw) - len(raw.lstrip())
        for conjunction in ("and ", "or "):
            if entry.lower().startswith(conjunction):
                entry, start = entry[len(conjunction) :].lstrip(), start + len(conjunction)
        if not entry:
            continue
        condition: str | None = None
        text = entry
        opened = entry.find("(")
        closed = find_close(entry, opened) if opened >= 0 else -1
        if opened >= 0:
            end = closed if closed >= 0 else len(entry)
            condition = entry[opened + 1 : end].strip()
            text = (entry[:opened] + entry[end + 1 :]).strip()
        optional = condition is not None or entry.lower().startswith("optional ")
        name = text if IDENTIFIER.fullmatch(text) else None
        span = _point(file, line, column + start, len(entry))
        out.append(
            Requirement(text=text, name=name, optional=optional, condition=condition, span=span)
        )
    return out, True


def parse_tools(value: str, line: int, column: int, file: str, slot: str,
                out: list[Diagnostic]) -> list[ToolDecl]:
    """The entries of a `tools:` line: `` `read`, `cli:pytest`, `mcp:memory` (writes) ``."""
    tools: list[ToolDecl] = []
    for offset, raw in split_top(value):
        entry = raw.strip().rstrip(".").strip()
        if not entry:
            continue
        start = offset + len(raw) - len(raw.lstrip())
        span = _point(file, line, column + start, len(entry))
        marker = ""
        opened = entry.find("(")
        if opened >= 0:
            close = find_close(entry, opened)
            marker = entry[opened + 1 : close if close >= 0 else len(entry)].strip().lower()
            entry = entry[:opened].strip()
        spelling = entry.strip("`").strip()
        if parse_tool_name(spelling) is None:
            out.append(make(
                "PS190", f"slot `{slot}` declares the unknown tool `{spelling}`", span,
                help="use a built-in workspace tool (`list`, `read`, `grep`), `cli:NAME` "
                "(a command the instance file allows) or `mcp:NAME` (an external tool)"))
            continue
        markers = [m.strip() for m in marker.split(",") if m.strip()]
        unknown = [m for m in markers if m not in WRITES_MARKERS | READ_MARKERS
                   | OPTIONAL_MARKERS]
        if unknown:
            out.append(make(
                "PS191", f"unknown marker `{unknown[0]}` on tool `{spelling}` of slot `{slot}`; "
                "known markers are `writes`, `read-only` and `optional`", span))
            continue
        writes = any(m in WRITES_MARKERS for m in markers) or spelling in WRITING_BUILTINS
        optional = any(m in OPTIONAL_MARKERS for m in markers)
        if optional and not needs_provider(spelling):
            out.append(make(
                "PS191", f"the built-in tool `{spelling}` of slot `{slot}` needs no "
                "implementation; it cannot be marked `optional`", span))
            continue
        if writes and spelling in ("list", "read", "grep"):
            out.append(make(
                "PS191", f"the built-in tool `{spelling}` of slot `{slot}` only reads; it "
                "cannot be marked `writes`", span))
            continue
        tools.append(ToolDecl(spelling=spelling, writes=writes, optional=optional,
                              span=span))
    return tools


def _max_turns(value: str, line: int, column: int, file: str, slot: str,
               out: list[Diagnostic]) -> int | None:
    text = value.strip().rstrip(".").strip("`")
    if text.isdigit() and int(text) >= 1:
        return int(text)
    out.append(make("PS192", f"`max_turns:` of slot `{slot}` must be a whole number of at "
                    f"least 1, not `{text}`", _point(file, line, column, len(value))))
    return None


def _slot_from(bullet: Bullet, file: str, out: list[Diagnostic]) -> Slot | None:
    head = _BACKTICKED.match(bullet.text)
    if head is None or not IDENTIFIER.fullmatch(head.group(1)):
        if bullet.text.strip().rstrip(".").lower().startswith("none"):
            return None
        out.append(
            make(
                "PS120",
                f"slot bullet `{bullet.text.strip()}` does not start with a slot name in backticks",
                _point(file, bullet.line, bullet.column, len(bullet.text)),
                help="write the slot as ``- `name` (primary)``",
            )
        )
        return None
    name = head.group(1)
    span = _point(file, bullet.line, bullet.column + 1, len(name))
    rest = bullet.text[head.end() :]
    markers: list[str] = []
    stripped = rest.lstrip()
    if stripped.startswith("("):
        base = head.end() + len(rest) - len(stripped)
        close = find_close(stripped, 0)
        inner = stripped[1:close] if close >= 0 else stripped[1:]
        for offset, raw in split_top(inner):
            marker = raw.strip().lower()
            if not marker:
                continue
            markers.append(marker)
            if marker not in MARKERS:
                at = bullet.column + base + 1 + offset + len(raw) - len(raw.lstrip())
                out.append(
                    make(
                        "PS122",
                        f"unknown marker `{marker}` on slot `{name}`; known markers are `primary`, `list` and `map`",
                        _point(file, bullet.line, at, len(marker)),
                    )
                )
        stripped = stripped[close + 1 :] if close >= 0 else ""
    joined = " ".join([stripped, *(t for _, _, t in bullet.continuation)])
    description = joined.strip().lstrip(":-—–").strip() or None
    fields = _slot_fields(bullet, name, file, out)
    if returns_written_files(fields.get("ensures")) and not any(
            tool.writes for tool in fields.get("tools", [])):
        out.append(make(
            "PS196", f"slot `{name}` returns the files it writes (`written files`) and none of "
            "its tools writes", fields.get("ensures_span") or span,
            help="add `write` (or a command marked `(writes)`) to its `tools:`"))
    return Slot(
        name=name,
        span=span,
        primary="primary" in markers,
        # A `map` slot binds a mapping of names to services (`call handlers[key]`); it is
        # list-valued underneath (one service per entry, in the mapping's order).
        list_valued="list" in markers or "map" in markers,
        map_valued="map" in markers,
        markers=markers,
        description=description,
        **fields,
    )


def _slot_fields(bullet: Bullet, name: str, file: str, out: list[Diagnostic]) -> dict[str, Any]:
    requires: list[Requirement] = []
    declared = False
    fields: dict[str, Any] = {}
    for child in bullet.children:
        match = _FIELD.match(child.text)
        if match is None:
            out.append(
                make(
                    "PS125",
                    f"slot `{name}` has an unknown sub-bullet; expected `requires:`, `ensures:`, "
                    "`tools:` or `max_turns:`",
                    _point(file, child.line, child.column, len(child.text)),
                )
            )
            continue
        key = match.group(1).lower()
        value = child.full_text[match.end() :].strip()
        column = child.column + match.end()
        if key == "tools":
            fields["tools"] = [*fields.get("tools", []),
                               *parse_tools(value, child.line, column, file, name, out)]
            fields["tools_span"] = _point(file, child.line, child.column, len(child.text))
            continue
        if key == "max_turns":
            fields["max_turns"] = _max_turns(value, child.line, column, file, name, out)
            continue
        if key == "requires":
            entries, now_declared = parse_requirements(value, child.line, column, file)
            requires.extend(entries)
            declared = declared or now_declared
            continue
        span = _point(file, child.line, column, len(child.text) - match.end())
        schema, malformed = output_schema(value)
        fields.update(
            ensures=value,
            ensures_keyword=key,
            ensures_span=span,
            role_word=role_word(value),
            output_schema=schema,
        )
        if _DICT_LIKE.search(value):
            out.append(
                make(
                    "PS124",
                    f"`{key}:` of slot `{name}` looks like a Python dict, not an output description",
                    span,
                    help="declare a schema as ``<what> object with `field` (type), `field` (type)``",
                )
            )
        elif malformed:
            out.append(
                make(
                    "PS126",
                    f"`{key}:` of slot `{name}` says `object with` but its fields are not all "
                    "`` `name` (type) ``; no output schema is declared",
                    span,
                )
            )
        for field, type_word in (schema or {}).items():
            why = type_problem(type_word)
            if why is not None:
                out.append(
                    make(
                        "PS127",
                        f"field `{field}` of the output schema of slot `{name}` has type "
                        f"`{type_word}`, which is no type: {why}",
                        span,
                        help=f"use one of {known_words()}, `T[]` for a list of T, `T?` for an "
                        'optional T, `"a" | "b"` for an enum, `{ name: T, ... }` for an object',
                    )
                )
    return {"requires": requires, "requires_declared": declared, **fields}


def parse_slots(section: RawSection, file: str, out: list[Diagnostic]) -> list[Slot]:
    """The slots of a `### Slots` section, in order; problems are appended to `out`."""
    slots: list[Slot] = []
    for bullet in parse_bullets(section):
        slot = _slot_from(bullet, file, out)
        if slot is None:
            continue
        if slot.requires_declared is False and slot.ensures is None:
            out.append(
                make(
                    "PS123",
                    f"slot `{slot.name}` declares neither `requires:` nor `ensures:`",
                    slot.span,
                    help="add `requires:` (what it may see) and `ensures:` (what it must produce)",
                )
            )
        slots.append(slot)
    return slots
