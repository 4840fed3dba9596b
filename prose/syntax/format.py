r"""The canonical formatter: a parsed program (with its comments) back to source.

- Two spaces per level. Call properties go one per line, one level deeper than
  the line holding the `call`; `option`s one level deeper than their `choice`.
- Blank lines: a run of blank lines becomes one, kept only before a statement,
  an `option`, a call property or an own-line comment; never at the start of a
  block or property list, before `elif`/`else`/`catch`/`finally` (or the
  comments above them), inside a literal, or at the start or end. A program
  built in code (no source) gets none.
- Arrays and objects go on one line (`[a, b]`, `{ a: 1, b }`) when they hold no
  comment and the line fits in 88 columns; otherwise one entry per line with a
  trailing comma, the closing bracket back at the opening line's indentation.
- Strings keep their quotes (plain or triple) and are re-escaped: backslash,
  quote, tab, newline (raw inside triple quotes, where only runs of three or
  more quotes are escaped), and a `{` only where it would read as an
  interpolation. Numbers never use exponents.
- Conditions are written back as their text inside their original marker
  (`**`/`***`); a `***` condition that spanned lines is joined on one line.
- Comments stay with their statement. An own-line comment stays before the
  statement, property, option or clause that follows it, at that line's
  indentation; indented like the block (or property list) it comes after, it
  stays at the end of that block. A trailing comment stays at the end of the
  output line holding the source line it ended, so `# prose: ignore[...]` stays
  on its statement's line. Comments inside a literal stay inside, which puts
  the literal (and any literal around it) on several lines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from prose.errors import ProseError, ProseSyntaxError
from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.markdown import delegation_blocks, is_markdown, missing_program
from prose.syntax.visitor import UnknownNode
from prose.syntax.walk import children

WIDTH = 88
INDENT = 2
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*\Z")
_INTERPOLATION = re.compile(r"\{[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*\}")
_CATCH_AS = re.compile(r"[ \t]*catch[ \t]+as[ \t]+([A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*)")
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", '"': '\\"'}

Piece = str | n.Expr  # a header or statement line is text and expressions in a row
Task = tuple[str, object, int]  # ("body", statements, indent) | ("stmt", ...) | ("line", _Line, 0)
STMT, PROP, CLAUSE, COMMENT, INNER = "stmt", "prop", "clause", "comment", "inner"


class FormatError(ProseError):
    """Formatting would change the program's meaning (a formatter bug; nothing is written)."""


def format_program(program: n.Program) -> str:
    """The canonical source of `program`, comments included ("" for no statements)."""
    return _Formatter(program).run()


def format_expr(expr: n.Expr) -> str:
    """An expression on one line; predicates too (`not (a == b) and c is empty`)."""
    return _flat(expr, set())


def format_file(text: str, filename: str, section: str = "delegation") -> str:
    """`text` with its program in canonical form.

    In a markdown file (`*.prose.md`) only the ```prose block(s) under
    `### Delegation` (`### <section>`: `execution` in kinds other than a pattern) are
    rewritten, every other byte unchanged; any other file
    is prose source as a whole. Raises ProseSyntaxError for invalid input and
    FormatError if the result would not parse back to the same program.
    """
    from prose.syntax import parse_program

    if not text.strip():
        raise ProseSyntaxError.at(Span.point(filename, 1, 1), "the file is empty")
    if not is_markdown(filename):
        crlf = text.split("\n", 1)[0].endswith("\r")  # CRLF files stay CRLF
        source = text.replace("\r\n", "\n") if crlf else text
        out = _checked(parse_program(source, filename), source)
        return out.replace("\n", "\r\n") if crlf else out
    blocks = delegation_blocks(text, section)
    if not blocks:
        raise ProseSyntaxError.at(Span.point(filename, 1, 1), missing_program(section))
    lines = text.split("\n")
    replacements: list[tuple[int, int, list[str]]] = []
    for block in blocks:
        if not block.closed:
            message = f"the ```prose block opened at {block.fence_line}:1 is not closed"
            raise ProseSyntaxError.at(Span.point(filename, block.fence_line, 1), message, text)
        fence = lines[block.fence_line - 1]
        indent = fence[: len(fence) - len(fence.lstrip(" \t"))]
        eol = "\r" if fence.endswith("\r") else ""  # CRLF files stay CRLF
        source = block.source.replace("\r\n", "\n")
        body = _checked(parse_program(source, filename, block.line_offset), source)
        rows = [(indent + row if row else row) + eol for row in body.split("\n")[:-1]]
        replacements.append((block.line_offset, block.end_line - 1, rows))
    for start, stop, rows in reversed(replacements):  # back to front: line numbers stay valid
        lines[start:stop] = rows
    return "\n".join(lines)


def _checked(program: n.Program, original: str) -> str:
    """Format, refusing any result that would lose a comment or change the program."""
    from prose.syntax import parse_program

    if "#" in original:
        # The parser can drop every comment of a program whose last statement is
        # an `if` or a `choice` (/work/ref/parser-bugs.md #1). With a statement
        # after it they are all found: then refuse rather than delete them.
        try:
            found = parse_program(original + "\ncontinue\n", program.span.file).comments
        except ProseSyntaxError:
            found = program.comments
        if len(found) > len(program.comments):
            raise FormatError(
                f"{program.span.file}: the parser lost comments of this program, "
                "so it is not formatted (a parser bug)"
            )
    out = format_program(program)
    if out == original:
        return out
    try:
        same = parse_program(out, program.span.file) == program
    except ProseSyntaxError:
        same = False
    if not same:
        raise FormatError(f"{program.span.file}: formatting would change the program (a bug)")
    return out


# --- one-line text ------------------------------------------------------------------


def _number(value: int | float | bool | None) -> str:
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{value} has no prose literal")
    text = repr(value)
    if "e" in text:  # no exponent in the grammar: write all the digits
        text = format(Decimal(text), "f")
    return text if "." in text else text + ".0"


def _string(parts: tuple[str | n.Interpolation, ...], triple: bool, braces_ok: bool = False) -> str:
    pieces: list[str] = []
    braces: list[int] = []  # indexes into `pieces` of literal `{`
    for part in parts:
        if isinstance(part, n.Interpolation):
            pieces.append("{" + ".".join(part.path) + "}")
            continue
        # Inside triple quotes, only a run of three quotes would end the string.
        for run in re.split(r'("{3,})', part) if triple else [part]:
            if triple and run.startswith('"""'):
                pieces.append('\\"' * len(run))
                continue
            for char in run:
                if char == "{":
                    braces.append(len(pieces))
                raw = triple and char in '\n"'
                pieces.append(char if raw else _ESCAPES.get(char, char))
    if braces and not braces_ok:
        body = "".join(pieces)
        offsets = [0]
        for piece in pieces:
            offsets.append(offsets[-1] + len(piece))
        for index in braces:
            if _INTERPOLATION.match(body, offsets[index]):
                pieces[index] = "\\{"
    quote = '"""' if triple else '"'
    return quote + "".join(pieces) + quote


def _text(text: str) -> str:
    """A `use` path, option label or key as a string literal.

    Only its text is kept, and `{a}` has the same text read either way, so
    braces are left as they are.
    """
    return _string((text,) if text else (), False, braces_ok=True)


def _key(key: str) -> str:
    return key if _NAME.match(key) else _text(key)


def _condition(condition: n.Condition) -> str:
    return condition.marker + condition.text + condition.marker


class _Forced(Exception):
    """A literal holds a comment, so it cannot go on one line."""


def _flat(expr: n.Expr, forced: set[int]) -> str:
    """`expr` on one line; raises _Forced when it holds a literal in `forced`."""
    if isinstance(expr, n.Literal):
        return _number(expr.value)
    if isinstance(expr, n.String):
        return _string(expr.parts, expr.triple)
    if isinstance(expr, n.Name):
        return expr.name
    if isinstance(expr, n.Member):
        return f"{_operand(expr.obj, _POSTFIX, forced)}.{expr.name}"
    if isinstance(expr, n.Index):
        return f"{_operand(expr.obj, _POSTFIX, forced)}[{_flat(expr.index, forced)}]"
    if isinstance(expr, n.Shuffle):
        return f"shuffle({_flat(expr.items, forced)})"
    if isinstance(expr, n.Array | n.Object) and id(expr) in forced:
        raise _Forced
    if isinstance(expr, n.Array):
        return "[" + ", ".join(_flat(item, forced) for item in expr.items) + "]"
    if isinstance(expr, n.Object):
        entries = [
            _key(e.key) if e.shorthand else f"{_key(e.key)}: {_flat(e.value, forced)}"
            for e in expr.entries
        ]
        return "{ " + ", ".join(entries) + " }" if entries else "{}"
    if isinstance(expr, n.Slice):
        start = "" if expr.start is None else _flat(expr.start, forced)
        stop = "" if expr.stop is None else _flat(expr.stop, forced)
        return f"{_operand(expr.obj, _POSTFIX, forced)}[{start}:{stop}]"
    if isinstance(expr, n.Builtin):
        args = [_flat(arg, forced) for arg in expr.args]
        args += [f"{prop.name}: {_flat(prop.value, forced)}" for prop in expr.keywords]
        return f"{expr.name}(" + ", ".join(args) + ")"
    if isinstance(expr, n.BinOp):  # left-associative: a right operand of the same level needs ()
        level = _precedence(expr)
        return (f"{_operand(expr.left, level, forced)} {expr.op} "
                f"{_operand(expr.right, level + 1, forced)}")
    if isinstance(expr, n.Compare):  # comparisons do not chain: operands at `+` level
        return (f"{_operand(expr.left, _SUM, forced)} {expr.op} "
                f"{_operand(expr.right, _SUM, forced)}")
    if isinstance(expr, n.IsTest):
        return f"{_operand(expr.operand, _SUM, forced)} is {expr.test}"
    if isinstance(expr, n.Not):
        return f"not {_operand(expr.operand, _NOT, forced)}"
    if isinstance(expr, n.BoolOp):  # `or` binds looser than `and`; same-operator nesting needs ()
        level = _precedence(expr)
        return f" {expr.op} ".join(_operand(op, level + 1, forced) for op in expr.operands)
    if isinstance(expr, n.Call) and not expr.properties:
        return f"call {_flat(expr.target, forced)}"
    if isinstance(expr, n.Session) and not expr.properties:
        return _session_head(expr)
    if isinstance(expr, n.Do) and expr.name is not None:
        return f"do {expr.name}(" + ", ".join(_flat(arg, forced) for arg in expr.args) + ")"
    raise _no_rule(expr)


_OR, _AND, _NOT, _COMPARE, _SUM, _TERM, _POSTFIX = range(1, 8)


def _precedence(expr: n.Expr) -> int:
    """How tightly an expression binds (Python's order); a literal or name binds tightest."""
    if isinstance(expr, n.BoolOp):
        return _OR if expr.op == "or" else _AND
    if isinstance(expr, n.Not):
        return _NOT
    if isinstance(expr, n.Compare | n.IsTest):
        return _COMPARE
    if isinstance(expr, n.BinOp):
        return _SUM if expr.op in "+-" else _TERM
    if isinstance(expr, n.Literal) and isinstance(expr.value, int | float) \
            and not isinstance(expr.value, bool) and expr.value < 0:
        return _TERM  # `-1` as an object: `(-1).x` is not `-(1.x)`
    return _POSTFIX


def _operator_pieces(expr: n.Expr) -> list[str | n.Expr]:
    """`_flat`'s layout of an operator, slice or built-in as text and operand pieces."""
    def wrapped(operand: n.Expr | None, level: int) -> list[str | n.Expr]:
        if operand is None:
            return []
        return ["(", operand, ")"] if _precedence(operand) < level else [operand]
    if isinstance(expr, n.BinOp):
        level = _precedence(expr)
        return [*wrapped(expr.left, level), f" {expr.op} ", *wrapped(expr.right, level + 1)]
    if isinstance(expr, n.Compare):
        return [*wrapped(expr.left, _SUM), f" {expr.op} ", *wrapped(expr.right, _SUM)]
    if isinstance(expr, n.IsTest):
        return [*wrapped(expr.operand, _SUM), f" is {expr.test}"]
    if isinstance(expr, n.Not):
        return ["not ", *wrapped(expr.operand, _NOT)]
    if isinstance(expr, n.BoolOp):
        out: list[str | n.Expr] = []
        for index, operand in enumerate(expr.operands):
            out += ([f" {expr.op} "] if index else []) + wrapped(operand, _precedence(expr) + 1)
        return out
    if isinstance(expr, n.Slice):
        return [*wrapped(expr.obj, _POSTFIX), "[", *wrapped(expr.start, 0), ":",
                *wrapped(expr.stop, 0), "]"]
    if isinstance(expr, n.Builtin):
        parts: list[str | n.Expr] = [f"{expr.name}("]
        for index, arg in enumerate(expr.args):
            parts += ([", "] if index else []) + [arg]
        for index, prop in enumerate(expr.keywords):
            parts += ([", "] if index or expr.args else []) + [f"{prop.name}: ", prop.value]
        return [*parts, ")"]
    raise _no_rule(expr)


def _operand(expr: n.Expr, level: int, forced: set[int]) -> str:
    """`expr` as an operand that must bind at least as tightly as `level`."""
    text = _flat(expr, forced)
    return f"({text})" if _precedence(expr) < level else text


def _literals(program: n.Program) -> list[n.Array | n.Object]:
    """Every array and object literal in the program (iteratively: blocks nest deep)."""
    found: list[n.Array | n.Object] = []
    stack: list[n.Node] = list(program.body)
    while stack:
        node = stack.pop()
        if isinstance(node, n.Condition | n.String | n.Name):
            continue  # conditions are kept as written; strings and names hold no literal
        if isinstance(node, n.Array | n.Object):
            found.append(node)
        stack.extend(children(node))
    return found


# --- layout -------------------------------------------------------------------------


@dataclass
class _Line:
    indent: int
    text: str
    tag: int = 0  # the source line this output line starts at (0: unknown)
    level: int | None = None  # source column of its statement (None: inside a literal)
    kind: str = INNER
    opener: bool = False  # a block or property list follows
    end: int = 0  # a one-line statement's or property's last source line
    comments: list[str] = field(default_factory=list)


class _Formatter:
    """Lays out statements as `_Line`s (iteratively), then adds comments and blank lines."""

    def __init__(self, program: n.Program) -> None:
        self.program = program
        self.out: list[_Line] = []
        self.first_line = program.span.line  # file line of the source's first line (0: none)
        self.source = program.source.split("\n")
        self.forced: set[int] = set()  # ids of literals that hold a comment
        self.inside: dict[int, list[n.Comment]] = {}  # literal id -> the comments it holds
        self.loose: list[n.Comment] = []  # comments outside every literal
        literals = _literals(program) if program.comments else []
        for comment in program.comments:
            at = (comment.line, comment.column)
            holders = [lit for lit in literals if lit.span.line and _within(lit.span, at)]
            if not holders:
                self.loose.append(comment)
                continue
            innermost = max(holders, key=lambda lit: (lit.line, lit.column))
            self.inside.setdefault(id(innermost), []).append(comment)
            self.forced.update(id(lit) for lit in holders)

    def run(self) -> str:
        stack: list[Task] = [("body", self.program.body, 0)]
        while stack:
            kind, item, indent = stack.pop()
            if kind == "body":
                assert isinstance(item, tuple)
                stack.extend(("stmt", stmt, indent) for stmt in reversed(item))
            elif isinstance(item, _Line):
                self.out.append(item)
            else:
                stack.extend(reversed(self._statement(item, indent)))  # type: ignore[arg-type]
        self._place_comments()
        return self._render()

    def _statement(self, stmt: n.Stmt, indent: int) -> list[Task]:
        """Lay out `stmt`'s first line(s); return what follows it (clauses, bodies)."""
        deeper = indent + INDENT

        def head(pieces: list[Piece], body: tuple[n.Stmt, ...]) -> list[Task]:
            self._compose(indent, pieces, stmt.span)[-1].opener = True
            return [("body", body, deeper)] if body else []

        def clause(text: str, line: int, body: tuple[n.Stmt, ...]) -> list[Task]:
            header = _Line(indent, text, line, stmt.column, CLAUSE, opener=True)
            return [("line", header, 0), ("body", body, deeper)]

        if isinstance(stmt, n.Let):
            target = ("const " if stmt.const else "let ") + (
                "{ " + ", ".join(stmt.names) + " }" if stmt.destructure else stmt.names[0]
            )
            return self._value(indent, [target + " = "], stmt.value, stmt.span)
        if isinstance(stmt, n.Assign):
            return self._value(indent, [stmt.target, " = "], stmt.value, stmt.span)
        if isinstance(stmt, n.Return) and stmt.value is not None:
            return self._value(indent, ["return "], stmt.value, stmt.span)
        if isinstance(stmt, n.ExprStmt):
            return self._value(indent, [], stmt.expr, stmt.span)
        if isinstance(stmt, n.LoopNode):
            return self._value(indent, [], stmt, stmt.span)
        if isinstance(stmt, n.Parallel):
            return head(["parallel", *self._modifiers(stmt.modifiers), ":"], stmt.branches)
        if isinstance(stmt, n.If):
            first = stmt.branches[0]
            tasks = head([f"if {_condition(first.condition)}:"], first.body)
            for branch in stmt.branches[1:]:
                tasks += clause(f"elif {_condition(branch.condition)}:", branch.line, branch.body)
            if stmt.orelse is not None:
                line = self._find("else", stmt.branches[-1].body, stmt.orelse)
                tasks += clause("else:", line, stmt.orelse)
            return tasks
        if isinstance(stmt, n.Try):
            tasks = head(["try:"], stmt.body)
            if stmt.handler is not None:
                name = f" as {stmt.catch_var}" if stmt.catch_var else ""
                line = self._find("catch", stmt.body, stmt.handler)
                tasks += clause(f"catch{name}:", line, stmt.handler)
            if stmt.final is not None:
                line = self._find("finally", stmt.handler or stmt.body, stmt.final)
                tasks += clause("finally:", line, stmt.final)
            return tasks
        if isinstance(stmt, n.Choice):
            tasks = head([f"choice {_condition(stmt.criteria)}:"], ())
            for option in stmt.options:
                text = f"option {_text(option.label)}:"
                header = _Line(deeper, text, option.line, option.column, STMT, opener=True)
                tasks += [("line", header, 0), ("body", option.body, deeper + INDENT)]
            return tasks
        if isinstance(stmt, n.Orphan):
            condition = f" {_condition(stmt.condition)}" if stmt.condition else ""
            if stmt.keyword == "catch":  # the AST keeps no `as err` here: take it from the source
                match = _CATCH_AS.match(self._source_line(stmt.line) or "")
                condition = f" as {match.group(1)}" if match else ""
            return head([f"{stmt.keyword}{condition}:"], stmt.body)
        if isinstance(stmt, n.BlockDef):
            return head([f"block {stmt.name}({', '.join(stmt.params)}):"], stmt.body)
        if isinstance(stmt, n.Do) and stmt.name is None:
            return head(["do:"], stmt.body)
        if isinstance(stmt, n.AgentDef):
            head([f"agent {stmt.name}:"], ())
            self._properties(indent + INDENT, stmt.properties)
            if stmt.shape:
                line = self._find("shape", stmt.properties, stmt.shape)
                self.out.append(_Line(deeper, "shape:", line, 0, PROP, opener=True))
                self._properties(deeper + INDENT, stmt.shape)
            return []
        self._compose(indent, _simple(stmt), stmt.span, end=stmt.end_line)
        return []

    def _value(self, indent: int, prefix: list[Piece], value: n.Expr, span: Span) -> list[Task]:
        """A statement ending in `value`: a call and its properties, a loop, an expression."""
        if isinstance(value, n.Call):
            pieces = [*prefix, "call ", value.target]
            lines = self._compose(indent, pieces, span, end=value.target.end_line)
            lines[-1].opener = bool(value.properties)
            for prop in value.properties:
                pieces = [f"{prop.name}: ", prop.value]
                self._compose(indent + INDENT, pieces, prop.span, PROP, prop.end_line)
            return []
        if isinstance(value, n.Session):
            lines = self._compose(indent, [*prefix, _session_head(value)], span,
                                  end=value.head.end_line)
            lines[-1].opener = bool(value.properties)
            self._properties(indent + INDENT, value.properties)
            return []
        if isinstance(value, n.LoopNode):
            self._compose(indent, [*prefix, *self._loop_head(value)], span)[-1].opener = True
            return [("body", value.body, indent + INDENT)]
        if isinstance(value, n.Do) and value.name is None:
            self._compose(indent, [*prefix, "do:"], span)[-1].opener = True
            return [("body", value.body, indent + INDENT)]
        if isinstance(value, n.Pipeline):
            return self._pipeline(indent, prefix, value, span)
        self._compose(indent, [*prefix, value], span, end=span.end_line)
        return []

    def _properties(self, indent: int, properties: tuple[n.Property, ...]) -> None:
        for prop in properties:
            self._compose(indent, [f"{prop.name}: ", prop.value], prop.span, PROP, prop.end_line)

    def _pipeline(self, indent: int, prefix: list[Piece], pipeline: n.Pipeline,
                  span: Span) -> list[Task]:
        """`source` on the statement's line, then each stage on a line of its own one level
        deeper (`| map:`) and its body two levels deeper still."""
        self._compose(indent, [*prefix, pipeline.source], span, end=pipeline.source.end_line)
        tasks: list[Task] = []
        for stage in pipeline.stages:
            op = f"reduce({', '.join(stage.params)})" if stage.op == "reduce" else stage.op
            line = _Line(indent + INDENT, f"| {op}:", stage.line, stage.column, CLAUSE, opener=True)
            tasks += [("line", line, 0), ("body", stage.body, indent + 3 * INDENT)]
        return tasks

    def _loop_head(self, loop: n.LoopNode) -> list[Piece]:
        pieces: list[Piece] = ["parallel "] if not isinstance(loop, n.Loop) and loop.parallel else []
        if isinstance(loop, n.Loop):
            pieces.append("loop")
            if loop.kind is not None and loop.condition is not None:
                pieces.append(f" {loop.kind} {_condition(loop.condition)}")
            if loop.max is not None:
                pieces += [" (max: ", loop.max, ")"]
        elif isinstance(loop, n.Repeat):
            pieces += ["repeat ", loop.count]
        else:
            index = f", {loop.index_var}" if loop.index_var is not None else ""
            pieces += [f"{'loop for each' if loop.each else 'for'} {loop.var}{index} in ",
                       loop.iterable]
            if loop.max is not None and loop.each:
                pieces += [" (max: ", loop.max, ")"]
        if not isinstance(loop, n.For) and loop.var is not None:
            pieces.append(f" as {loop.var}")
        modifiers = () if isinstance(loop, n.Loop) else loop.modifiers
        if isinstance(loop, n.For) and loop.max is not None and not loop.each:
            # `for`'s ceiling is written with its modifiers, in one group, last
            modifiers = (*modifiers, n.Modifier("max", loop.max))
        return [*pieces, *self._modifiers(modifiers), ":"]

    @staticmethod
    def _modifiers(modifiers: tuple[n.Modifier, ...]) -> list[Piece]:
        items: list[list[Piece]] = [
            [m.value] if m.key is None else [f"{m.key}: ", m.value] for m in modifiers
        ]
        return [" (", *_joined(items), ")"] if items else []

    def _find(self, keyword: str, before: tuple[n.Node, ...], after: tuple[n.Node, ...]) -> int:
        """The source line of the `else`/`catch`/`finally` between two bodies (0: unknown)."""
        pattern = re.compile(rf"[ \t]*{keyword}\b")
        if self.first_line and before and after:
            for line in range(before[-1].end_line + 1, after[0].line):
                if pattern.match(self._source_line(line) or ""):
                    return line
        return 0

    def _source_line(self, line: int) -> str | None:
        index = line - self.first_line
        return self.source[index] if self.first_line and 0 <= index < len(self.source) else None

    # --- expressions over lines --------------------------------------------------------

    def _compose(
        self, indent: int, pieces: list[Piece], span: Span, kind: str = STMT, end: int = 0
    ) -> list[_Line]:
        """Append the line(s) made of `pieces` to the output and return them."""
        lines = [_Line(indent, "", span.line, span.column, kind, end=end)]
        for index, piece in enumerate(pieces):
            if isinstance(piece, str):
                lines[-1].text += piece
                continue
            try:
                rest = [p if isinstance(p, str) else _flat(p, self.forced) for p in pieces[index + 1 :]]
            except _Forced:
                rest = []
            last = lines[-1]
            sub = self._expr(piece, last.indent, last.indent + len(last.text), len("".join(rest)))
            _join(lines, sub)
        self.out.extend(lines)
        return lines

    def _expr(self, expr: n.Expr, indent: int, column: int, suffix: int) -> list[_Line]:
        """`expr` as lines; the first continues the current line. Literals break if too long."""
        try:
            flat: str | None = _flat(expr, self.forced)
        except _Forced:
            flat = None
        if flat is not None and (
            not isinstance(expr, n.Array | n.Object | n.Member | n.Index)
            or ("\n" not in flat and column + len(flat) + suffix <= WIDTH)
            or (isinstance(expr, n.Member | n.Index) and _precedence(expr.obj) < _POSTFIX)
        ):
            return [_Line(indent, flat)]
        if isinstance(expr, n.Member):
            lines = self._expr(expr.obj, indent, column, suffix + 1 + len(expr.name))
            lines[-1].text += "." + expr.name
            return lines
        if isinstance(expr, n.Index):
            lines = self._expr(expr.obj, indent, column, 1)
            lines[-1].text += "["
            last = lines[-1]
            _join(lines, self._expr(expr.index, last.indent, column + len(last.text), suffix + 1))
            lines[-1].text += "]"
            return lines
        if not isinstance(expr, n.Array | n.Object):
            # An operator, slice or built-in holding a literal that must break (it holds a
            # comment): its pieces one after the other, the literal on its own lines.
            lines = [_Line(indent, "")]
            for piece in _operator_pieces(expr):
                if isinstance(piece, str):
                    lines[-1].text += piece
                else:
                    last = lines[-1]
                    _join(lines, self._expr(piece, last.indent, column + len(last.text), 0))
            return lines
        return self._literal(expr, indent)

    def _literal(self, expr: n.Array | n.Object, indent: int) -> list[_Line]:
        """A literal with one entry per line, and the comments inside it."""
        deeper = indent + INDENT
        brackets = "[]" if isinstance(expr, n.Array) else "{}"
        lines = [_Line(indent, brackets[0], expr.line)]
        starts: list[int] = []
        for item in expr.items if isinstance(expr, n.Array) else expr.entries:
            starts.append(len(lines))
            lines.append(_Line(deeper, "", item.line))
            if isinstance(item, n.Entry):
                lines[-1].text = _key(item.key) + ("" if item.shorthand else ": ")
                if not item.shorthand:
                    _join(lines, self._expr(item.value, deeper, deeper + len(lines[-1].text), 1))
            else:
                _join(lines, self._expr(item, deeper, deeper, 1))
            lines[-1].text += ","
        lines.append(_Line(indent, brackets[1], expr.end_line))
        tags = [line.tag for line in lines]
        inserts: list[tuple[int, _Line]] = []
        for comment in self.inside.get(id(expr), ()):
            if comment.own_line:  # before the next entry, else before the closing bracket
                at = next((i for i in starts if lines[i].tag > comment.line), len(lines) - 1)
                inserts.append((at, _Line(deeper, comment.text.rstrip(), comment.line)))
            else:
                lines[max(bisect_right(tags, comment.line) - 1, 0)].comments.append(comment.text.rstrip())
        for at, line in reversed(inserts):
            lines.insert(at, line)
        return lines

    # --- comments and blank lines -----------------------------------------------------------

    def _place_comments(self) -> None:
        tags: list[int] = []
        for line in self.out:  # lines of unknown origin take the previous line's tag
            tags.append(max(line.tag, tags[-1] if tags else 0))
        inserts: list[tuple[int, _Line]] = []
        for comment in self.loose:
            text = comment.text.rstrip()
            at = bisect_right(tags, comment.line)
            if not comment.own_line and at > 0:
                self.out[at - 1].comments.append(text)  # several: joined, still on that line
                continue
            start = at - 1
            while start >= 0 and self.out[start].kind == INNER:
                start -= 1
            if start >= 0 and self.out[start].tag < comment.line <= self.out[start].end:
                at, indent = start, self.out[start].indent  # in its brackets: before it
            else:
                indent = self._comment_indent(at, comment.column)
            inserts.append((at, _Line(indent, text, comment.line, kind=COMMENT)))
        inserts.sort(key=lambda insert: insert[0])  # stable: source order within a gap
        for at, line in reversed(inserts):
            self.out.insert(at, line)

    def _comment_indent(self, at: int, column: int) -> int:
        """The indentation of an own-line comment put before `self.out[at]`.

        That line's, unless the comment is indented at least as deep as a block
        that ends just before it: then the deepest such block's.
        """
        target = self.out[at].indent if at < len(self.out) else 0
        deepest: int | None = None
        for line in reversed(self.out[:at]):
            if line.level is None:
                continue
            if line.indent <= target:
                break
            if deepest is None or line.indent < deepest:
                deepest = line.indent
                if column >= line.level:
                    return line.indent
        return target

    def _render(self) -> str:
        anchors: list[str] = []  # for each line, the kind of the first non-comment line from it
        for line in reversed(self.out):
            anchors.append(anchors[-1] if line.kind == COMMENT and anchors else line.kind)
        anchors.reverse()
        rows: list[str] = []
        for index, line in enumerate(self.out):
            above = self._source_line(line.tag - 1)
            after_opener = index == 0 or self.out[index - 1].opener
            if above is not None and not above.strip() and not after_opener:
                if anchors[index] in (STMT, PROP, COMMENT):  # not before a clause
                    rows.append("")
            text = line.text + "".join("  " + comment for comment in line.comments)
            rows.append(" " * line.indent + (text if line.text else text.lstrip()))
        return "".join(row + "\n" for row in rows)


def _simple(stmt: n.Stmt) -> list[Piece]:
    """The pieces of a statement that has no block."""
    if isinstance(stmt, n.Return | n.Throw):
        word = type(stmt).__name__.lower()
        return [word] if stmt.value is None else [word + " ", stmt.value]
    if isinstance(stmt, n.Continue | n.Break):
        return [type(stmt).__name__.lower()]
    if isinstance(stmt, n.Append):
        joint = " in " if stmt.keyword == "record" else " to "
        if stmt.keyword == "record" and _precedence(stmt.value) < _SUM:  # `in` would end it
            return ["record (", stmt.value, ")", joint, stmt.target]
        return [f"{stmt.keyword} ", stmt.value, joint, stmt.target]
    if isinstance(stmt, n.Do):
        return [f"do {stmt.name}(", *_joined([[arg] for arg in stmt.args]), ")"]
    if isinstance(stmt, n.Session):
        return [_session_head(stmt)]
    if isinstance(stmt, n.Use):
        return [f"use {_text(stmt.path)} as {stmt.alias}"]
    raise _no_rule(stmt)


def _no_rule(node: n.Node) -> UnknownNode:
    """The one refusal of a node the formatter cannot write, statement or expression."""
    return UnknownNode(node, f"the formatter has no rule for a `{type(node).__name__}` node")


def _session_head(session: n.Session) -> str:
    """`session "prompt"`, `session: agent`, `session label: agent` or `resume: agent`."""
    if session.resume:
        return f"resume: {session.agent}"
    if session.prompt is not None:
        return "session " + _string(session.prompt.parts, session.prompt.triple)
    label = f" {session.label}" if session.label else ""
    return f"session{label}: {session.agent}"


def _joined(items: Sequence[Sequence[Piece]]) -> list[Piece]:
    out: list[Piece] = []
    for index, item in enumerate(items):
        out += [", ", *item] if index else list(item)
    return out


def _join(lines: list[_Line], sub: list[_Line]) -> None:
    """Continue the last of `lines` with the first of `sub`, then add the rest."""
    lines[-1].text += sub[0].text
    lines[-1].comments += sub[0].comments
    lines.extend(sub[1:])


def _within(span: Span, at: tuple[int, int]) -> bool:
    return (span.line, span.column) < at < (span.end_line, span.end_column)
