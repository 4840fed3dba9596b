"""Generic traversals of the AST, for the linter's rules and the interpreter alike."""

from __future__ import annotations

from collections.abc import Iterator

from prose.syntax import nodes as n


def child_bodies(statement: n.Stmt | n.Expr) -> Iterator[tuple[n.Stmt, ...]]:
    """The statement blocks directly inside a statement (or loop expression)."""
    if isinstance(statement, n.Repeat | n.For | n.Loop | n.BlockDef | n.Orphan):
        yield statement.body
    elif isinstance(statement, n.Parallel):
        yield statement.branches
    elif isinstance(statement, n.If):
        for branch in statement.branches:
            yield branch.body
        if statement.orelse is not None:
            yield statement.orelse
    elif isinstance(statement, n.Choice):
        for option in statement.options:
            yield option.body
    elif isinstance(statement, n.Try):
        yield statement.body
        if statement.handler is not None:
            yield statement.handler
        if statement.final is not None:
            yield statement.final
    elif isinstance(statement, n.Do):
        yield statement.body
    elif isinstance(statement, n.Let | n.Assign | n.Return):
        value = statement.value
        if isinstance(value, n.Repeat | n.For | n.Loop):
            yield value.body


def value_loop(statement: n.Stmt) -> n.Repeat | n.For | n.Loop | None:
    """The loop in value position of `let x = <loop>`, `x = <loop>` or `return <loop>`."""
    if isinstance(statement, n.Let | n.Assign | n.Return):
        value = statement.value
        if isinstance(value, n.Repeat | n.For | n.Loop):
            return value
    return None


def walk_statements(body: tuple[n.Stmt, ...]) -> Iterator[n.Stmt | n.Repeat | n.For | n.Loop]:
    """Every statement (and loop in value position), depth first, in source order."""
    stack: list[Iterator[n.Stmt]] = [iter(body)]
    while stack:
        statement = next(stack[-1], None)
        if statement is None:
            stack.pop()
            continue
        yield statement
        loop = value_loop(statement)
        if loop is not None:
            yield loop
        bodies = list(child_bodies(statement))
        for inner in reversed(bodies):
            stack.append(iter(inner))


def terminal_returns(body: tuple[n.Stmt, ...]) -> Iterator[n.Return]:
    """The `return`s that end the pattern (not those of collecting loops, LANGUAGE.md 4.3)."""
    stack: list[tuple[tuple[n.Stmt, ...], bool]] = [(body, False)]
    while stack:
        block, collecting = stack.pop()
        for position, statement in enumerate(block):
            if isinstance(statement, n.Return) and not collecting:
                yield statement
            loop = value_loop(statement)
            if loop is not None:
                stack.append((loop.body, True))
            last = position == len(block) - 1
            if isinstance(statement, n.Repeat | n.For | n.Loop):
                stack.append((statement.body, collecting and last))
                continue
            if isinstance(statement, n.BlockDef):
                continue  # a block's return ends the block, not the pattern
            for inner in child_bodies(statement):
                if loop is not None and inner is loop.body:
                    continue
                stack.append((inner, collecting))


def statements_in_loops(body: tuple[n.Stmt, ...]) -> set[int]:
    """`id()`s of the statements that may run more than once (inside a loop body)."""
    inside: set[int] = set()
    stack: list[tuple[tuple[n.Stmt, ...], bool]] = [(body, False)]
    while stack:
        block, looped = stack.pop()
        for statement in block:
            if looped:
                inside.add(id(statement))
            loop = value_loop(statement)
            for inner in child_bodies(statement):
                is_loop_body = isinstance(statement, n.Repeat | n.For | n.Loop) or (
                    loop is not None and inner is loop.body
                )
                stack.append((inner, looped or is_loop_body))
    return inside


def bound_names(program: n.Program) -> frozenset[str]:
    """Every name the program binds anywhere: `let`, loop, catch and block variables."""
    names: set[str] = set()
    for statement in walk_statements(program.body):
        if isinstance(statement, n.Let):
            names.update(statement.names)
        elif isinstance(statement, n.For):
            names.add(statement.var)
            if statement.index_var:
                names.add(statement.index_var)
        elif isinstance(statement, n.Repeat | n.Loop) and statement.var:
            names.add(statement.var)
        elif isinstance(statement, n.Try) and statement.catch_var:
            names.add(statement.catch_var)
        elif isinstance(statement, n.BlockDef):
            names.update(statement.params)
    return frozenset(names)
