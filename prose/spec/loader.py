"""`load_spec`: a `*.prose.md` text -> `PatternSpec` plus diagnostics (never raises for content)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prose.diagnostics.model import Diagnostic, Label
from prose.errors import InputReadError
from prose.source import Span
from prose.spec.codes import make
from prose.spec.config import parse_config, parse_parameters
from prose.spec.contract import parse_invariants, parse_metadata, parse_returns, parse_shape
from prose.spec.invariants import LoopsBoundedBy
from prose.spec.markdown_sections import (
    KNOWN_SECTIONS,
    Document,
    RawSection,
    paragraphs,
    section_text,
    split_document,
    split_frontmatter,
)
from prose.spec.model import DelegationBlock, PatternSpec, Section, SpecResult
from prose.spec.slots import parse_slots
from prose.spec.values import types_compatible
from prose.spec.yaml_nodes import YamlProblem, compose, key_nodes, node_span
from prose.syntax.markdown import delegation_blocks


def load_spec_file(path: str | Path) -> SpecResult:
    """Read and load a pattern file. Raises InputReadError only when it cannot be read."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise InputReadError(f"{name}: cannot read: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        problem = make("PS109", "the file is not UTF-8 text", Span.point(name, line, column))
        return SpecResult(spec=None, diagnostics=[problem])
    return load_spec(text, name)


def load_spec(text: str, filename: str) -> SpecResult:
    """Parse a pattern file's markdown into a `PatternSpec`, collecting every problem.

    The spec is None only when the text is empty; otherwise as much as could be
    read is returned, with a diagnostic (category `spec`, codes PS1xx) at the
    line of each problem.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        return SpecResult(
            spec=None, diagnostics=[make("PS100", "the file is empty", _at(filename, 1))]
        )
    lines = [line.rstrip("\r") for line in text.split("\n")]
    out: list[Diagnostic] = []
    frontmatter, version_text, body = _frontmatter(lines, filename, out)
    # A missing or broken frontmatter is one error; do not pile its consequences on it.
    broken = {d.code for d in out} & {"PS101", "PS102", "PS103"}
    doc = split_document(lines, body)
    fields: dict[str, Any] = {
        "slots": [],
        "config": [],
        "parameters": [],
        "returns": [],
        "invariants": [],
    }
    sections = _sections(doc, filename, fields, out)
    metadata: dict[str, str] = fields.pop("metadata", {})
    version = version_text or metadata.get("version") or None
    if version is None and not broken:
        out.append(
            make(
                "PS107",
                "the pattern declares no `version`",
                _at(filename, 1),
                help="add `version: 0.1.0` to the frontmatter",
            )
        )
    if doc.title is None:
        first = doc.sections[0].line if doc.sections else 1
        out.append(make("PS108", "the pattern has no `# Title` line", _at(filename, first)))
    names = {section.name for section in sections}
    if "slots" not in names:
        out.append(make("PS110", "the pattern has no `### Slots` section", _at(filename, 1)))
    blocks = _delegation(
        "\n".join(lines), doc, filename, names, out if "PS102" not in broken else []
    )
    spec = PatternSpec(
        path=filename,
        span=Span(filename, 1, 1, len(lines), len(lines[-1]) + 1),
        frontmatter=frontmatter,
        name=_scalar(frontmatter.get("name")),
        kind=_scalar(frontmatter.get("kind")),
        version=version,
        title=doc.title,
        summary=doc.summary,
        metadata=metadata,
        sections=sections,
        delegation_blocks=blocks,
        unknown_sections=[section for section in sections if not section.known],
        **fields,
    )
    _check_names(spec, out)
    out.sort(key=Diagnostic.sort_key)
    return SpecResult(spec=spec, diagnostics=out)


def _at(filename: str, line: int, column: int = 1) -> Span:
    return Span.point(filename, line, column)


def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


def _frontmatter(
    lines: list[str], filename: str, out: list[Diagnostic]
) -> tuple[dict[str, Any], str | None, int]:
    """The frontmatter mapping, the version as written, and the index of the first body line."""
    start, close, body = split_frontmatter(lines)
    if start < 0:
        out.append(
            make(
                "PS101",
                "the file has no YAML frontmatter (`---` block)",
                _at(filename, 1),
                help="start the file with `---`, `name: ...`, `kind: pattern`, `---`",
            )
        )
        return {}, None, body
    if close is None:
        out.append(
            make(
                "PS102",
                "the frontmatter opened here is never closed with `---`",
                _at(filename, start + 1),
            )
        )
        return {}, None, body
    parsed = compose("\n".join(lines[start + 1 : close]))
    if isinstance(parsed, YamlProblem):
        span = _at(filename, start + 1 + parsed.line, parsed.column)
        out.append(make("PS103", f"the frontmatter: {parsed.message}", span))
        return {}, None, body
    if parsed.value is None:
        parsed_value: dict[Any, Any] = {}
    elif isinstance(parsed.value, dict):
        parsed_value = parsed.value
    else:
        out.append(
            make(
                "PS103",
                "the frontmatter is not a mapping of keys to values",
                _at(filename, start + 2),
            )
        )
        return {}, None, body
    frontmatter = {str(key): value for key, value in parsed_value.items()}
    keys = key_nodes(parsed.node)
    frame = _at(filename, start + 1)
    if _scalar(frontmatter.get("name")) is None:
        span = node_span(keys["name"][0], filename, start + 1) if "name" in keys else frame
        out.append(make("PS104", "the frontmatter has no `name`", span))
    kind = _scalar(frontmatter.get("kind"))
    if kind is None:
        span = node_span(keys["kind"][0], filename, start + 1) if "kind" in keys else frame
        out.append(make("PS105", "the frontmatter has no `kind`", span, help="add `kind: pattern`"))
    elif kind != "pattern":
        span = node_span(keys["kind"][1], filename, start + 1)
        out.append(make("PS106", f"`kind` is `{kind}`, not `pattern`", span))
    version_node = keys.get("version", (None, None))[1]
    version = (
        version_node.value
        if version_node is not None and isinstance(version_node.value, str)
        else None
    )
    return frontmatter, (version.strip() or None) if version else None, body


def _sections(
    doc: Document, filename: str, fields: dict[str, Any], out: list[Diagnostic]
) -> list[Section]:
    sections: list[Section] = []
    seen: set[str] = set()
    for raw in doc.sections:
        known = raw.name in KNOWN_SECTIONS
        last = raw.lines[-1][1] if raw.lines else raw.heading
        span = Span(filename, raw.line, 1, raw.end_line, len(last) + 1)
        sections.append(
            Section(
                heading=raw.heading, name=raw.name, known=known, span=span, text=section_text(raw)
            )
        )
        heading_span = Span(
            filename, raw.line, raw.heading_column, raw.line, raw.heading_column + len(raw.heading)
        )
        if not known:
            out.append(
                make("PS115", f"unknown section `{raw.heading}` (kept as text)", heading_span)
            )
            continue
        if raw.name in seen and raw.name != "delegation":
            out.append(
                make(
                    "PS116",
                    f"section `{raw.heading}` appears a second time; both are read",
                    heading_span,
                )
            )
        seen.add(raw.name)
        _read_section(raw, filename, fields, out)
    return sections


def _read_section(
    raw: RawSection, filename: str, fields: dict[str, Any], out: list[Diagnostic]
) -> None:
    name = raw.name
    if name == "slots":
        fields["slots"] += parse_slots(raw, filename, out)
    elif name == "config":
        fields["config"] += parse_config(raw, filename, out)
    elif name == "parameters":
        fields["parameters"] += parse_parameters(raw, filename, out)
    elif name == "returns":
        fields["returns"] += parse_returns(raw, filename, out)
    elif name == "invariants":
        fields["invariants"] += parse_invariants(raw, filename)
    elif name == "shape":
        fields.setdefault("shape", parse_shape(raw, filename))
    elif name == "metadata":
        fields["metadata"] = {**parse_metadata(raw), **fields.get("metadata", {})}
    elif name == "description":
        fields.setdefault("description", paragraphs(raw) or None)


def _delegation(
    text: str, doc: Document, filename: str, names: set[str], out: list[Diagnostic]
) -> list[DelegationBlock]:
    found = delegation_blocks(text)
    blocks = [
        DelegationBlock(
            source=block.source,
            line_offset=block.line_offset,
            fence_line=block.fence_line,
            end_line=block.end_line,
            closed=block.closed,
            span=Span(filename, block.fence_line, 1, block.end_line, 4),
        )
        for block in found
    ]
    if "delegation" not in names:
        out.append(make("PS111", "the pattern has no `### Delegation` section", _at(filename, 1)))
    elif not blocks:
        heading = next(raw for raw in doc.sections if raw.name == "delegation")
        out.append(
            make(
                "PS113",
                "`### Delegation` holds no ```prose block",
                _at(filename, heading.line),
                help="put the program in a fenced block opened by ```prose",
            )
        )
    for block in blocks[1:]:
        out.append(
            make(
                "PS112",
                "a second ```prose block in `### Delegation`; only the first is the program",
                _at(filename, block.fence_line),
                secondary=(Label(_at(filename, blocks[0].fence_line), "the first block"),),
            )
        )
    for block in blocks:
        if not block.closed:
            out.append(
                make(
                    "PS114",
                    f"the ```prose block opened at {block.fence_line}:1 is not closed",
                    _at(filename, block.fence_line),
                )
            )
    program_lines = {block.fence_line for block in blocks}
    for fence in doc.fences:
        if fence.info == "prose" and fence.open_line not in program_lines:
            out.append(
                make(
                    "PS117",
                    "a ```prose block outside `### Delegation` is not part of the program",
                    _at(filename, fence.open_line),
                )
            )
    return blocks


def _check_names(spec: PatternSpec, out: list[Diagnostic]) -> None:
    """Duplicates, slot/config clashes, parameter/config agreement and invariant names."""
    slots: dict[str, Span] = {}
    for slot in spec.slots:
        if slot.name in slots:
            out.append(
                make(
                    "PS121",
                    f"slot `{slot.name}` is declared twice",
                    slot.span,
                    secondary=(Label(slots[slot.name], "first declared here"),),
                )
            )
        slots.setdefault(slot.name, slot.span)
    configs: dict[str, Span] = {}
    for param in spec.config:
        if param.name in configs:
            out.append(
                make(
                    "PS131",
                    f"config key `{param.name}` is declared twice",
                    param.span,
                    secondary=(Label(configs[param.name], "first declared here"),),
                )
            )
        elif param.name in slots:
            out.append(
                make(
                    "PS143",
                    f"config key `{param.name}` has the name of a slot",
                    param.span,
                    secondary=(Label(slots[param.name], "the slot"),),
                )
            )
        configs.setdefault(param.name, param.span)
    params: dict[str, Span] = {}
    for parameter in spec.parameters:
        if parameter.name in params:
            out.append(
                make(
                    "PS141",
                    f"parameter `{parameter.name}` is declared twice",
                    parameter.span,
                    secondary=(Label(params[parameter.name], "first declared here"),),
                )
            )
            continue
        params[parameter.name] = parameter.span
        config = spec.config_param(parameter.name)
        if config is None or parameter.type is None:
            continue
        differs = not types_compatible(config.type, parameter.type)
        if differs or (
            parameter.default is not None
            and config.default is not None
            and parameter.default != config.default
        ):
            what = f"type `{parameter.type}`" if differs else f"default `{parameter.default}`"
            out.append(
                make(
                    "PS142",
                    f"parameter `{parameter.name}` says {what}, its config key does not",
                    parameter.span,
                    secondary=(Label(config.span, "the config key"),),
                )
            )
    for invariant in spec.invariants:
        form = invariant.form
        if form is None:
            continue
        for name in form.slot_names():
            if name not in slots:
                out.append(
                    make(
                        "PS150",
                        f"invariant names `{name}`, which is not a slot",
                        invariant.name_spans.get(name, invariant.span),
                    )
                )
        if isinstance(form, LoopsBoundedBy) and form.config_key not in configs:
            out.append(
                make(
                    "PS151",
                    f"invariant names `{form.config_key}`, which is not a config key",
                    invariant.name_spans.get(form.config_key, invariant.span),
                )
            )
