r"""The canonical formatter: a parsed program (with its comments) back to source.

Layout:

- Two spaces per indentation level. Call properties go one per line, two
  spaces deeper than the line holding the `call`; `option` blocks two spaces
  deeper than their `choice`.
- Blank lines: a run of blank lines in the source becomes one blank line. It
  is kept only before a statement, an `option`, a call property or an own-line
  comment, and never at the start of a block or property list, before
  `elif`/`else`/`catch`/`finally`, inside a literal, or at the start or end of
  the program. A program built in code (no source) gets none.
- Array and object literals go on one line (`[a, b]`, `{ a: 1, b }`) when they
  hold no comment and the whole line fits in 88 columns; otherwise one entry
  per line with a trailing comma, the closing bracket back at the opening line's
  indentation.
- Strings keep their quotes (plain or triple) and are re-escaped: backslash,
  quote, tab and newline (a raw newline inside triple quotes; in them only a
  run of three or more quotes is escaped), and a `{` only where it would
  otherwise read as an interpolation.
- Conditions are written back as their text between their original marker
  (`**`/`***`); a `***` condition that spanned lines is joined on one line.
- Comments stay with their statement: an own-line comment stays before the
  statement (or property, option, clause) that follows it, at that line's
  indentation, or at the end of the block it closes when it is indented like
  that block; a trailing comment stays at the end of the output line holding
  the source line it ended (so `# prose: ignore[...]` stays on its statement's
  line); comments inside a literal stay inside it and force it onto several
  lines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from decimal import Decimal

from prose.errors import ProseError, ProseSyntaxError
from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.markdown import delegation_blocks, is_markdown

WIDTH = 88
INDENT = 2
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*\Z")
_INTERPOLATION = re.compile(r"\{[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*\}")
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", '"': '\\"'}

Piece = str | n.Expr
STMT, PROP, CLAUSE, COMMENT, INNER = "stmt", "prop", "clause", "comment", "inner"


class FormatError(ProseError):
    """The formatter would have changed the program's meaning (a formatter bug)."""


@dataclass
class _Line:
    indent: int
    text: str
    tag: int = 0  # the source line this output line starts at (0: unknown)
    level: int | None = None  # source column of this line's indentation level
    kind: str = INNER
    opener: bool = False  # a block or property list follows
    end: int = 0  # for a one-line statement or property: its last source line
    comments: list[str] = field(default_factory=list)


def format_program(program: n.Program) -> str:
    """The canonical source of `program`, comments included ("" for no statements)."""
    return _Formatter(program).run()


def format_expr(expr: n.Expr) -> str:
    """One expression on one line; also renders predicates (`a == b and not c`)."""
    return _flat(expr, frozenset())


def format_file(text: str, filename: str) -> str:
    """`text` with its program in canonical form.

    A markdown file (`*.prose.md`) has only its ```prose block(s) under
    `### Delegation` rewritten, every other byte unchanged; any other file is
    prose source as a whole. Raises ProseSyntaxError for invalid input.
    """
    from prose.syntax import parse_program

    if not text.strip():
        raise ProseSyntaxError.at(Span.point(filename, 1, 1), "the file is empty")
    if not is_markdown(filename):
        return _format_checked(parse_program(text, filename), text)
    blocks = delegation_blocks(text)
    if not blocks:
        raise ProseSyntaxError.at(
            Span.point(filename, 1, 1),
            "no `### Delegation` section with a ```prose block in this file",
        )
    lines = text.split("\n")
    for block in reversed(blocks):  # back to front, so earlier line numbers stay valid
        if not block.closed:
            raise ProseSyntaxError.at(
                Span.point(filename, block.fence_line, 1),
                f"the ```prose block opened at {block.fence_line}:1 is not closed",
                text,
            )
        fence = lines[block.fence_line - 1]
        indent = fence[: len(fence) - len(fence.lstrip(" \t"))]
        eol = "\r" if fence.endswith("\r") else ""
        program = parse_program(block.source, filename, block.line_offset)
        body = _format_checked(program, block.source)
        new = [(indent + row if row else row) + eol for row in body.split("\n")[:-1]]
        lines[block.line_offset : block.end_line - 1] = new
    return "\n".join(lines)


def _format_checked(program: n.Program, original: str) -> str:
    from prose.syntax import parse_program

    out = format_program(program)
    if out != original and parse_program(out, program.span.file) != program:
        raise FormatError(f"{program.span.file}: formatting would change the program (a bug)")
    return out


# --- expressions -----------------------------------------------------------------


def _number(value: int | float | bool | None) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{value} has no prose literal")
    text = repr(value)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    return text if "." in text else text + ".0"


def _string(parts: tuple[str | n.Interpolation, ...], triple: bool) -> str:
    pieces: list[str] = []
    braces: list[int] = []  # indexes into `pieces` of literal `{`
    for part in parts:
        if isinstance(part, n.Interpolation):
            pieces.append("{" + ".".join(part.path) + "}")
            continue
        if triple:
            # Three quotes in a row would close the string: escape such runs whole.
            for run in re.split(r'("{3,})', part):
                if run.startswith('"""'):
                    pieces.append('\\"' * len(run))
                    continue
                for char in run:
                    if char == "{":
                        braces.append(len(pieces))
                    pieces.append(char if char in '\n"' else _ESCAPES.get(char, char))
            continue
        for char in part:
            if char == "{":
                braces.append(len(pieces))
            pieces.append(_ESCAPES.get(char, char))
    if braces:
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
    """A plain text (a `use` path, an option label, a key) as a string literal."""
    return _string((text,) if text else (), False)


def _key(key: str) -> str:
    return key if _NAME.match(key) else _text(key)


def _flat(expr: n.Expr, forced: frozenset[int] | set[int]) -> str:
    """`expr` on one line. Raises _Forced when it holds a literal that must break."""
    if isinstance(expr, n.Literal):
        return _number(expr.value)
    if isinstance(expr, n.String):
        return _string(expr.parts, expr.triple)
    if isinstance(expr, n.Name):
        return expr.name
    if isinstance(expr, n.Member):
        return f"{_flat(expr.obj, forced)}.{expr.name}"
    if isinstance(expr, n.Index):
        return f"{_flat(expr.obj, forced)}[{_flat(expr.index, forced)}]"
    if isinstance(expr, n.Array | n.Object) and id(expr) in forced:
        raise _Forced
    if isinstance(expr, n.Array):
        return "[" + ", ".join(_flat(item, forced) for item in expr.items) + "]"
    if isinstance(expr, n.Object):
        if not expr.entries:
            return "{}"
        return "{ " + ", ".join(_entry(entry, forced) for entry in expr.entries) + " }"
    if isinstance(expr, n.Compare):
        return f"{_flat(expr.left, forced)} {expr.op} {_flat(expr.right, forced)}"
    if isinstance(expr, n.IsTest):
        return f"{_flat(expr.operand, forced)} is {expr.test}"
    if isinstance(expr, n.Not):
        inner = _flat(expr.operand, forced)
        return f"not ({inner})" if isinstance(expr.operand, n.BoolOp) else f"not {inner}"
    if isinstance(expr, n.BoolOp):
        texts = [
            f"({_flat(op, forced)})"
            if isinstance(op, n.BoolOp) and (op.op == expr.op or expr.op == "and")
            else _flat(op, forced)
            for op in expr.operands
        ]
        return f" {expr.op} ".join(texts)
    if isinstance(expr, n.Call) and not expr.properties:
        return f"call {_flat(expr.target, forced)}"
    raise ValueError(f"{type(expr).__name__} cannot be written on one line")


def _entry(entry: n.Entry, forced: frozenset[int] | set[int]) -> str:
    if entry.shorthand:
        return _key(entry.key)
    return f"{_key(entry.key)}: {_flat(entry.value, forced)}"


class _Forced(Exception):
    """A literal holds a comment, so it cannot go on one line."""


def _after(span: Span, line: int, column: int) -> bool:
    return (span.line, span.column) < (line, column) < (span.end_line, span.end_column)


def _literals(program: n.Program) -> list[n.Array | n.Object]:
    """Every array and object literal in the program (iteratively: blocks nest deep)."""
    found: list[n.Array | n.Object] = []
    stack: list[object] = list(program.body)
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif isinstance(item, n.Node) and not isinstance(item, n.Condition | n.String | n.Name):
            if isinstance(item, n.Array | n.Object):
                found.append(item)
            stack.extend(getattr(item, name) for name in item.__dataclass_fields__)
    return found


Task = tuple[str, object, int]


class _Formatter:
    """Lays out statements as `_Line`s (iteratively), then places comments and blank lines."""

    def __init__(self, program: n.Program) -> None:
        self.program = program
        self.out: list[_Line] = []
        self.first_line = program.span.line  # file line of the source's line 1 (0: no source)
        self.source = program.source.split("\n")
        self.forced: set[int] = set()
        self.inside: dict[int, list[n.Comment]] = {}
        self.loose: list[n.Comment] = []
        literals = _literals(program) if program.comments else []
        for comment in program.comments:
            at = (comment.span.line, comment.span.column)
            holders = [lit for lit in literals if _after(lit.span, *at)]
            if not holders:
                self.loose.append(comment)
                continue
            innermost = max(holders, key=lambda lit: (lit.span.line, lit.span.column))
            self.inside.setdefault(id(innermost), []).append(comment)
            self.forced.update(id(lit) for lit in holders)

    def run(self) -> str:
        stack: list[Task] = [("body", self.program.body, 0)]
        while stack:
            kind, item, indent = stack.pop()
            if kind == "body":
                assert isinstance(item, tuple)
                stack.extend(("stmt", stmt, indent) for stmt in reversed(item))
            elif kind == "line":
                assert isinstance(item, _Line)
                self.out.append(item)
            else:
                stack.extend(reversed(self._statement(item, indent)))  # type: ignore[arg-type]
        self._place_comments()
        return self._render()

    # --- statements --------------------------------------------------------------

    def _statement(self, stmt: n.Stmt, indent: int) -> list[Task]:
        tag, level = stmt.span.line, stmt.span.column
        deeper = indent + INDENT

        def head(pieces: list[Piece], body: tuple[n.Stmt, ...]) -> list[Task]:
            self._compose(indent, pieces, tag, level, STMT)[-1].opener = True
            return [("body", body, deeper)]

        def clause(text: str, line: int, body: tuple[n.Stmt, ...]) -> list[Task]:
            header = _Line(indent, text, line, level, CLAUSE, opener=True)
            return [("line", header, indent), ("body", body, deeper)]

        if isinstance(stmt, n.Let):
            if stmt.destructure:
                target = "let { " + ", ".join(stmt.names) + " } = "
            else:
                target = ("const " if stmt.const else "let ") + stmt.names[0] + " = "
            return self._value(indent, [target], stmt.value, stmt.span)
        if isinstance(stmt, n.Assign):
            return self._value(indent, [stmt.target, " = "], stmt.value, stmt.span)
        if isinstance(stmt, n.Return) and stmt.value is not None:
            return self._value(indent, ["return "], stmt.value, stmt.span)
        if isinstance(stmt, n.ExprStmt):
            return self._value(indent, [], stmt.expr, stmt.span)
        if isinstance(stmt, n.Repeat | n.For | n.Loop):
            return self._value(indent, [], stmt, stmt.span)
        if isinstance(stmt, n.Parallel):
            return head(["parallel", *self._modifiers(stmt.modifiers), ":"], stmt.branches)
        if isinstance(stmt, n.If):
            tasks = head(["if " + _condition(stmt.branches[0].condition) + ":"], stmt.branches[0].body)
            for branch in stmt.branches[1:]:
                tasks += clause(f"elif {_condition(branch.condition)}:", branch.line, branch.body)
            if stmt.orelse is not None:
                line = self._find("else", stmt.branches[-1].body, stmt.orelse)
                tasks += clause("else:", line, stmt.orelse)
            return tasks
        if isinstance(stmt, n.Try):
            tasks = head(["try:"], stmt.body)
            if stmt.handler is not None:
                line = self._find("catch", stmt.body, stmt.handler)
                name = f" as {stmt.catch_var}" if stmt.catch_var else ""
                tasks += clause(f"catch{name}:", line, stmt.handler)
            if stmt.final is not None:
                line = self._find("finally", stmt.handler or stmt.body, stmt.final)
                tasks += clause("finally:", line, stmt.final)
            return tasks
        if isinstance(stmt, n.Choice):
            self._compose(indent, [f"choice {_condition(stmt.criteria)}:"], tag, level, STMT)
            self.out[-1].opener = True
            tasks = []
            for option in stmt.options:
                header = _Line(deeper, f"option {_text(option.label)}:", option.line, option.column)
                header.kind, header.opener = STMT, True
                tasks += [("line", header, deeper), ("body", option.body, deeper + INDENT)]
            return tasks
        if isinstance(stmt, n.Orphan):
            condition = f" {_condition(stmt.condition)}" if stmt.condition else ""
            return head([f"{stmt.keyword}{condition}:"], stmt.body)
        if isinstance(stmt, n.BlockDef):
            return head([f"block {stmt.name}({', '.join(stmt.params)}):"], stmt.body)
        if isinstance(stmt, n.Do) and stmt.name is None:
            return head(["do:"], stmt.body)
        self._compose(indent, self._simple(stmt), tag, level, STMT)[0].end = stmt.end_line
        return []

    def _simple(self, stmt: n.Stmt) -> list[Piece]:
        if isinstance(stmt, n.Return):
            return ["return"]
        if isinstance(stmt, n.Throw):
            return ["throw"] if stmt.value is None else ["throw ", stmt.value]
        if isinstance(stmt, n.Continue | n.Break):
            return [type(stmt).__name__.lower()]
        if isinstance(stmt, n.Append):
            joint = " in " if stmt.keyword == "record" else " to "
            return [f"{stmt.keyword} ", stmt.value, joint, stmt.target]
        if isinstance(stmt, n.Do):
            return [f"do {stmt.name}(", *_joined([[arg] for arg in stmt.args]), ")"]
        if isinstance(stmt, n.Use):
            return [f"use {_text(stmt.path)} as {stmt.alias}"]
        raise ValueError(f"cannot format a {type(stmt).__name__} statement")

    def _value(self, indent: int, prefix: list[Piece], value: n.Expr, span: Span) -> list[Task]:
        """A statement ending in `value`: a call with its properties, a loop, or an expression."""
        if isinstance(value, n.Call):
            lines = self._compose(indent, [*prefix, "call ", value.target], span.line, span.column, STMT)
            lines[-1].opener = bool(value.properties)
            lines[0].end = value.target.end_line
            for prop in value.properties:
                pieces: list[Piece] = [f"{prop.name}: ", prop.value]
                self._compose(indent + INDENT, pieces, prop.line, prop.column, PROP)[0].end = prop.end_line
            return []
        if isinstance(value, n.Repeat | n.For | n.Loop):
            lines = self._compose(indent, [*prefix, *self._loop_head(value)], span.line, span.column, STMT)
            lines[-1].opener = True
            return [("body", value.body, indent + INDENT)]
        self._compose(indent, [*prefix, value], span.line, span.column, STMT)[0].end = span.end_line
        return []

    def _loop_head(self, loop: n.Repeat | n.For | n.Loop) -> list[Piece]:
        if isinstance(loop, n.Loop):
            pieces: list[Piece] = ["loop"]
            if loop.kind is not None and loop.condition is not None:
                pieces.append(f" {loop.kind} {_condition(loop.condition)}")
            if loop.max is not None:
                pieces += [" (max: ", loop.max, ")"]
            if loop.var is not None:
                pieces.append(f" as {loop.var}")
            return [*pieces, ":"]
        pieces = ["parallel "] if loop.parallel else []
        if isinstance(loop, n.Repeat):
            pieces += ["repeat ", loop.count]
            if loop.var is not None:
                pieces.append(f" as {loop.var}")
        else:
            index = f", {loop.index_var}" if loop.index_var is not None else ""
            pieces += [f"for {loop.var}{index} in ", loop.iterable]
        return [*pieces, *self._modifiers(loop.modifiers), ":"]

    @staticmethod
    def _modifiers(modifiers: tuple[n.Modifier, ...]) -> list[Piece]:
        if not modifiers:
            return []
        items = [[m.value] if m.key is None else [f"{m.key}: ", m.value] for m in modifiers]
        return [" (", *_joined(items), ")"]

    def _find(self, keyword: str, before: tuple[n.Stmt, ...], after: tuple[n.Stmt, ...]) -> int:
        """The source line of the `else`/`catch`/`finally` between two bodies (0: unknown)."""
        if not (self.first_line and before and after):
            return 0
        pattern = re.compile(rf"[ \t]*{keyword}\b")
        for line in range(before[-1].span.end_line + 1, after[0].line):
            text = self._source_line(line)
            if text is not None and pattern.match(text):
                return line
        return 0

    def _blank(self, line: int) -> bool:
        text = self._source_line(line)
        return text is not None and not text.strip()

    def _source_line(self, line: int) -> str | None:
        index = line - self.first_line
        return self.source[index] if self.first_line and 0 <= index < len(self.source) else None

    # --- expressions over lines ------------------------------------------------------

    def _compose(self, indent: int, pieces: list[Piece], tag: int, level: int, kind: str) -> list[_Line]:
        """Append the line(s) made of `pieces` to the output and return them."""
        lines = [_Line(indent, "", tag, level, kind)]
        for index, piece in enumerate(pieces):
            if isinstance(piece, str):
                lines[-1].text += piece
                continue
            last = lines[-1]
            suffix = self._width(pieces[index + 1 :])
            sub = self._expr(piece, last.indent, last.indent + len(last.text), suffix)
            last.text += sub[0].text
            last.comments += sub[0].comments
            lines.extend(sub[1:])
        self.out.extend(lines)
        return lines

    def _width(self, pieces: list[Piece]) -> int:
        try:
            return sum(len(p if isinstance(p, str) else _flat(p, self.forced)) for p in pieces)
        except _Forced:
            return 0

    def _expr(self, expr: n.Expr, indent: int, column: int, suffix: int) -> list[_Line]:
        """`expr` as lines; the first is a fragment continuing the current line."""
        try:
            flat: str | None = _flat(expr, self.forced)
        except _Forced:
            flat = None
        if flat is not None and (
            not isinstance(expr, n.Array | n.Object | n.Member | n.Index)
            or ("\n" not in flat and column + len(flat) + suffix <= WIDTH)
        ):
            return [_Line(indent, flat)]
        if isinstance(expr, n.Member):
            lines = self._expr(expr.obj, indent, column, suffix + 1 + len(expr.name))
            lines[-1].text += "." + expr.name
            return lines
        if isinstance(expr, n.Index):
            lines = self._expr(expr.obj, indent, column, 1)
            last = lines[-1]
            index = self._expr(expr.index, last.indent, column + len(last.text) + 1, suffix + 1)
            last.text += "[" + index[0].text
            last.comments += index[0].comments
            lines.extend(index[1:])
            lines[-1].text += "]"
            return lines
        assert isinstance(expr, n.Array | n.Object)
        return self._sequence(expr, indent)

    def _sequence(self, expr: n.Array | n.Object, indent: int) -> list[_Line]:
        """A literal with one entry per line, and the comments inside it."""
        deeper = indent + INDENT
        lines = [_Line(indent, "[" if isinstance(expr, n.Array) else "{", expr.line)]
        starts: list[int] = []
        entries: tuple[n.Expr | n.Entry, ...] = (
            expr.items if isinstance(expr, n.Array) else expr.entries
        )
        for entry in entries:
            prefix = ""
            value: n.Expr | None = entry if not isinstance(entry, n.Entry) else entry.value
            if isinstance(entry, n.Entry):
                prefix = _key(entry.key) + ("" if entry.shorthand else ": ")
                value = None if entry.shorthand else entry.value
            sub = [_Line(deeper, "")] if value is None else self._expr(value, deeper, deeper + len(prefix), 1)
            starts.append(len(lines))
            lines.append(_Line(deeper, prefix + sub[0].text, entry.line, comments=sub[0].comments))
            lines.extend(sub[1:])
            lines[-1].text += ","
        lines.append(_Line(indent, "]" if isinstance(expr, n.Array) else "}", expr.end_line))
        inserts: list[tuple[int, _Line]] = []
        tags = [line.tag for line in lines]
        for comment in self.inside.get(id(expr), ()):
            text = comment.text.rstrip()
            if comment.own_line:
                at = next((i for i in starts if lines[i].tag > comment.line), len(lines) - 1)
                inserts.append((at, _Line(deeper, text, comment.line)))
            else:
                lines[max(bisect_right(tags, comment.line) - 1, 0)].comments.append(text)
        for at, line in reversed(inserts):
            lines.insert(at, line)
        return lines

    # --- comments and blank lines -------------------------------------------------------

    def _place_comments(self) -> None:
        tags: list[int] = []
        for line in self.out:
            tags.append(max(line.tag, tags[-1] if tags else 0))
        inserts: list[tuple[int, _Line]] = []
        for comment in self.loose:
            text = comment.text.rstrip()
            at = bisect_right(tags, comment.line)
            if not comment.own_line and at > 0:
                self.out[at - 1].comments.append(text)
                continue
            indent = self._comment_indent(at, comment.column)
            start = at - 1
            while start >= 0 and self.out[start].kind == INNER:
                start -= 1
            if start >= 0 and self.out[start].tag < comment.line <= self.out[start].end:
                at = start  # inside a statement but outside its literals: before it
            inserts.append((at, _Line(indent, text, comment.line, None, COMMENT)))
        for at, line in reversed(inserts):
            self.out.insert(at, line)

    def _comment_indent(self, at: int, column: int) -> int:
        """Indentation for an own-line comment inserted before `self.out[at]`.

        That line's, unless the comment closes a deeper block it is indented
        like: then the deepest such block's.
        """
        target = self.out[at].indent if at < len(self.out) else 0
        deepest: int | None = None
        for index in range(at - 1, -1, -1):
            line = self.out[index]
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
        rows: list[str] = []
        previous: _Line | None = None
        anchor = ""  # the kind of the next line that is not a comment
        anchors = []
        for line in reversed(self.out):
            anchor = anchor if line.kind == COMMENT else line.kind
            anchors.append(anchor)
        for line, anchor in zip(self.out, reversed(anchors), strict=True):
            if (
                previous is not None
                and not previous.opener
                and anchor in (STMT, PROP, "")
                and self._blank(line.tag - 1)
            ):
                rows.append("")
            text = line.text + "".join("  " + comment for comment in line.comments)
            rows.append(" " * line.indent + text.lstrip(" ") if line.text else " " * line.indent + text.strip())
            previous = line
        return "".join(row + "\n" for row in rows)


def _joined(items: list[list[Piece]]) -> list[Piece]:
    out: list[Piece] = []
    for index, item in enumerate(items):
        if index:
            out.append(", ")
        out.extend(item)
    return out


def _condition(condition: n.Condition) -> str:
    return condition.marker + condition.text + condition.marker
