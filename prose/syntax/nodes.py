"""The typed AST of a prose program.

Every node is a frozen dataclass with a `span` (file, 1-based line and
column, end line and end column). Spans do not take part in equality, so two
programs that differ only in layout compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias
from typing import Literal as TypingLiteral

from prose.lang.properties import RESERVED_PROPERTIES as RESERVED_PROPERTIES
from prose.source import Span

NO_SPAN = Span("<none>", 0, 0, 0, 0)

# `bound_at` of a node that binds names (a loop's variables, a `catch as` name, a block's or
# a `reduce`'s parameters, a `use` alias): where each is written, in the order the node
# names them (empty for a node built by hand, or a name the source does not write, as
# `map`'s `item`). The LSP's definitions read it; it is no part of the node's value.
def _bound_at() -> Any:
    return field(default=(), compare=False, repr=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class Node:
    """Every node of the AST: where it is written (`span`, not compared)."""

    span: Span = field(compare=False, repr=False, kw_only=True, default=NO_SPAN)

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    @property
    def end_line(self) -> int:
        return self.span.end_line

    @property
    def end_column(self) -> int:
        return self.span.end_column


# --- expressions -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Literal(Node):
    """A number, `true`, `false` or `null`."""

    value: int | float | bool | None


@dataclass(frozen=True, slots=True)
class Interpolation(Node):
    """`{a.b.c}` inside a string: a dotted path to a value in scope."""

    path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class String(Node):
    """A string literal, split into text and interpolations.

    `triple` records whether it was written with triple quotes.
    """

    parts: tuple[str | Interpolation, ...]
    triple: bool = False

    @property
    def text(self) -> str:
        """The literal text with interpolations written back as `{path}`."""
        return "".join(
            part if isinstance(part, str) else "{" + ".".join(part.path) + "}"
            for part in self.parts
        )


@dataclass(frozen=True, slots=True)
class Name(Node):
    """A reference to a variable, parameter, config key or slot."""

    name: str


@dataclass(frozen=True, slots=True)
class Member(Node):
    """`obj.name` (also `xs.length`)."""

    obj: Expr
    name: str


@dataclass(frozen=True, slots=True)
class Index(Node):
    """`obj[index]`."""

    obj: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class Shuffle(Node):
    """`shuffle(items)`: `{ items, key }`, the list in a random order and the sealed key
    (`key[i]` is the position item `i` had) that undoes it in code and never reaches a
    model (`prose.lang.flows.shuffled`)."""

    items: Expr


@dataclass(frozen=True, slots=True)
class Array(Node):
    """`[a, b, ...]`."""

    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Entry(Node):
    """One `key: value` of an object literal; `shorthand` for `{ key }`."""

    key: str
    value: Expr
    shorthand: bool = False


@dataclass(frozen=True, slots=True)
class Object(Node):
    """`{key: value, ...}`."""

    entries: tuple[Entry, ...]


@dataclass(frozen=True, slots=True)
class Property(Node):
    """One `name: value` line under a `call`."""

    name: str
    value: Expr




@dataclass(frozen=True, slots=True)
class Call(Node):
    """`call target` with its indented properties."""

    target: Expr
    properties: tuple[Property, ...] = ()
    # `call target` alone, for diagnostics that point at the call, not its properties.
    head: Span = field(compare=False, repr=False, default=NO_SPAN)

    @property
    def inputs(self) -> tuple[Property, ...]:
        """The properties that are inputs (not reserved call properties)."""
        return tuple(p for p in self.properties if p.name not in RESERVED_PROPERTIES)

    def property(self, name: str) -> Property | None:
        for prop in self.properties:
            if prop.name == name:
                return prop
        return None


@dataclass(frozen=True, slots=True)
class Compare(Node):
    """`left OP right` in a deterministic predicate."""

    op: CompareOp
    left: Expr
    right: Expr


CompareOp = TypingLiteral["==", "!=", "<", "<=", ">", ">=", "in", "not in", "contains",
                          "starts with", "matches"]
ArithOp = TypingLiteral["+", "-", "*", "/", "%"]


@dataclass(frozen=True, slots=True)
class BinOp(Node):
    """`left OP right` with `+` (numbers, strings, lists), `-`, `*`, `/`, `%` (numbers)."""

    op: ArithOp
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Slice(Node):
    """`obj[start:stop]` of a list or string (either bound may be left out)."""

    obj: Expr
    start: Expr | None = None
    stop: Expr | None = None


@dataclass(frozen=True, slots=True)
class Builtin(Node):
    """A pure built-in: `name(args, key: value)` (`prose.lang.builtins` lists them)."""

    name: str
    args: tuple[Expr, ...] = ()
    keywords: tuple[Property, ...] = ()

    def keyword(self, name: str) -> Property | None:
        return next((prop for prop in self.keywords if prop.name == name), None)


@dataclass(frozen=True, slots=True)
class BoolOp(Node):
    """`a and b`, `a or b` (operands in order)."""

    op: TypingLiteral["and", "or"]
    operands: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Not(Node):
    """`not x`."""

    operand: Expr


@dataclass(frozen=True, slots=True)
class IsTest(Node):
    """`X is null` / `is absent` / `is not null` / `is present` / `is empty` / `is not empty`."""

    operand: Expr
    test: TypingLiteral["null", "not null", "empty", "not empty"]


@dataclass(frozen=True, slots=True)
class Condition(Node):
    """The condition of `if`, `elif`, `loop until/while` and `choice`.

    `text` is the condition as LANGUAGE.md 4.5 defines it (markers removed,
    trimmed); `marker` is the emphasis it was written with (`""`, `"**"` or
    `"***"`). `predicate` is the parsed expression when the text is a
    deterministic predicate; otherwise the condition is discretion text for a
    judge, and `mentions` lists the identifiers (dotted paths included) it
    contains, for the checker to resolve against the scope. `problem` says why
    unmarked text that reads as code but does not parse is refused
    (`prose.syntax.code_conditions`): such a condition is never a judge's.
    """

    text: str
    marker: str = ""
    predicate: Expr | None = None
    mentions: tuple[str, ...] = ()
    problem: str | None = None

    @property
    def is_discretion(self) -> bool:
        return self.predicate is None and self.problem is None




# --- statements --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Let(Node):
    """`let x = v`, `const x = v`, or `let { a, b } = v` (`names` has them all)."""

    names: tuple[str, ...]
    value: Expr
    const: bool = False
    destructure: bool = False
    # From `let` to the end of the (first) bound name.
    head: Span = field(compare=False, repr=False, default=NO_SPAN)


@dataclass(frozen=True, slots=True)
class Assign(Node):
    """`target = value` where target is a name, member or index."""

    target: Expr
    value: Expr


@dataclass(frozen=True, slots=True)
class ExprStmt(Node):
    """An expression used as a statement (a `call`, or a loop)."""

    expr: Expr


@dataclass(frozen=True, slots=True)
class Return(Node):
    """`return [value]`."""

    value: Expr | None = None


@dataclass(frozen=True, slots=True)
class Modifier(Node):
    """One parallel modifier: `"first"` (key None) or `count: 2`."""

    key: str | None
    value: Expr


@dataclass(frozen=True, slots=True)
class Repeat(Node):
    """`[parallel] repeat count [as var]:`"""

    count: Expr
    var: str | None
    body: tuple[Stmt, ...]
    parallel: bool = False
    modifiers: tuple[Modifier, ...] = ()
    bound_at: tuple[Span, ...] = _bound_at()


@dataclass(frozen=True, slots=True)
class For(Node):
    """`[parallel] for var [, index_var] in iterable [(modifiers, max: N)]:`, or
    `loop for each var in iterable (max: N):` (`each` records that spelling). With a
    `max`, at most the first `max` items are iterated (prose.lang.loops)."""

    var: str
    index_var: str | None
    iterable: Expr
    body: tuple[Stmt, ...]
    parallel: bool = False
    modifiers: tuple[Modifier, ...] = ()
    max: Expr | None = None
    each: bool = False
    bound_at: tuple[Span, ...] = _bound_at()


@dataclass(frozen=True, slots=True)
class Loop(Node):
    """`loop [until|while COND] [(max: N)] [as var]:`"""

    kind: TypingLiteral["until", "while"] | None
    condition: Condition | None
    max: Expr | None
    var: str | None
    body: tuple[Stmt, ...]
    bound_at: tuple[Span, ...] = _bound_at()


@dataclass(frozen=True, slots=True)
class Parallel(Node):
    """`parallel [(modifiers)]:` with one branch per statement."""

    modifiers: tuple[Modifier, ...]
    branches: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Branch(Node):
    """One `if`/`elif` arm: the condition and its body."""

    condition: Condition
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class If(Node):
    """`if` / `elif` branches and an optional `else`."""

    branches: tuple[Branch, ...]
    orelse: tuple[Stmt, ...] | None = None


@dataclass(frozen=True, slots=True)
class Orphan(Node):
    """An `elif`, `else`, `catch` or `finally` with no statement to attach to.

    Kept in the tree (not a syntax error) so the linter can say what is
    missing; the interpreter refuses to run it.
    """

    keyword: str
    body: tuple[Stmt, ...]
    condition: Condition | None = None
    var: str | None = None  # the `as err` of a stray `catch`
    bound_at: tuple[Span, ...] = _bound_at()


@dataclass(frozen=True, slots=True)
class Option(Node):
    """One `option "label":` of a `choice`."""

    label: str
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Choice(Node):
    """`choice CRITERIA:` and its `option "label":` blocks."""

    criteria: Condition
    options: tuple[Option, ...]


@dataclass(frozen=True, slots=True)
class Try(Node):
    """`try:` with its `catch [as name]:` and `finally:` bodies."""

    body: tuple[Stmt, ...]
    catch_var: str | None = None
    handler: tuple[Stmt, ...] | None = None
    final: tuple[Stmt, ...] | None = None
    bound_at: tuple[Span, ...] = _bound_at()


@dataclass(frozen=True, slots=True)
class Throw(Node):
    """`throw [value]`."""

    value: Expr | None = None


@dataclass(frozen=True, slots=True)
class Continue(Node):
    """`continue`."""

    pass


@dataclass(frozen=True, slots=True)
class Break(Node):
    """`break`."""

    pass


@dataclass(frozen=True, slots=True)
class Append(Node):
    """`record value in target` (`keyword == "record"`) or `append value to target`."""

    value: Expr
    target: Expr
    keyword: TypingLiteral["record", "append"] = "record"


@dataclass(frozen=True, slots=True)
class BlockDef(Node):
    """`block name(params):` and its body."""

    name: str
    params: tuple[str, ...]
    body: tuple[Stmt, ...]
    bound_at: tuple[Span, ...] = _bound_at()


@dataclass(frozen=True, slots=True)
class Do(Node):
    """`do name(args)`, or `do:` with an inline body (`name` None)."""

    name: str | None
    args: tuple[Expr, ...] = ()
    body: tuple[Stmt, ...] = ()


@dataclass(frozen=True, slots=True)
class Use(Node):
    """`use "path" [as alias]`."""

    path: str
    alias: str
    bound_at: tuple[Span, ...] = _bound_at()


@dataclass(frozen=True, slots=True)
class AgentDef(Node):
    """`agent NAME:` with `model`/`prompt`/`persist`/`skills` properties and a `shape:` map."""

    name: str
    properties: tuple[Property, ...] = ()
    shape: tuple[Property, ...] = ()

    def property(self, name: str) -> Property | None:
        return next((prop for prop in self.properties if prop.name == name), None)


@dataclass(frozen=True, slots=True)
class Session(Node):
    """`session "prompt"`, `session: agent`, `session label: agent` or `resume: agent`
    (`resume`), with indented properties as a call has."""

    agent: str | None
    prompt: String | None = None
    label: str | None = None
    resume: bool = False
    properties: tuple[Property, ...] = ()
    # The header line alone, for diagnostics that point at the session, not its properties.
    head: Span = field(compare=False, repr=False, default=NO_SPAN)

    @property
    def slot(self) -> str:
        """The name its model calls go by (script queues, trace, policy): the agent's, or
        `session` for an inline prompt."""
        return self.agent if self.agent is not None else "session"

    def property(self, name: str) -> Property | None:
        return next((prop for prop in self.properties if prop.name == name), None)


@dataclass(frozen=True, slots=True)
class Stage(Node):
    """One `| map:`, `| pmap:`, `| filter:` or `| reduce(acc, item):` of a pipeline;
    `params` are the names its body binds (`("item",)` but for reduce)."""

    op: TypingLiteral["map", "pmap", "filter", "reduce"]
    params: tuple[str, ...]
    body: tuple[Stmt, ...]
    bound_at: tuple[Span, ...] = _bound_at()


@dataclass(frozen=True, slots=True)
class Pipeline(Node):
    """`source | stage | stage ...`: each stage takes the previous one's list."""

    source: Expr
    stages: tuple[Stage, ...]


Stmt = (
    Let
    | Assign
    | ExprStmt
    | Return
    | Repeat
    | For
    | Loop
    | Parallel
    | If
    | Orphan
    | Choice
    | Try
    | Throw
    | Continue
    | Break
    | Append
    | BlockDef
    | Do
    | Use
    | AgentDef
)

Expr = (
    Literal
    | String
    | Name
    | Member
    | Index
    | Shuffle
    | Array
    | Object
    | Call
    | Compare
    | BoolOp
    | Not
    | IsTest
    | BinOp
    | Slice
    | Builtin
    | Repeat
    | For
    | Loop
    | Parallel
    | Do
    | Session
    | Pipeline
)

# The loops, statements that are also expressions (in value position they collect,
# LANGUAGE.md 4.3): one name for annotations and for `isinstance(node, LoopNode)`.
LoopNode: TypeAlias = Repeat | For | Loop


@dataclass(frozen=True, slots=True)
class Comment(Node):
    """A `#` comment; `own_line` when nothing but space precedes it."""

    text: str
    own_line: bool


@dataclass(frozen=True, slots=True)
class Program(Node):
    """A parsed prose block: its statements and every comment in it."""

    body: tuple[Stmt, ...]
    comments: tuple[Comment, ...] = field(default=(), compare=False)
    source: str = field(default="", compare=False, repr=False)
