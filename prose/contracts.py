"""Contracts that call contracts: how `call name` in a `### Execution` finds its callee.

One rule, shared by the linter and the run (docs/contracts.md). Inside a
contract's program (a function's or responsibility's `### Execution`), a
`call name` that is not one of the program's own names (a slot, a `use`
alias, a variable, a block) resolves, in order, to:

1. a pattern instance `name` declared in the contract's `### Patterns` block
   (its `pattern:` resolved by 3-4, or a relative `*.prose.md` path);
2. a `## name` node of the same file;
3. a sibling `*.prose.md` in the same folder whose frontmatter `name` is `name`;
4. a sibling file `name.prose.md`.

The callee's `### Parameters` are what the call may pass (and must pass,
unless optional) and its `### Returns` what it gives back, so the callee
becomes a slot of the caller with that contract: the linter checks the call
against it like any slot, and the run binds it (a callee with its own program
runs as a nested pattern, with its own information-hiding boundary; one
without runs as one model call). A name that resolves nowhere stays unbound:
the linter reports it (PN102) and the run refuses it.

A function with no ```prose program is a single render: it runs as one call
to a slot of its own name, passed every parameter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from prose.spec.model import PatternSpec, Requirement, ReturnKey, Slot

if TYPE_CHECKING:
    from prose.syntax.nodes import Program

SUFFIX = ".prose.md"
SELF = "self"
INLINE = "#"
_IDENTIFIER = re.compile(r"[A-Za-z_][\w-]*")


def called_names(program: Program) -> list[str]:
    """The bare names a program calls (`call name`), in order of first call."""
    from prose.syntax import nodes as n
    from prose.syntax.walk import children

    found: dict[str, None] = {}

    def visit(node: n.Node) -> None:
        if isinstance(node, n.Call) and isinstance(node.target, n.Name):
            found.setdefault(node.target.name)
        for child in children(node):
            visit(child)

    for statement in program.body:
        visit(statement)
    return list(found)


INSTANCE = "instance:"


def _instance_target(spec: PatternSpec, name: str) -> str | None:
    """`instance:PATH` for a `### Patterns` instance called `name` whose pattern is found."""
    instance = next((item for item in spec.pattern_instances if item.name == name), None)
    if instance is None:
        return None
    given = instance.pattern
    if given.endswith(SUFFIX):
        path = (Path(spec.path).resolve().parent / given).resolve()
        return INSTANCE + str(path) if path.is_file() else None
    found = resolve_call(given, spec.path, [])
    return INSTANCE + found if found is not None and not found.startswith(INLINE) else None


def resolve_call(name: str, using: str | Path, inline: Sequence[str]) -> str | None:
    """Where `call name` in the contract file `using` goes (OpenProse's rule), or None.

    In order: a `## name` node of the same file (returns `#name`); a sibling
    `*.prose.md` in the same folder whose frontmatter `name` is `name`; a sibling
    file `name.prose.md`. Slots, `use` aliases, variables and blocks are the
    program's own names and are looked up before this (by the caller).
    """
    if name in inline:
        return "#" + name
    folder = Path(using).resolve().parent
    by_name, by_stem = _siblings(folder)
    found = by_name.get(name) or by_stem.get(name)
    return str(found) if found is not None else None


def _siblings(folder: Path) -> tuple[dict[str, Path], dict[str, Path]]:
    """The contracts of a folder by frontmatter `name` and by file stem (read again only when
    a file of the folder changes)."""
    try:
        stamp = tuple(
            (path.name, path.stat().st_mtime_ns) for path in sorted(folder.glob("*" + SUFFIX))
        )
    except OSError:
        return {}, {}
    return _read_siblings(folder, stamp)


@lru_cache(maxsize=64)
def _read_siblings(
    folder: Path, stamp: tuple[tuple[str, int], ...]
) -> tuple[dict[str, Path], dict[str, Path]]:
    by_name: dict[str, Path] = {}
    by_stem: dict[str, Path] = {}
    pattern = re.compile(r"^name:\s*['\"]?([^'\"\s#]+)", re.M)
    for path in sorted(folder.glob("*" + SUFFIX)):
        by_stem.setdefault(path.name[: -len(SUFFIX)], path)
        try:
            head = path.read_text(encoding="utf-8", errors="replace")[:4096]
        except OSError:
            continue
        if head.lstrip().startswith("---"):
            frontmatter = head.lstrip()[3:].split("\n---", 1)[0]
            match = pattern.search(frontmatter)
            if match:
                by_name.setdefault(match.group(1), path)
    return by_name, by_stem


def with_callees(spec: PatternSpec, program: Program | None) -> tuple[PatternSpec, Program | None]:
    """The contract with a slot per resolved callee (and, for a function with no program,
    its single-render program). Names that resolve nowhere are left to the linter."""
    callees: dict[str, str] = {}
    slots = list(spec.slots)
    if program is None:
        if spec.kind not in ("function", "service") or not spec.name:
            return spec, None
        name = spec.name if _IDENTIFIER.fullmatch(spec.name) else "render"
        program = _single_render(spec, name)
        slots.append(_slot(name, spec, spec.span))
        callees[name] = SELF
    own = set(spec.slot_names) | _own_names(program)
    inline = [node.name for node in spec.inline_nodes if node.name]
    for name in called_names(program):
        if name in own or name in callees:
            continue
        target = _instance_target(spec, name) or resolve_call(name, spec.path, inline)
        if target is None:
            continue
        callee = _callee_spec(target, spec)
        if callee is None:
            continue
        callees[name] = target
        slots.append(_slot(name, callee, callee.span))
    if not callees:
        return spec, program
    return spec.model_copy(update={"slots": slots, "callees": callees}), program


def callee_spec(spec: PatternSpec, name: str) -> PatternSpec | None:
    """The contract of the callee `name` of `spec` (None if `name` is no callee)."""
    target = spec.callees.get(name)
    if target is None:
        return None
    return spec if target == SELF else _callee_spec(target, spec)


def nested_target(spec: PatternSpec, name: str) -> tuple[str, dict[str, object]] | None:
    """`(file, config)` of callee `name` when it runs as a nested pattern: a `### Patterns`
    instance, or a sibling contract with its own program. None for any other slot."""
    target = spec.callees.get(name)
    if target is None or target == SELF:
        return None
    if target.startswith(INLINE):
        node = spec.inline_node(target[len(INLINE) :])
        if node is None or not node.delegation_blocks:
            return None
        return f"{spec.path}{INLINE}{node.name}", {}
    if target.startswith(INSTANCE):
        instance = next(item for item in spec.pattern_instances if item.name == name)
        return target.removeprefix(INSTANCE), dict(instance.config)
    callee = _callee_spec(target, spec)
    return (target, {}) if callee is not None and callee.delegation_blocks else None


def _callee_spec(target: str, caller: PatternSpec) -> PatternSpec | None:
    if target.startswith(INLINE):
        return caller.inline_node(target[len(INLINE) :])
    target = target.removeprefix(INSTANCE)
    from prose.spec.loader import load_spec_file

    try:
        return load_spec_file(target).spec
    except Exception:  # an unreadable sibling: no contract to check against
        return None


def _slot(name: str, callee: PatternSpec, span: object) -> Slot:
    """A slot whose `requires:` are the callee's Parameters and `ensures:` its Returns."""
    from prose.lang.properties import RESERVED_PROPERTIES

    # A parameter named like a reserved call property (`schema`, `prompt`...) cannot
    # be passed as an input; it is not required of the call.
    requires = [
        Requirement(text=p.name, name=p.name, optional=p.optional, span=p.span)
        for p in callee.parameters
        if p.name not in RESERVED_PROPERTIES
    ]
    ensures = _ensures(callee.returns) or callee.maintains_text
    # OpenProse: a single output is the call's value; several make an object of those
    # keys, whatever their values (`any` also admits null, for a conditional key).
    keys = [key.name for key in callee.returns]
    schema = {key: "any" for key in keys} if len(set(keys)) > 1 else None
    return Slot(
        name=name,
        span=callee.span,
        requires=requires,
        requires_declared=bool(callee.parameters),
        ensures=ensures,
        ensures_keyword="ensures" if ensures else None,
        output_schema=schema,
        description=callee.description or callee.summary,
    )


def _ensures(returns: list[ReturnKey]) -> str | None:
    if not returns:
        return None
    return "; ".join(
        f"`{key.name}`: {key.description}" if key.description else f"`{key.name}`"
        for key in returns
    )


def _own_names(program: Program) -> set[str]:
    from prose.syntax import nodes as n
    from prose.syntax.walk import bound_names, walk_statements

    names = set(bound_names(program))
    for statement in walk_statements(program.body):
        if isinstance(statement, n.Use):
            names.add(statement.alias)
        elif isinstance(statement, n.BlockDef):
            names.add(statement.name)
    return names


def _single_render(spec: PatternSpec, name: str) -> Program:
    """`return call NAME` passing every parameter, placed at the contract's first line."""
    from prose.syntax import parse_program

    lines = [f"return call {name}"]
    from prose.lang.properties import RESERVED_PROPERTIES

    lines += [
        f"  {p.name}: {p.name}"
        for p in spec.parameters
        if _IDENTIFIER.fullmatch(p.name) and p.name not in RESERVED_PROPERTIES
    ]
    return parse_program("\n".join(lines) + "\n", spec.path, 0)


def standing_description(spec: PatternSpec) -> str | None:
    """Why `prose run` does not run this contract, or None when it runs (pattern, function).

    A responsibility (or gateway) is a standing job: a reconciler wakes it when
    what it subscribes to moves and keeps what it maintains current. This
    project has no reconciler, so it says what the job is instead of pretending
    to run it once. A test runs under `prose test`.
    """
    from prose.spec.contract_sections import continuity_mode

    name = spec.name or spec.path
    if spec.kind == "test":
        subject = f" of `{spec.subject}`" if spec.subject else ""
        return f"`{name}` is a test{subject}: run it with `prose test {spec.path}`"
    if spec.kind not in ("responsibility", "gateway", "system"):
        return None
    lines = [
        f"`{name}` is a {spec.kind}: a standing job that a reconciler keeps current "
        "(woken when what it requires moves); prose runs patterns and functions, not "
        "standing jobs. `prose explain` shows its subscriptions.",
    ]
    if spec.goal:
        lines.append(f"goal: {' '.join(spec.goal.split())}")
    needs = [item.name for item in spec.subscriptions]
    lines.append("requires: " + (", ".join(f"`{n}`" for n in needs) or "nothing (external-driven)"))
    maintained = [item.name for item in spec.facets]
    keys = [p.name for p in spec.parameters if p.optional and p.name not in needs]
    parts = [f"`{k}`" for k in keys] + [f"facet `{f}`" for f in maintained]
    lines.append("maintains: " + (", ".join(parts) or (spec.maintains_text or "nothing declared")))
    lines.append(f"continuity: {continuity_mode(spec.continuity)}"
                 + (f" ({spec.continuity})" if spec.continuity else ""))
    return "\n".join(lines)
