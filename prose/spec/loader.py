"""`load_spec`: a `*.prose.md` text -> `PatternSpec` plus diagnostics (never raises for content)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prose.diagnostics.model import Diagnostic, Label
from prose.errors import InputReadError
from prose.lang.invariants import LoopsBoundedBy
from prose.source import Span
from prose.spec.codes import make
from prose.spec.config import parse_config, parse_parameters
from prose.spec.contract import parse_invariants, parse_metadata, parse_returns, parse_shape
from prose.spec.contract_sections import (
    maintains_text,
    parse_continuity,
    parse_expectations,
    parse_facets,
    parse_fixtures,
    parse_pattern_instances,
    parse_subscriptions,
)
from prose.spec.kinds import ALL_SECTIONS, KINDS, RETIRED, ContractKind, kind_of
from prose.spec.markdown_sections import (
    Document,
    RawSection,
    normalise_section_name,
    paragraphs,
    prose_fences,
    section_text,
    split_document,
    split_frontmatter,
)
from prose.spec.model import DelegationBlock, Parameter, PatternSpec, Section, SpecResult
from prose.spec.slots import parse_slots
from prose.spec.values import types_compatible
from prose.spec.yaml_nodes import YamlProblem, compose, key_nodes, node_span


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


def program_section(text: str, filename: str) -> str:
    """Where a markdown file's program is, by its kind: `delegation` (a pattern, or a file
    whose frontmatter cannot be read) or `execution` (`prose.spec.kinds`)."""
    spec = load_spec(text, filename).spec
    return spec.program_section if spec is not None else "delegation"


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
    kind_name = _scalar(frontmatter.get("kind"))
    kind = kind_of(kind_name)
    # Rules of one kind apply to that kind only; an unknown kind gets none of them.
    is_pattern = kind_name == "pattern" or (kind_name is None and not broken)
    doc = split_document(lines, body)
    own, nodes = _split_nodes(doc.sections)
    fields = _node_fields(own, kind, filename, out)
    sections: list[Section] = fields.pop("sections")
    metadata: dict[str, str] = fields.pop("metadata", {})
    version = version_text or metadata.get("version") or None
    if version is None and not broken and is_pattern:
        out.append(
            make(
                "PS107",
                "the pattern declares no `version`",
                _at(filename, 1),
                help="add `version: 0.1.0` to the frontmatter",
            )
        )
    if doc.title is None and is_pattern:
        first = doc.sections[0].line if doc.sections else 1
        out.append(make("PS108", "the pattern has no `# Title` line", _at(filename, first)))
    names = {section.name for section in sections}
    if "slots" not in names and is_pattern:
        out.append(make("PS110", "the pattern has no `### Slots` section", _at(filename, 1)))
    # An unclosed frontmatter swallows the file: no program block can be trusted.
    blocks = (
        _program_blocks(own, kind, filename, names, out, is_pattern)
        if "PS102" not in broken
        else []
    )
    _stray_blocks(doc, own, nodes, kind, blocks, filename, out)
    inline = [_inline_node(node, filename, out) for node in nodes]
    spec = PatternSpec(
        path=filename,
        span=Span(filename, 1, 1, len(lines), len(lines[-1]) + 1),
        frontmatter=frontmatter,
        name=_scalar(frontmatter.get("name")),
        kind=kind_name,
        version=version,
        title=doc.title,
        summary=doc.summary,
        metadata=metadata,
        sections=sections,
        delegation_blocks=blocks,
        unknown_sections=[section for section in sections if not section.known],
        program_section=kind.program_section,
        subject=_scalar(frontmatter.get("subject")),
        inline_nodes=inline,
        **fields,
    )
    _check_names(spec, out)
    if not broken:
        _check_kind(spec, frontmatter_line=_frontmatter_line(lines), out=out)
    out.sort(key=Diagnostic.sort_key)
    return SpecResult(spec=spec, diagnostics=out)


def _frontmatter_line(lines: list[str]) -> int:
    start, _, _ = split_frontmatter(lines)
    return start + 1 if start >= 0 else 1


def _check_kind(spec: PatternSpec, *, frontmatter_line: int, out: list[Diagnostic]) -> None:
    """The rules of one kind: a test's subject and assertions, a standing job's truth."""
    at = _at(spec.path, frontmatter_line)
    heading = {section.name: section.span for section in spec.sections}
    if spec.kind == "test":
        if not spec.subject:
            out.append(make("PS160", "the test names no `subject:`", at,
                            help="add `subject: NAME` (the function it runs) to the frontmatter"))
        if not spec.expectations:
            out.append(make("PS161", "the test has no `### Expects` nor `### Expects Not`", at))
    elif spec.kind in ("responsibility", "gateway"):
        if "maintains" not in heading:
            out.append(make("PS162", f"the {spec.kind} declares no `### Maintains`", at))
        if spec.kind == "gateway" and "requires" in heading:
            span = heading["requires"]
            out.append(make("PS163", "a gateway has no `### Requires`: its input arrives from "
                            "outside the graph", Span.point(spec.path, span.line, 1)))
    elif spec.kind == "function":
        for name in ("maintains", "continuity"):
            if name in heading:
                out.append(make("PS164", f"a function keeps nothing: `### {name.capitalize()}` "
                                "belongs to a responsibility",
                                Span.point(spec.path, heading[name].line, 1)))


def _split_nodes(
    sections: list[RawSection],
) -> tuple[list[RawSection], list[tuple[RawSection, list[RawSection]]]]:
    """The file-level sections, and each `## name` node with its `###` sections.

    A `##` heading that names a known section is that section (older files use
    `## Slots`); any other `##` heading opens an inline node (Contract Markdown).
    """
    own: list[RawSection] = []
    nodes: list[tuple[RawSection, list[RawSection]]] = []
    for raw in sections:
        if raw.level == 2 and _base_name(raw.name)[0] not in ALL_SECTIONS:
            nodes.append((raw, []))
        elif nodes:
            nodes[-1][1].append(raw)
        else:
            own.append(raw)
    return own, nodes


def _base_name(name: str) -> tuple[str, str | None]:
    """`continuity: external-driven` -> (`continuity`, `external-driven`)."""
    head, sep, rest = name.partition(":")
    if sep and normalise_section_name(head) in ALL_SECTIONS:
        return normalise_section_name(head), rest.strip() or None
    return name, None


def _inline_node(
    node: tuple[RawSection, list[RawSection]], filename: str, out: list[Diagnostic]
) -> PatternSpec:
    """A `## name` node: a function whose sections follow its heading."""
    heading, raws = node
    kind = KINDS["function"]
    fields = _node_fields(raws, kind, filename, out)
    sections: list[Section] = fields.pop("sections")
    fields.pop("metadata", None)
    names = {section.name for section in sections}
    blocks = _program_blocks(raws, kind, filename, names, out, False)
    end = raws[-1].end_line if raws else heading.end_line
    return PatternSpec(
        path=filename,
        span=Span(filename, heading.line, 1, end, 1),
        name=heading.heading.strip("`"),
        kind="function",
        sections=sections,
        delegation_blocks=blocks,
        program_section=kind.program_section,
        **fields,
    )


def _node_fields(
    raws: list[RawSection], kind: ContractKind, filename: str, out: list[Diagnostic]
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "slots": [],
        "config": [],
        "parameters": [],
        "returns": [],
        "invariants": [],
        "subscriptions": [],
        "facets": [],
        "expectations": [],
        "pattern_instances": [],
    }
    fields["sections"] = _sections(raws, kind, filename, fields, out)
    if "maintains" in kind.sections:  # a need and a maintained key may share a name
        fields["parameters"] = list({p.name: p for p in reversed(fields["parameters"])}.values())
        fields["parameters"].reverse()
    return fields


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
    elif kind in RETIRED:
        span = node_span(keys["kind"][1], filename, start + 1)
        replacement = RETIRED[kind][1]
        out.append(
            make("PS118", f"`kind: {kind}` is retired; read as {replacement}", span,
                 help=f"write {replacement}")
        )
    elif kind not in KINDS:
        span = node_span(keys["kind"][1], filename, start + 1)
        known = ", ".join(f"`{name}`" for name in KINDS)
        out.append(
            make("PS106", f"unknown kind `{kind}`; read as documentation (kinds: {known})", span)
        )
    version_node = keys.get("version", (None, None))[1]
    version = (
        version_node.value
        if version_node is not None and isinstance(version_node.value, str)
        else None
    )
    return frontmatter, (version.strip() or None) if version else None, body


def _sections(
    raws: list[RawSection],
    kind: ContractKind,
    filename: str,
    fields: dict[str, Any],
    out: list[Diagnostic],
) -> list[Section]:
    sections: list[Section] = []
    seen: set[str] = set()
    for raw in raws:
        base, inline = _base_name(raw.name)
        raw.name = kind.section_name(base)
        known = raw.name in kind.sections
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
            where = (
                f"not a section of a `{kind.name}`"
                if raw.name in ALL_SECTIONS
                else "unknown section"
            )
            out.append(make("PS115", f"{where}: `{raw.heading}` (kept as text)", heading_span))
            continue
        if raw.name in seen and raw.name != kind.program_section:
            out.append(
                make(
                    "PS116",
                    f"section `{raw.heading}` appears a second time; both are read",
                    heading_span,
                )
            )
        seen.add(raw.name)
        _read_section(raw, kind, inline, filename, fields, out)
    return sections


def _read_section(
    raw: RawSection,
    kind: ContractKind,
    inline: str | None,
    filename: str,
    fields: dict[str, Any],
    out: list[Diagnostic],
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
    elif name == "goal":
        fields.setdefault("goal", paragraphs(raw) or None)
    elif name == "requires":
        needs = parse_subscriptions(raw, filename)
        fields["subscriptions"] += needs
        # What a responsibility subscribes to is what its render reads.
        fields["parameters"] += [
            Parameter(name=need.name, description=need.description, span=need.span)
            for need in needs
        ]
    elif name == "maintains":
        fields["facets"] += parse_facets(raw, filename)
        fields.setdefault("maintains_text", maintains_text(raw))
        # The maintained truth's last value is readable by the render that keeps it.
        fields["parameters"] += [
            Parameter(
                name=key.name, description=key.description, optional=True, default=None,
                span=key.span,
            )
            for key in parse_returns(raw, filename, [])
        ]
    elif name == "continuity":
        fields.setdefault("continuity", parse_continuity(raw, inline))
    elif name == "fixtures":
        values, spans = parse_fixtures(raw, filename)
        fields["fixtures"] = {**values, **fields.get("fixtures", {})}
        fields["fixture_spans"] = {**spans, **fields.get("fixture_spans", {})}
    elif name == "patterns":
        fields["pattern_instances"] += parse_pattern_instances(raw, filename)
    elif name in ("expects", "expects not"):
        fields["expectations"] += parse_expectations(raw, filename, name == "expects not")


def _program_blocks(
    raws: list[RawSection],
    kind: ContractKind,
    filename: str,
    names: set[str],
    out: list[Diagnostic],
    is_pattern: bool,
) -> list[DelegationBlock]:
    """The ```prose blocks of the kind's program section (`### Delegation` or `### Execution`)."""
    found = [
        fence for raw in raws if raw.name == kind.program_section for fence in prose_fences(raw)
    ]
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
    heading = "### " + kind.program_section.capitalize()
    if is_pattern and "delegation" not in names:
        out.append(make("PS111", "the pattern has no `### Delegation` section", _at(filename, 1)))
    elif is_pattern and not blocks:
        raw = next(raw for raw in raws if raw.name == "delegation")
        out.append(
            make(
                "PS113",
                "`### Delegation` holds no ```prose block",
                _at(filename, raw.line),
                help="put the program in a fenced block opened by ```prose",
            )
        )
    for block in blocks[1:]:
        out.append(
            make(
                "PS112",
                f"a second ```prose block in `{heading}`; only the first is the program",
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
    return blocks


def _stray_blocks(
    doc: Document,
    own: list[RawSection],
    nodes: list[tuple[RawSection, list[RawSection]]],
    kind: ContractKind,
    blocks: list[DelegationBlock],
    filename: str,
    out: list[Diagnostic],
) -> None:
    """PS117: a ```prose block outside every program section of the file."""
    programs = {block.fence_line for block in blocks}
    for raw in own:
        if raw.name == kind.program_section:
            programs |= {fence.fence_line for fence in prose_fences(raw)}
    for _, raws in nodes:
        for raw in raws:
            if raw.name == "execution":
                programs |= {fence.fence_line for fence in prose_fences(raw)}
    where = "### " + kind.program_section.capitalize()
    for fence in doc.fences:
        if fence.info == "prose" and fence.open_line not in programs:
            out.append(
                make(
                    "PS117",
                    f"a ```prose block outside `{where}` is not part of the program",
                    _at(filename, fence.open_line),
                )
            )


def _declared_twice(code: str, what: str, name: str, span: Span,
                    first: dict[str, Span]) -> Diagnostic:
    """`what` `name` declared again at `span`, pointing at its first declaration."""
    return make(code, f"{what} `{name}` is declared twice", span,
                secondary=(Label(first[name], "first declared here"),))


def _check_names(spec: PatternSpec, out: list[Diagnostic]) -> None:
    """Duplicates, slot/config clashes, parameter/config agreement and invariant names."""
    slots: dict[str, Span] = {}
    for slot in spec.slots:
        if slot.name in slots:
            out.append(_declared_twice("PS121", "slot", slot.name, slot.span, slots))
        slots.setdefault(slot.name, slot.span)
    configs: dict[str, Span] = {}
    for param in spec.config:
        if param.name in configs:
            out.append(_declared_twice("PS131", "config key", param.name, param.span, configs))
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
            out.append(_declared_twice("PS141", "parameter", parameter.name, parameter.span,
                                       params))
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
    maps = {slot.name for slot in spec.slots if slot.map_valued}
    for invariant in spec.invariants:
        form = invariant.form
        if form is None:
            continue
        for name in form.slot_names():
            base, dot, _ = name.partition(".")
            if dot and base in maps:
                continue  # an entry of a map-valued slot (`handlers.billing`)
            if name not in slots:
                what = (f"`{base}` is not a map-valued slot (mark it `(map)` to name its "
                        "entries)" if dot and base in slots else "which is not a slot")
                out.append(
                    make(
                        "PS150",
                        f"invariant names `{name}`, {what}",
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
