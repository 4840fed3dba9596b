"""Builds AST nodes from the parser's rule callbacks (run inline by the LALR parser).

Positions come from the first and last token or node of each rule, so no
parse tree is built and Lark's position propagation is not needed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from typing import Literal as TypingLiteral

from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.code_conditions import code_problem
from prose.syntax.lark_api import Token, Transformer
from prose.syntax.walk import map_spans

Item = Any  # a Token, a Node, a tuple of them, or None


class Builder(Transformer[Token, Any]):
    """Rule callbacks; `file` is set by the parser before each parse."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.file = "<string>"
        self.predicate_parser: Callable[[str, int, int], n.Expr | None] = _no_predicates

    # --- positions ---------------------------------------------------------

    def _span(self, items: Sequence[Item]) -> Span:
        first = _first(items)
        last = _last(items)
        if first is None or last is None:
            return Span(self.file, 0, 0, 0, 0)
        return Span(self.file, first[0], first[1], last[0], last[1])

    def _token_span(self, token: Token) -> Span:
        return Span(self.file, token.line, token.column, token.end_line, token.end_column)  # type: ignore[arg-type]

    def _names(self, items: Sequence[Item]) -> tuple[list[Token], tuple[Span, ...]]:
        """The NAME tokens among `items` and where each is written (a node's `bound_at`)."""
        tokens = [item for item in items if isinstance(item, Token) and item.type == "NAME"]
        return tokens, tuple(self._token_span(token) for token in tokens)

    # --- program -----------------------------------------------------------

    def start(self, items: list[Item]) -> tuple[n.Stmt, ...]:
        return join_clauses(items)

    def predicate_start(self, items: list[Item]) -> n.Expr:
        return items[0]  # type: ignore[no-any-return]

    def block(self, items: list[Item]) -> tuple[n.Stmt, ...]:
        return join_clauses(items)

    # --- simple statements -------------------------------------------------

    def let_simple(self, items: list[Item]) -> n.Let:
        names, destructure, end = items[1]
        head = self._span(items[:1]).to(end) if end is not None else self._span(items[:1])
        return n.Let(names, items[2], destructure=destructure, head=head, span=self._span(items))

    let_block = let_simple

    def const_simple(self, items: list[Item]) -> n.Let:
        head = self._span(items[:2])
        return n.Let((str(items[1]),), items[2], const=True, head=head, span=self._span(items))

    const_block = const_simple

    def bind_name(self, items: list[Item]) -> tuple[tuple[str, ...], bool, Span | None]:
        return (str(items[0]),), False, self._token_span(items[0])

    def bind_destructure(self, items: list[Item]) -> tuple[tuple[str, ...], bool, Span | None]:
        names = [item for item in items if item is not None]
        end = self._token_span(names[-1]) if names else None
        return tuple(str(item) for item in names), True, end

    def assign_simple(self, items: list[Item]) -> n.Assign:
        return n.Assign(items[0], items[1], span=self._span(items))

    assign_block = assign_simple

    def return_simple(self, items: list[Item]) -> n.Return:
        value = items[1] if len(items) > 1 else None
        return n.Return(value, span=self._span(items))

    return_block = return_simple

    def call_stmt(self, items: list[Item]) -> n.ExprStmt:
        call = self.call_value(items)
        return n.ExprStmt(call, span=call.span)

    def call_head(self, items: list[Item]) -> n.Call:
        span = self._span(items)
        return n.Call(items[1], head=span, span=span)

    def call_value(self, items: list[Item]) -> n.Call:
        head: n.Call = items[0]
        if len(items) == 1:
            return head
        properties: tuple[n.Property, ...] = items[1]
        return n.Call(head.target, properties, head=head.span, span=self._span(items))

    def properties(self, items: list[Item]) -> tuple[n.Property, ...]:
        return tuple(items)

    def property(self, items: list[Item]) -> n.Property:
        return n.Property(str(items[0]), items[1], span=self._span(items))

    def continue_stmt(self, items: list[Item]) -> n.Continue:
        return n.Continue(span=self._span(items))

    def break_stmt(self, items: list[Item]) -> n.Break:
        return n.Break(span=self._span(items))

    def throw_stmt(self, items: list[Item]) -> n.Throw:
        return n.Throw(items[1] if len(items) > 1 else None, span=self._span(items))

    def record_stmt(self, items: list[Item]) -> n.Append:
        return n.Append(items[1], items[3], "record", span=self._span(items))

    def append_stmt(self, items: list[Item]) -> n.Append:
        return n.Append(items[1], items[3], "append", span=self._span(items))

    def do_call(self, items: list[Item]) -> n.Do:
        names = [str(item) for item in items[1:3] if isinstance(item, Token)]
        args = tuple(item for item in items[1 + len(names):] if item is not None)
        return n.Do(".".join(names), args, span=self._span(items))

    do_bare = do_call

    def do_stmt(self, items: list[Item]) -> n.Do:
        return items[0]  # type: ignore[no-any-return]

    do_value = do_stmt

    def do_block(self, items: list[Item]) -> n.Do:
        return n.Do(None, (), items[1], span=self._span(items))

    # --- sessions and agents ------------------------------------------------

    def session_prompt(self, items: list[Item]) -> n.Session:
        span = self._span(items)
        return n.Session(None, prompt=items[1], head=span, span=span)

    def session_agent(self, items: list[Item]) -> n.Session:
        span = self._span(items)
        return n.Session(str(items[-1]), head=span, span=span)

    def session_labelled(self, items: list[Item]) -> n.Session:
        span = self._span(items)
        return n.Session(str(items[2]), label=str(items[1]), head=span, span=span)

    def resume_agent(self, items: list[Item]) -> n.Session:
        span = self._span(items)
        return n.Session(str(items[-1]), resume=True, head=span, span=span)

    def session_value(self, items: list[Item]) -> n.Session:
        head: n.Session = items[0]
        if len(items) == 1:
            return head
        return n.Session(head.agent, head.prompt, head.label, head.resume, items[1],
                         head=head.head, span=self._span(items))

    def session_stmt(self, items: list[Item]) -> n.ExprStmt:
        session = self.session_value(items)
        return n.ExprStmt(session, span=session.span)

    def agent_def(self, items: list[Item]) -> n.AgentDef:
        properties = tuple(item for item in items[2:] if isinstance(item, n.Property))
        shape = next((item.items for item in items[2:] if isinstance(item, Shape)), ())
        return n.AgentDef(str(items[1]), properties, shape, span=self._span(items))

    def agent_shape(self, items: list[Item]) -> Shape:
        return Shape(items[-1])

    # --- pipelines -----------------------------------------------------------

    def pipeline(self, items: list[Item]) -> n.Pipeline:
        return n.Pipeline(items[0], tuple(items[1:]), span=self._span(items))

    def pipe_stage(self, items: list[Item]) -> n.Stage:
        op = str(items[1])
        return n.Stage(op, ("item",), items[-1], span=self._span(items))  # type: ignore[arg-type]

    def reduce_stage(self, items: list[Item]) -> n.Stage:
        _, bound_at = self._names(items[2:4])
        return n.Stage("reduce", (str(items[2]), str(items[3])), items[-1], span=self._span(items),
                       bound_at=bound_at)

    def use_stmt(self, items: list[Item]) -> n.Use:
        path: n.String = items[1]
        # `use "std/evals/inspector"` alone is `as inspector`: the path's last part.
        alias = str(items[3]) if len(items) > 3 else default_alias(path.text)
        _, bound_at = self._names(items[3:4])
        return n.Use(path.text, alias, span=self._span(items), bound_at=bound_at)

    # --- loops and parallel ------------------------------------------------

    def repeat_stmt(self, items: list[Item]) -> n.Repeat:
        parallel = _is(items[0], "PARALLEL")
        rest = items[1:] if parallel else items
        count = rest[1]
        modifiers: tuple[n.Modifier, ...] = ()
        for item in rest[2:-1]:
            if isinstance(item, Modifiers):
                modifiers = item.items
        names, bound_at = self._names(rest[2:-1])
        var = str(names[0]) if names else None
        return n.Repeat(count, var, rest[-1], parallel, modifiers, span=self._span(items),
                        bound_at=bound_at)

    def for_stmt(self, items: list[Item]) -> n.For:
        parallel = _is(items[0], "PARALLEL")
        rest = items[1:] if parallel else items
        in_at = next(i for i, item in enumerate(rest) if _is(item, "IN"))
        tokens, bound_at = self._names(rest[:in_at])
        names = [str(token) for token in tokens]
        iterable = rest[in_at + 1]
        modifiers = rest[in_at + 2].items if isinstance(rest[in_at + 2], Modifiers) else ()
        index_var = names[1] if len(names) > 1 else None
        # `for x in xs (max: N)` is `loop for each`'s ceiling: the first `max` is the
        # loop's bound, not a parallel modifier (a second one stays, and is reported).
        at = next((i for i, m in enumerate(modifiers) if m.key == "max"), None)
        maximum = None if at is None else modifiers[at].value
        if at is not None:
            modifiers = modifiers[:at] + modifiers[at + 1:]
        return n.For(names[0], index_var, iterable, rest[-1], parallel, modifiers, max=maximum,
                     span=self._span(items), bound_at=bound_at)

    def loop_stmt(self, items: list[Item]) -> n.Loop:
        kind: TypingLiteral["until", "while"] | None = None
        condition = None
        maximum = None
        for item in items[1:-1]:
            if isinstance(item, LoopCondition):
                kind, condition = item.kind, item.condition
            elif isinstance(item, LoopMax):
                maximum = item.value
        names, bound_at = self._names(items[1:-1])
        var = str(names[0]) if names else None
        return n.Loop(kind, condition, maximum, var, items[-1], span=self._span(items),
                      bound_at=bound_at)

    def loop_each(self, items: list[Item]) -> n.For:
        in_at = next(i for i, item in enumerate(items) if _is(item, "IN"))
        tokens, bound_at = self._names(items[:in_at])
        names = [str(token) for token in tokens]
        maximum = next((item.value for item in items if isinstance(item, LoopMax)), None)
        index_var = names[1] if len(names) > 1 else None
        return n.For(names[0], index_var, items[in_at + 1], items[-1], max=maximum, each=True,
                     span=self._span(items), bound_at=bound_at)

    def loop_condition(self, items: list[Item]) -> LoopCondition:
        kind: TypingLiteral["until", "while"] = "until" if str(items[0]) == "until" else "while"
        return LoopCondition(kind, self._condition(items[1]))

    def loop_max(self, items: list[Item]) -> LoopMax:
        return LoopMax(items[1])

    def parallel_block(self, items: list[Item]) -> n.Parallel:
        modifiers = items[1].items if isinstance(items[1], Modifiers) else ()
        return n.Parallel(modifiers, items[-1], span=self._span(items))

    def modifiers(self, items: list[Item]) -> Modifiers:
        return Modifiers(tuple(items))

    def modifier_positional(self, items: list[Item]) -> n.Modifier:
        return n.Modifier(None, items[0], span=self._span(items))

    def modifier_keyword(self, items: list[Item]) -> n.Modifier:
        return n.Modifier(str(items[0]), items[1], span=self._span(items))

    # --- conditionals and errors -------------------------------------------

    def if_part(self, items: list[Item]) -> Clause:
        return Clause("if", self._condition(items[1]), items[2], self._span(items))

    def elif_part(self, items: list[Item]) -> Clause:
        return Clause("elif", self._condition(items[1]), items[2], self._span(items))

    def else_part(self, items: list[Item]) -> Clause:
        return Clause("else", None, items[1], self._span(items))

    def try_part(self, items: list[Item]) -> Clause:
        return Clause("try", None, items[1], self._span(items))

    def catch_part(self, items: list[Item]) -> Clause:
        name = str(items[2]) if len(items) == 4 else None
        _, name_at = self._names(items[2:3]) if name is not None else (None, ())
        return Clause("catch", None, items[-1], self._span(items), name, name_at)

    def finally_part(self, items: list[Item]) -> Clause:
        return Clause("finally", None, items[1], self._span(items))

    def choice_stmt(self, items: list[Item]) -> n.Choice:
        criteria = self._condition(items[1], judged=True)
        return n.Choice(criteria, tuple(items[2:]), span=self._span(items))

    def option(self, items: list[Item]) -> n.Option:
        label: n.String = items[1]
        return n.Option(label.text, items[2], span=self._span(items))

    def block_def(self, items: list[Item]) -> n.BlockDef:
        tokens, bound_at = self._names(items[2:-1])
        params = tuple(str(token) for token in tokens)
        return n.BlockDef(str(items[1]), params, items[-1], span=self._span(items),
                          bound_at=bound_at)

    # --- expressions -------------------------------------------------------

    def name(self, items: list[Item]) -> n.Name:
        token: Token = items[0]
        return n.Name(str(token), span=self._token_span(token))

    def member(self, items: list[Item]) -> n.Member:
        return n.Member(items[0], str(items[1]), span=self._span(items))

    def index(self, items: list[Item]) -> n.Index:
        return n.Index(items[0], items[1], span=self._span(items))

    def number(self, items: list[Item]) -> n.Literal:
        token: Token = items[0]
        text = str(token)
        value: int | float = float(text) if "." in text else int(text)
        return n.Literal(value, span=self._token_span(token))

    def true(self, items: list[Item]) -> n.Literal:
        return n.Literal(True, span=self._token_span(items[0]))

    def false(self, items: list[Item]) -> n.Literal:
        return n.Literal(False, span=self._token_span(items[0]))

    def null(self, items: list[Item]) -> n.Literal:
        return n.Literal(None, span=self._token_span(items[0]))

    def shuffle(self, items: list[Item]) -> n.Shuffle:
        return n.Shuffle(items[1], span=self._span(items))

    def array(self, items: list[Item]) -> n.Array:
        values = tuple(item for item in items[1:-1] if item is not None)
        return n.Array(values, span=self._span(items))

    def object(self, items: list[Item]) -> n.Object:
        entries = tuple(item for item in items[1:-1] if item is not None)
        return n.Object(entries, span=self._span(items))

    def entry(self, items: list[Item]) -> n.Entry:
        key = items[0].text if isinstance(items[0], n.String) else str(items[0])
        return n.Entry(key, items[1], span=self._span(items))

    def entry_shorthand(self, items: list[Item]) -> n.Entry:
        token: Token = items[0]
        span = self._token_span(token)
        return n.Entry(str(token), n.Name(str(token), span=span), True, span=span)

    def string(self, items: list[Item]) -> n.String:
        token: Token = items[0]
        return build_string(token, self.file)

    # --- predicates --------------------------------------------------------

    def or_test(self, items: list[Item]) -> n.BoolOp:
        operands = tuple(item for item in items if not isinstance(item, Token))
        return n.BoolOp("or", operands, span=self._span(items))

    def and_test(self, items: list[Item]) -> n.BoolOp:
        operands = tuple(item for item in items if not isinstance(item, Token))
        return n.BoolOp("and", operands, span=self._span(items))

    def not_test(self, items: list[Item]) -> n.Not:
        return n.Not(items[1], span=self._span(items))

    def compare(self, items: list[Item]) -> n.Compare:
        return n.Compare(str(items[1]), items[0], items[2], span=self._span(items))  # type: ignore[arg-type]

    def compare_not_in(self, items: list[Item]) -> n.Compare:
        return n.Compare("not in", items[0], items[3], span=self._span(items))

    def compare_starts(self, items: list[Item]) -> n.Compare:
        return n.Compare("starts with", items[0], items[3], span=self._span(items))

    def binop(self, items: list[Item]) -> n.BinOp:
        return n.BinOp(str(items[1]), items[0], items[2], span=self._span(items))  # type: ignore[arg-type]

    def slice(self, items: list[Item]) -> n.Slice:
        start, stop = items[1]
        return n.Slice(items[0], start, stop, span=self._span(items))

    def bounds_both(self, items: list[Item]) -> tuple[n.Expr | None, n.Expr | None]:
        return items[0], items[1]

    def bounds_from(self, items: list[Item]) -> tuple[n.Expr | None, n.Expr | None]:
        return items[0], None

    def bounds_to(self, items: list[Item]) -> tuple[n.Expr | None, n.Expr | None]:
        return None, items[0]

    def bounds_all(self, items: list[Item]) -> tuple[n.Expr | None, n.Expr | None]:
        return None, None

    def builtin(self, items: list[Item]) -> n.Builtin:
        token: Token = items[0]
        args: tuple[n.Expr, ...] = tuple(
            item for item in items[1:] if item is not None and not isinstance(item, Token | n.Property)
        )
        keywords = tuple(item for item in items[1:] if isinstance(item, n.Property))
        return n.Builtin(str(token), args, keywords, span=self._span(items))

    def positional(self, items: list[Item]) -> n.Expr:
        return items[0]  # type: ignore[no-any-return]

    def keyword(self, items: list[Item]) -> n.Property:
        return n.Property(str(items[0]), items[1], span=self._span(items))

    def is_test(self, items: list[Item]) -> n.IsTest:
        return n.IsTest(items[0], items[2][0], span=self._span([items[0], items[2][1]]))

    def is_null(self, items: list[Item]) -> tuple[str, Token]:
        return "null", items[-1]

    def is_not_null(self, items: list[Item]) -> tuple[str, Token]:
        return "not null", items[-1]

    def is_empty(self, items: list[Item]) -> tuple[str, Token]:
        return "empty", items[-1]

    def is_not_empty(self, items: list[Item]) -> tuple[str, Token]:
        return "not empty", items[-1]

    # --- conditions ----------------------------------------------------------

    def _condition(self, token: Token, judged: bool = False) -> n.Condition:
        """A condition; `judged`: a `choice`'s criteria, which a judge always reads."""
        raw = str(token)
        span = self._token_span(token)
        marker = ""
        body = raw.strip()
        for candidate in ("***", "**"):
            if len(body) >= 2 * len(candidate) and body.startswith(candidate) and body.endswith(candidate):
                marker = candidate
                body = body[len(candidate) : -len(candidate)]
                break
        # A `***...***` condition may span lines: its line breaks (and the
        # indentation after them) become single spaces; nothing else changes,
        # so string literals inside a predicate keep their spaces.
        text = re.sub(r"[ \t]*\r?\n[ \t]*", " ", body).strip()
        predicate = None
        if text:
            predicate = self.predicate_parser(text, span.line, span.column)
        if predicate is not None:
            lead = len(marker) + len(body) - len(body.lstrip())
            predicate = shift(predicate, span.line - 1, span.column - 1 + lead)
        mentions = () if predicate is not None else mentioned_names(text)
        problem = None
        if predicate is None and not marker and not judged and text:
            problem = code_problem(text)
        return n.Condition(text, marker, predicate, mentions, problem, span=span)


class Clause:
    """An `if`/`elif`/`else`/`try`/`catch`/`finally` part before joining."""

    __slots__ = ("body", "condition", "keyword", "name", "name_at", "span")

    def __init__(
        self,
        keyword: str,
        condition: n.Condition | None,
        body: tuple[n.Stmt, ...],
        span: Span,
        name: str | None = None,
        name_at: tuple[Span, ...] = (),
    ) -> None:
        self.keyword = keyword
        self.condition = condition
        self.body = body
        self.span = span
        self.name = name
        self.name_at = name_at


class LoopCondition:
    __slots__ = ("condition", "kind")

    def __init__(self, kind: TypingLiteral["until", "while"], condition: n.Condition) -> None:
        self.kind = kind
        self.condition = condition


class Modifiers:
    __slots__ = ("items",)

    def __init__(self, items: tuple[n.Modifier, ...]) -> None:
        self.items = items


class Shape:
    __slots__ = ("items",)

    def __init__(self, items: tuple[n.Property, ...]) -> None:
        self.items = items


class LoopMax:
    __slots__ = ("value",)

    def __init__(self, value: n.Expr) -> None:
        self.value = value


def join_clauses(items: Sequence[Item]) -> tuple[n.Stmt, ...]:
    """Join `if`/`elif`/`else` and `try`/`catch`/`finally` parts into nodes.

    A part with nothing to attach to becomes an `Orphan` for the linter.
    """
    out: list[n.Stmt] = []
    index = 0
    count = len(items)
    while index < count:
        item = items[index]
        index += 1
        if not isinstance(item, Clause):
            out.append(item)
            continue
        if item.keyword == "if":
            branches = [n.Branch(item.condition, item.body, span=item.span)]  # type: ignore[arg-type]
            orelse = None
            end = item.span
            while index < count and isinstance(items[index], Clause):
                part: Clause = items[index]
                if part.keyword == "elif" and orelse is None:
                    branches.append(n.Branch(part.condition, part.body, span=part.span))  # type: ignore[arg-type]
                elif part.keyword == "else" and orelse is None:
                    orelse = part.body
                else:
                    break
                end = part.span
                index += 1
            out.append(n.If(tuple(branches), orelse, span=item.span.to(end)))
        elif item.keyword == "try":
            catch_var = None
            catch_at: tuple[Span, ...] = ()
            handler = None
            final = None
            end = item.span
            while index < count and isinstance(items[index], Clause):
                part = items[index]
                if part.keyword == "catch" and handler is None and final is None:
                    catch_var, handler, catch_at = part.name, part.body, part.name_at
                elif part.keyword == "finally" and final is None:
                    final = part.body
                else:
                    break
                end = part.span
                index += 1
            out.append(n.Try(item.body, catch_var, handler, final, span=item.span.to(end),
                             bound_at=catch_at))
        else:
            out.append(n.Orphan(item.keyword, item.body, item.condition, item.name, span=item.span,
                                bound_at=item.name_at))
    return tuple(out)


_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "{": "{", "}": "}"}
_INTERPOLATION = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*)\}")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*)*")


def build_string(token: Token, file: str) -> n.String:
    """Split a string token into text and `{path}` interpolations."""
    raw = str(token)
    triple = raw.startswith('"""')
    quote = 3 if triple else 1
    body = raw[quote:-quote]
    line: int = token.line  # type: ignore[assignment]
    column: int = token.column + quote  # type: ignore[operator]
    span = Span(file, token.line, token.column, token.end_line, token.end_column)  # type: ignore[arg-type]
    if "\\" not in body and "{" not in body:
        return n.String((body,) if body else (), triple, span=span)
    parts: list[str | n.Interpolation] = []
    text: list[str] = []
    position = 0
    length = len(body)
    while position < length:
        char = body[position]
        if char == "\\" and position + 1 < length:
            escaped = body[position + 1]
            # An escaped brace is consumed here, so it never starts an interpolation.
            text.append(_ESCAPES.get(escaped, "\\" + escaped))
            position += 2
            continue
        if char == "{":
            match = _INTERPOLATION.match(body, position)
            if match:
                if text:
                    parts.append("".join(text))
                    text = []
                before = body[:position]
                at_line = line + before.count("\n")
                at_column = (position - before.rfind("\n")) if "\n" in before else column + position
                parts.append(
                    n.Interpolation(
                        tuple(match.group(1).split(".")),
                        span=Span(file, at_line, at_column, at_line, at_column + match.end() - position),
                    )
                )
                position = match.end()
                continue
        text.append(char)
        position += 1
    if text:
        parts.append("".join(text))
    return n.String(tuple(parts), triple, span=span)


def default_alias(path: str) -> str:
    """The alias of a `use` without `as`: the last part of the path, without `.prose.md`."""
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return last.removesuffix(".prose.md").removesuffix(".md")


def mentioned_names(text: str) -> tuple[str, ...]:
    """Identifiers (dotted paths included) in a discretion condition, in order, once each."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        seen.setdefault(match.group(0).rstrip("."), None)
    return tuple(seen)


def shift(node: Any, lines: int, columns: int) -> Any:
    """A copy of a predicate parsed on its own, moved to where its text sits.

    Predicates are parsed from the condition text alone (line 1, column 1);
    they are a single line, so every span moves by the same amount.
    """
    return map_spans(node, lambda old: Span(old.file, old.line + lines, old.column + columns,
                                            old.end_line + lines, old.end_column + columns))


def _no_predicates(text: str, line: int, column: int) -> n.Expr | None:
    return None


def _is(item: Item, kind: str) -> bool:
    return isinstance(item, Token) and item.type == kind


def _first(items: Item) -> tuple[int, int] | None:
    if isinstance(items, Token):
        if items.line is None:
            return None
        return items.line, items.column  # type: ignore[return-value]
    if isinstance(items, n.Node | Clause):
        return items.span.line, items.span.column
    if isinstance(items, list | tuple):
        for item in items:
            found = _first(item)
            if found is not None:
                return found
    if isinstance(items, LoopCondition):
        return items.condition.span.line, items.condition.span.column
    return None


def _last(items: Item) -> tuple[int, int] | None:
    if isinstance(items, Token):
        if items.end_line is None:
            return None
        return items.end_line, items.end_column  # type: ignore[return-value]
    if isinstance(items, n.Node | Clause):
        return items.span.end_line, items.span.end_column
    if isinstance(items, list | tuple):
        for item in reversed(items):
            found = _last(item)
            if found is not None:
                return found
    if isinstance(items, LoopCondition):
        return items.condition.span.end_line, items.condition.span.end_column
    if isinstance(items, LoopMax):
        return _last(items.value)
    return None
