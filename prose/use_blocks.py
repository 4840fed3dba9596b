"""Blocks exported across files: `use "lib/vote.prose.md" as vote`, then `do vote.majority(xs)`.

Every top-level `block NAME(params):` of a pattern file is exported. A program that
says `use "PATH" as ALIAS` and `do ALIAS.NAME(...)` gets a copy of that block,
named `ALIAS.NAME`, right after its `use`; from there on it *is* a local block:
the semantic model, the flow analysis and the interpreter see a `BlockDef` and a
`Do`, so an imported block passes labels by exactly the rule of a local block
(`prose.lang.flows`), and the soundness test's blocks cover it.

An exported block must be self-contained: it reads only its parameters and the
names it binds itself, never a slot, config key, input or variable of its own
file (PS223), because none of those exist in the file that imports it. Every
node of the copy carries the span of the `use` statement, so a diagnostic or a
run-time error inside it points at the line that imported it, in the importing
file. A `use` target is resolved and refused exactly as for a nested pattern
(`prose.use_paths.resolve_use`); a missing block is PS222.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from prose.diagnostics.model import Diagnostic
from prose.errors import ProseError
from prose.source import Span
from prose.spec.codes import make
from prose.spelling import did_you_mean
from prose.syntax import nodes as n
from prose.syntax.walk import SpanMove, bound_names, find_all, map_spans
from prose.use_paths import UseRefused, resolve_use, use_roots


def import_blocks(program: n.Program, path: str) -> tuple[n.Program, list[Diagnostic]]:
    """`program` with the blocks its `do ALIAS.NAME` statements import; and the problems."""
    uses = {s.alias: s for s in program.body if isinstance(s, n.Use)}
    wanted: dict[str, set[str]] = {}
    for do in find_all(program, n.Do):
        if do.name and "." in do.name:
            alias, _, name = do.name.partition(".")
            if alias in uses:
                wanted.setdefault(alias, set()).add(name)
    if not wanted:
        return program, []
    problems: list[Diagnostic] = []
    imported: dict[str, list[n.BlockDef]] = {}
    roots = use_roots(path)
    for alias, names in wanted.items():
        use = uses[alias]
        exported = _exported(use, path, roots, problems)
        if exported is None:
            continue
        for name in sorted(names):
            block = exported.get(name)
            if block is None:
                problems.append(make(
                    "PS222",
                    f"`{use.path}` exports no block `{name}`" + did_you_mean(name, exported),
                    use.span,
                    help=("its blocks are " + ", ".join(f"`{b}`" for b in sorted(exported)))
                    if exported else "a pattern exports its top-level `block NAME(...):` "
                    "definitions",
                ))
                continue
            leaked = _free_names(block)
            if leaked:
                problems.append(make(
                    "PS223",
                    f"block `{name}` of `{use.path}` reads "
                    + ", ".join(f"`{x}`" for x in leaked)
                    + ", a name of its own file, so it cannot be used from another file",
                    use.span,
                    help="pass what the block needs as parameters",
                ))
                continue
            copy = map_spans(block, _to(use.span))  # every position: the `use` line
            assert isinstance(copy, n.BlockDef)
            imported.setdefault(alias, []).append(
                dataclasses.replace(copy, name=f"{alias}.{name}"))
    body: list[n.Stmt] = []
    for statement in program.body:
        body.append(statement)
        if isinstance(statement, n.Use):
            body.extend(imported.get(statement.alias, ()))
    return dataclasses.replace(program, body=tuple(body)), problems


def _exported(use: n.Use, path: str, roots: tuple[Path, ...],
              problems: list[Diagnostic]) -> dict[str, n.BlockDef] | None:
    from prose.files import read_text
    from prose.syntax import parse

    try:
        target = resolve_use(use.path, path, roots)
        text = read_text(target)
        program = parse(text, str(target))
    except UseRefused as error:
        problems.append(make("PS222", str(error), use.span))
        return None
    except ProseError as error:
        problems.append(make("PS222", f"`{use.path}` cannot be read for its blocks: "
                             f"{getattr(error, 'message', error)}", use.span))
        return None
    return {s.name: s for s in program.body if isinstance(s, n.BlockDef)}


def _free_names(block: n.BlockDef) -> list[str]:
    """Names the block reads that it neither takes nor binds."""
    own = set(block.params) | set(bound_names(n.Program(block.body)))
    found: list[str] = []
    for node in find_all(n.Program(block.body), (n.Name, n.Interpolation, n.Do)):
        if isinstance(node, n.Name):
            name = node.name
        elif isinstance(node, n.Interpolation):
            name = node.path[0]
        else:
            continue  # a `do` of another block of the file is refused below, by its name
        if name not in own and name not in found:
            found.append(name)
    for node in find_all(n.Program(block.body), n.Do):
        if node.name is not None and node.name not in found:
            found.append(node.name)
    return found


def _to(span: Span) -> SpanMove:
    """The move that puts every position at `span`."""
    return lambda _: span
