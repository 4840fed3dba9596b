"""`### Config` keys and `### Parameters` (or `### Requires`) inputs."""

from __future__ import annotations

import re
from typing import Any

from prose.diagnostics.model import Diagnostic
from prose.lang.type_words import VALUE_WORDS, type_word
from prose.lang.types import problem as type_problem
from prose.source import Span
from prose.spec.codes import make
from prose.spec.markdown_sections import Bullet, RawSection, parse_bullets
from prose.spec.model import ConfigParam, Parameter
from prose.spec.values import (
    describe,
    find_close,
    matches_type,
    normalise_type,
    parse_literal,
    split_top,
)

_NAME = re.compile(r"^(`?)([A-Za-z_][\w-]*)\1")
_DEFAULT = re.compile(r"^default\b\s*[:=]?\s*", re.I)
_FLAGS = frozenset({"optional", "required"})
_TYPE = r"[A-Za-z_][\w.]*(?:\[\])?(?:\s*\|\s*[A-Za-z_][\w.]*(?:\[\])?)*"
_PARAM = re.compile(
    rf"^(`?)(?P<name>[A-Za-z_][\w-]*)\1\s*:\s*(?P<type>{_TYPE})\s*(?:(?:--|—|–)\s*(?P<desc>.*))?$"
)
_OPTIONAL = re.compile(r"\(\s*optional\b", re.I)
_PARAM_DEFAULT = re.compile(r"^optional\s*(?:,\s*default\b\s*[:=]?\s*(?P<value>.*))?$", re.I | re.S)
_SEPARATORS = " \t:-—–"
# `` `name`: text `` (an OpenProse input bullet: the text describes the input).
_KEYED_PARAM = re.compile(
    r"^(?P<tick>`?)(?P<name>[A-Za-z_][\w-]*)(?P=tick)\s*(?::|--|—|–)\s*(?P<desc>.*)$", re.S
)
_LEADING_OPTIONAL = re.compile(r"^\(?optional\b\)?[,:;]?\s*", re.I)


def _span(file: str, line: int, column: int, length: int) -> Span:
    return Span(file, line, column, line, column + max(length, 1))


def _is_none_bullet(text: str) -> bool:
    return text.strip().lower().rstrip(".").startswith("none")


def _keyed_config(bullet: Bullet, file: str, out: list[Diagnostic]) -> ConfigParam | None:
    """`` `name`: type, default `value` `` or `` `name`: value `` (OpenProse's config bullets)."""
    match = re.match(r"^`([A-Za-z_][\w-]*)`\s*:\s*(.+)$", bullet.text.strip())
    if match is None:
        return None
    name, rest = match.group(1), match.group(2).strip()
    span = _span(file, bullet.line, bullet.column + 1, len(name))
    value_span = _span(file, bullet.line, bullet.column + bullet.text.find(rest), len(rest))
    parts = [part.strip() for _, part in split_top(rest)]
    first = parts[0].strip("`") if parts else ""
    # A literal (`"fast"`, `3`) is the key's value, not a one-literal enum type.
    type_name = None if parse_literal(first).ok else normalise_type(first)
    default: Any = None
    has_default = False
    described: list[str] = []
    for part in parts[1 if type_name else 0 :]:
        found = _DEFAULT.match(part)
        if found or (not has_default and not type_name and not described):
            value_text = (part[found.end() :] if found else part).strip().strip("`")
            literal = parse_literal(value_text)
            if found or literal.ok:
                has_default = True
                default = _read_default(name, type_name, value_text, value_span, out)
                continue
        described.append(part)
    if type_name is None:
        if not has_default:
            return None
        type_name = _type_of(default)
    description = " ".join([", ".join(described), *(t for _, _, t in bullet.continuation)])
    return ConfigParam(
        name=name,
        type=type_name,
        default=default,
        has_default=has_default,
        description=description.strip(),
        span=span,
    )


def _type_of(value: Any) -> str:
    """The type a config key without a declared one takes from its default: the default's
    type word (`prose.lang.type_words`), `any` for a null default or one of no such type."""
    word = type_word(value)
    return word if word in VALUE_WORDS and word != "null" else "any"


def _config_from(bullet: Bullet, file: str, out: list[Diagnostic]) -> ConfigParam | None:
    text = bullet.text
    if text.lstrip().startswith("`") and ":" in text.split("(")[0]:
        keyed = _keyed_config(bullet, file, out)
        if keyed is not None:
            return keyed
    name_match = _NAME.match(text)
    rest = text[name_match.end() :] if name_match else ""
    open_at = len(text) - len(rest.lstrip()) if name_match else -1
    close_at = find_close(text, open_at) if name_match and rest.lstrip().startswith("(") else -1
    if name_match is None or close_at < 0:
        out.append(
            make(
                "PS130",
                f"config bullet `{text.strip()}` is not `` `name` (type, default: value): description ``",
                _span(file, bullet.line, bullet.column, len(text)),
                help="write e.g. ``- `rounds` (integer, default: 2): Number of rounds``",
            )
        )
        return None
    name = name_match.group(2)
    span = _span(file, bullet.line, bullet.column + len(name_match.group(1)), len(name))
    inner = text[open_at + 1 : close_at]
    inner_column = bullet.column + open_at + 1
    parts = split_top(inner)
    type_text = parts[0][1].strip()
    type_name = normalise_type(type_text)
    description = " ".join([text[close_at + 1 :], *(t for _, _, t in bullet.continuation)])
    description = description.strip().lstrip(_SEPARATORS).strip()
    if type_name is None:
        out.append(
            make(
                "PS132",
                f"config `{name}` has unknown type `{type_text}`: {type_problem(type_text)}",
                _span(file, bullet.line, inner_column + inner.find(type_text), len(type_text)),
                help="use string, integer, number, boolean, list, object, any, `T[]`, `T?`, "
                '`"a" | "b"` (an enum) or `{ name: T, ... }` (an object)',
            )
        )
    default: Any = None
    has_default = False
    cursor = parts[0][0] + len(parts[0][1]) + 1
    while cursor < len(inner):
        remainder = inner[cursor:]
        lead = len(remainder) - len(remainder.lstrip())
        matched = _DEFAULT.match(remainder.lstrip())
        if matched:
            value_at = cursor + lead + matched.end()
            value_text = inner[value_at:].strip()
            value_span = _span(file, bullet.line, inner_column + value_at, len(value_text))
            has_default = True
            default = _read_default(name, type_name, value_text, value_span, out)
            break
        flag_end = cursor + len(split_top(remainder)[0][1])
        flag = inner[cursor:flag_end].strip().lower()
        if flag and flag not in _FLAGS:
            out.append(
                make(
                    "PS130",
                    f"config `{name}` has an unknown attribute `{flag}`",
                    _span(file, bullet.line, inner_column + cursor + lead, len(flag)),
                    help="the parenthesis holds the type, then `default: value`",
                )
            )
        cursor = flag_end + 1
    return ConfigParam(
        name=name,
        type=type_name or type_text,
        default=default,
        has_default=has_default,
        description=description,
        span=span,
    )


def _read_default(
    name: str, type_name: str | None, text: str, span: Span, out: list[Diagnostic]
) -> Any:
    literal = parse_literal(text)
    if not literal.ok:
        if type_name is None:
            return text
        if type_name == "string":
            out.append(
                make(
                    "PS136",
                    f"default of config `{name}` is bare text; read as the string `{text}`",
                    span,
                    help=f'quote it: `default: "{text}"`',
                )
            )
            return text
        out.append(make("PS134", f"default `{text}` of config `{name}` is not a literal", span))
        return None
    value = literal.value
    is_list_type = type_name is not None and (type_name == "list" or type_name.endswith("[]"))
    if literal.bracketless and is_list_type:
        out.append(
            make(
                "PS135",
                f"list default of config `{name}` is written without brackets; read as a list",
                span,
                help="wrap the items in `[...]`",
            )
        )
    if type_name is not None and not matches_type(value, type_name):
        shown = (
            "a list without brackets"
            if literal.bracketless and not is_list_type
            else describe(value)
        )
        out.append(
            make(
                "PS133",
                f"default of config `{name}` is {shown}, not `{type_name}`",
                span,
            )
        )
    return value


def parse_config(section: RawSection, file: str, out: list[Diagnostic]) -> list[ConfigParam]:
    """The config keys of a `### Config` section; `- None.` (any trailing text) means none."""
    params: list[ConfigParam] = []
    for bullet in parse_bullets(section):
        if _is_none_bullet(bullet.text):
            continue
        param = _config_from(bullet, file, out)
        if param is not None:
            params.append(param)
    return params


def _parameter(match: re.Match[str], line: int, column: int, file: str) -> dict[str, Any]:
    name = match.group("name")
    offset = match.start("name")
    return {
        "name": name,
        "type": match.group("type").strip(),
        "description": (match.group("desc") or "").strip(),
        "span": _span(file, line, column + offset, len(name)),
    }


def _finish(fields: dict[str, Any]) -> Parameter:
    description: str = fields["description"]
    optional = False
    default: Any = None
    found = _OPTIONAL.search(description)
    if found:
        close = find_close(description, found.start())
        end = close if close >= 0 else len(description)
        inner = _PARAM_DEFAULT.match(description[found.start() + 1 : end].strip())
        optional = True
        if inner and inner.group("value") is not None:
            value_text = inner.group("value").strip()
            literal = parse_literal(value_text)
            default = literal.value if literal.ok else value_text
        description = description[: found.start()] + description[end + 1 :]
        description = description.strip().strip(_SEPARATORS).strip()
    return Parameter(
        name=fields["name"],
        type=fields["type"],
        description=description,
        optional=optional,
        default=default,
        span=fields["span"],
    )


def parse_parameters(section: RawSection, file: str, out: list[Diagnostic]) -> list[Parameter]:
    """The inputs of a `### Parameters` section: `name: type -- description` lines.

    They may be bullets, or an indented block under a bullet such as `- Pattern
    instance receives:`; deeper-indented lines continue a description.
    """
    params: list[dict[str, Any]] = []
    for bullet in parse_bullets(section):
        _parameters_of(bullet, file, params, out)
    return [_finish(fields) for fields in params]


def _parameters_of(
    bullet: Bullet, file: str, params: list[dict[str, Any]], out: list[Diagnostic]
) -> None:
    match = _PARAM.match(bullet.text.strip())
    keyed = None if match else _KEYED_PARAM.match(bullet.full_text.strip())
    if match:
        current = _parameter(match, bullet.line, bullet.column, file)
        for _, _, text in bullet.continuation:
            current["description"] = f"{current['description']} {text}".strip()
        params.append(current)
    elif keyed:
        params.append(_described(keyed, bullet, file))
    elif bullet.continuation or bullet.children:
        _block(bullet.continuation, file, params, out)
    elif not _is_none_bullet(bullet.text):
        out.append(
            make(
                "PS140",
                f"parameter line `{bullet.text.strip()}` is not `name: type -- description`",
                _span(file, bullet.line, bullet.column, len(bullet.text)),
            )
        )
    for child in bullet.children:
        _parameters_of(child, file, params, out)


def _described(match: re.Match[str], bullet: Bullet, file: str) -> dict[str, Any]:
    """`` `name`: description `` -- no type; "optional" at the start makes it optional."""
    name = match.group("name")
    description = match.group("desc").strip()
    lead = _LEADING_OPTIONAL.match(description)
    if lead and lead.group(0).strip():
        description = "(optional) " + description[lead.end() :]
    return {
        "name": name,
        "type": None,
        "description": description,
        "span": _span(file, bullet.line, bullet.column + len(match.group("tick")), len(name)),
    }


def _block(
    lines: list[tuple[int, int, str]],
    file: str,
    params: list[dict[str, Any]],
    out: list[Diagnostic],
) -> None:
    base: int | None = None
    current: dict[str, Any] | None = None
    for line, column, text in lines:
        deeper = base is not None and column > base
        match = None if deeper else _PARAM.match(text)
        if match:
            base = column if base is None else base
            current = _parameter(match, line, column, file)
            params.append(current)
        elif current is not None:
            current["description"] = f"{current['description']} {text}".strip()
        else:
            out.append(
                make(
                    "PS140",
                    f"parameter line `{text}` is not `name: type -- description`",
                    _span(file, line, column, len(text)),
                )
            )
