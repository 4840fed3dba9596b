"""Parses prose source into the AST, turning Lark's errors into ProseSyntaxError.

The parser is loaded once per process from the tables generated from the grammar
(`prose.syntax.generate_parser`, `prose.syntax.lark_api`) with the AST builder running
inline, so no parse tree is materialised.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from prose.errors import ProseSyntaxError, SyntaxProblem
from prose.source import Span, code_frame
from prose.syntax import nodes as n
from prose.syntax.build import Builder
from prose.syntax.lark_api import (
    Lark,
    Token,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    new_parser,
)
from prose.syntax.lexer import IndentationProblem, NestingTooDeep, ProseIndenter
from prose.syntax.nesting import first_too_deep, too_deep_message
from prose.syntax.typos import KeywordTypo, keyword_typo

MAX_REPORTED_ERRORS = 20

_TERMINAL_WORDS = {
    "NAME": "a name",
    "STRING": "a string",
    "LONG_STRING": "a string",
    "NUMBER": "a number",
    "COND": "a condition",
    "LOOP_COND": "a condition",
    "COMP_OP": "a comparison",
    "_NL": "end of line",
    "_INDENT": "an indented block",
    "_DEDENT": "end of the block",
    "$END": "end of input",
    "COLON": "`:`",
    "EQUAL": "`=`",
    "COMMA": "`,`",
    "DOT": "`.`",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "PIPE": "`|`",
    "FUNC": "a built-in",
    "PLUS": "`+`",
    "MINUS": "`-`",
    "STAR": "`*`",
    "SLASH": "`/`",
    "PERCENT": "`%`",
}


def build_lark(**options: object) -> Lark:
    """A parser built by Lark itself from the grammar file (no builder), e.g. to check the
    grammar with strict=True. Imports Lark: the command line parses with `new_parser`."""
    from lark import Lark as GrammarCompiler

    from prose.resources import grammar_file
    from prose.syntax.generate_parser import OPTIONS

    return GrammarCompiler(grammar_file().read_text(encoding="utf-8"),
                           postlex=ProseIndenter(), **OPTIONS, **options)


class _Parser:
    def __init__(self) -> None:
        self.builder = Builder()
        self.indenter = ProseIndenter()
        self.lark = new_parser(postlex=self.indenter, transformer=self.builder)
        self.lock = threading.RLock()
        self.builder.predicate_parser = self.predicate

    def predicate(self, text: str, line: int, column: int) -> n.Expr | None:
        """The deterministic predicate `text` denotes, or None for discretion text."""
        # The nested parse runs the indenter again; keep the outer parse's state
        # (its comments and open brackets).
        outer = self.indenter.state
        try:
            result: n.Expr = self.lark.parse(text, start="predicate_start")  # type: ignore[assignment]
        except NestingTooDeep:
            raise NestingTooDeep(line, column) from None  # at the condition, in the file
        except (UnexpectedInput, IndentationProblem):
            return None
        finally:
            self.indenter.state = outer
        return result


def parse_expression(text: str) -> n.Expr:
    """One expression of the language on its own (an invariant's `` the result satisfies
    `EXPR` ``). Raises ValueError saying where it stops parsing."""
    parser = _parser()
    with parser.lock:
        outer = parser.indenter.state
        try:
            result: n.Expr = parser.lark.parse(text, start="predicate_start")  # type: ignore[assignment]
        except NestingTooDeep:
            raise ValueError("the expression is nested too deeply") from None
        except UnexpectedEOF:
            raise ValueError("the expression ends too early") from None
        except UnexpectedInput as error:
            column = getattr(error, "column", 0) or 0
            near = text[max(column - 1, 0):][:12] if column else ""
            raise ValueError(f"it does not parse at column {column}"
                             + (f" (near `{near}`)" if near else "")) from None
        except IndentationProblem:
            raise ValueError("it does not parse (unbalanced brackets)") from None
        finally:
            parser.indenter.state = outer
    return result


@lru_cache(maxsize=1)
def _parser() -> _Parser:
    return _Parser()


def parse_program(source: str, file: str = "<string>", line_offset: int = 0) -> n.Program:
    """Parse prose source. `line_offset` is the line in the enclosing file before line 1.

    Raises ProseSyntaxError with every problem found; a program nested deeper
    than `nesting.MAX_NESTING` levels is refused (see `nesting.py`).
    """
    parser = _parser()
    text = source if source.endswith("\n") else source + "\n"
    problems: list[SyntaxProblem] = []
    attempt = text
    with parser.lock:
        parser.builder.file = file
        for _ in range(MAX_REPORTED_ERRORS):
            try:
                body: tuple[n.Stmt, ...] = parser.lark.parse(  # type: ignore[assignment]
                    "\n" * line_offset + attempt, start="start"
                )
            except (UnexpectedInput, IndentationProblem) as error:
                problem, recoverable = _describe(error, text, file, line_offset, parser)
                if not problems or problem.span.line > problems[-1].span.line:
                    problems.append(problem)
                if not recoverable:
                    break
                blanked = _blank_statement(attempt, problem.span.line - line_offset)
                if blanked == attempt:
                    break
                attempt = blanked
                continue
            if problems:
                break
            comments = tuple(
                n.Comment(
                    c.text,
                    c.own_line,
                    span=Span(file, c.line, c.column, c.line, c.column + len(c.text)),
                )
                for c in parser.indenter.state.comments
            )
            last_line = line_offset + text.count("\n")
            span = Span(file, line_offset + 1, 1, last_line, 1)
            program = n.Program(body, comments, source, span=span)
            deep = first_too_deep(program)
            if deep is None:
                return program
            lines = text.splitlines()
            problems.append(
                _problem(file, deep.line, deep.column, too_deep_message(), lines, line_offset)
            )
            break
    raise ProseSyntaxError(problems)


def _describe(
    error: Exception, text: str, file: str, offset: int, parser: _Parser
) -> tuple[SyntaxProblem, bool]:
    """A readable problem for a Lark or indentation error, and whether to go on."""
    lines = text.splitlines()
    if isinstance(error, IndentationProblem):
        return _problem(file, error.line, error.column, error.message, lines, offset), False
    if isinstance(error, UnexpectedCharacters):
        line, column = error.line, error.column
        char = error.char
        if char == '"':
            source_line = lines[line - offset - 1] if 0 < line - offset <= len(lines) else ""
            if source_line[max(column - 3, 0) : column] == '"""':
                column -= 2  # the lexer took the first two quotes for an empty string
            message = f"string opened at {line}:{column} is not closed"
            return _problem(file, line, column, message, lines, offset), False
        message = f"unexpected character `{char}`"
        return _problem(file, line, column, message, lines, offset), True
    brackets = parser.indenter.state.open_brackets
    at_end = isinstance(error, UnexpectedEOF) or (
        isinstance(error, UnexpectedToken) and error.token.type == "$END"
    )
    if at_end and brackets:
        return _unclosed(brackets[-1], file, lines, offset), False
    token: Token | None = getattr(error, "token", None)
    if at_end or token is None or not isinstance(token.line, int):
        line, column = offset + len(lines) + 1, 1
    else:
        line, column = token.line, int(token.column or 1)
        typo = _keyword_typo(lines, line - offset)
        if typo is not None:
            return _problem(file, typo[0] + offset, typo[1].column, typo[1].message, lines,
                            offset), not brackets
    header_line = _previous_code_line(lines, line - offset)
    header = _strip_comment(lines[header_line - 1]) if header_line else ""
    if header.endswith(":") and (at_end or (token is not None and token.type != "_INDENT")):
        at_line = header_line + offset
        message = f"expected an indented block after `{header.strip()}`"
        frame_column = len(lines[header_line - 1].rstrip()) + 1
        problem = _problem(file, at_line + 1 if not at_end else at_line, 1, message, lines, offset)
        if at_end:
            problem = _problem(file, at_line, frame_column, message, lines, offset)
        return problem, not brackets and not at_end
    if at_end:
        return _problem(file, line - 1, 1, "unexpected end of input", lines, offset), False
    assert isinstance(error, UnexpectedToken) and token is not None
    expected = _acceptable(error)
    if brackets:
        opener = brackets[-1]
        if int(opener.line or 0) < line:
            words = lines[line - offset - 1].split() if 0 < line - offset <= len(lines) else []
            if words and words[0] in _statement_words():
                return _unclosed(opener, file, lines, offset), False
    recoverable = not brackets
    if token.type == "_INDENT":
        at = _next_code_line(lines, line - offset + 1) + offset
        return _problem(file, at, 1, "unexpected indentation", lines, offset), recoverable
    if token.type == "_NL" and "COLON" in expected:
        message = "expected `:` at the end of this line"
        return _problem(file, line, column, message, lines, offset), recoverable
    message = f"unexpected {_token_words(token)}"
    wanted = _expected_words(expected)
    if wanted:
        message += "; expected " + wanted
    if brackets:
        opener = brackets[-1]
        message += f" (inside the `{opener.value}` opened at {opener.line}:{opener.column})"
    return _problem(file, line, column, message, lines, offset), recoverable


@lru_cache(maxsize=1)
def _starts() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The terminals that start an expression, a value (an expression, or a call, a loop,
    a session... on the right of `let x =`) and a statement, read from the grammar's parse
    table where each begins: so a new construct's first word is grouped as it should be in
    "expected a value" or "expected a statement" without a list to keep. Built on the first
    syntax error (a parser without the builder: `accepts` tries every terminal)."""
    lark = new_parser(postlex=ProseIndenter())

    def accepted(text: str, start: str) -> frozenset[str]:
        state = lark.parse_interactive(text, start=start)
        state.exhaust_lexer()
        return frozenset(state.accepts())  # type: ignore[no-untyped-call]

    statement = accepted("", "start") - {"$END", "_NL", "NAME"}
    return accepted("", "predicate_start"), accepted("let x = ", "start"), statement


def _acceptable(error: UnexpectedToken) -> set[str]:
    """What the parser could take where it failed. A token the state's lexer could not
    read is reported with what that lexer reads, which holds the terminals every state
    lexes (`ProseIndenter.always_accept`); keep those only if the parser takes them here."""
    expected = set(error.expected)
    state = getattr(error, "state", None)
    table = getattr(getattr(state, "parse_conf", None), "states", None)
    if isinstance(table, dict) and getattr(state, "position", None) in table:
        expected &= set(table[state.position])  # type: ignore[union-attr]
    return expected


def _expected_words(expected: set[str]) -> str:
    """What the parser wanted, in words; values and statement keywords are grouped."""
    words: set[str] = set()
    expression, value, statement = _starts()
    if len(expected & expression) >= 3:
        words.add("a value")
        expected = expected - value
    if len(expected & statement) >= 4:
        words.add("a statement")
        expected = expected - statement
    words.update(_TERMINAL_WORDS.get(name, f"`{name.lower()}`") for name in expected)
    ordered = sorted(words)
    if not ordered or len(ordered) > 6:
        return ""
    return _join_or(ordered)


def _strip_comment(line: str) -> str:
    """The line without a trailing comment (a `#` outside strings)."""
    quoted = False
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted:
            return line[:index].rstrip()
    return line.rstrip()


def _statement_words() -> set[str]:
    """The keywords a statement starts with, as written (`let`, `call`, ...)."""
    return {name.lower() for name in _starts()[2]}


def _keyword_typo(lines: list[str], line: int) -> tuple[int, KeywordTypo] | None:
    """A misspelt keyword starting the failing line (`prose.syntax.typos`)."""
    if not 0 < line <= len(lines):
        return None
    typo = keyword_typo(lines[line - 1], _statement_words())
    return (line, typo) if typo is not None else None


def _unclosed(opener: Token, file: str, lines: list[str], offset: int) -> SyntaxProblem:
    line, column = int(opener.line or 1), int(opener.column or 1)
    message = f"`{opener.value}` opened at {line}:{column} is not closed"
    return _problem(file, line, column, message, lines, offset)


def _problem(
    file: str, line: int, column: int, message: str, lines: list[str], offset: int
) -> SyntaxProblem:
    span = Span(file, line, column, line, column + 1)
    local = Span(file, line - offset, column, line - offset, column + 1)
    frame = code_frame("\n".join(lines), local)
    if offset:
        frame = _renumber(frame, offset)
    return SyntaxProblem(span, message, frame)


def _renumber(frame: str, offset: int) -> str:
    out = []
    numbers = [int(part.split("|")[0]) for part in frame.splitlines() if part.split("|")[0].strip()]
    width = len(str(max(numbers) + offset)) if numbers else 1
    for part in frame.splitlines():
        head, _, rest = part.partition("|")
        head = str(int(head) + offset) if head.strip() else ""
        out.append(f"{head:>{width}} |{rest}")
    return "\n".join(out)


def _token_words(token: Token) -> str:
    if token.type in ("_NL", "$END"):
        return "end of line"
    if token.type == "_DEDENT":
        return "end of the block"
    if token.type in ("STRING", "LONG_STRING"):
        return "string"
    value = str(token.value)
    return f"`{value}`"


def _join_or(words: list[str]) -> str:
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _previous_code_line(lines: list[str], line: int) -> int:
    """The nearest line above `line` (1-based) with code on it; 0 if none."""
    for number in range(min(line - 1, len(lines)), 0, -1):
        stripped = lines[number - 1].strip()
        if stripped and not stripped.startswith("#"):
            return number
    return 0


def _next_code_line(lines: list[str], line: int) -> int:
    for number in range(max(line, 1), len(lines) + 1):
        stripped = lines[number - 1].strip()
        if stripped and not stripped.startswith("#"):
            return number
    return line


def _blank_statement(text: str, line: int) -> str:
    """Replace line `line` and the lines indented under it by `continue`, to resume.

    `continue` parses anywhere, so the enclosing block keeps a statement and
    the next error reported is a real one further down.
    """
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return text
    start = line - 1
    indent = len(lines[start]) - len(lines[start].lstrip(" "))
    if not lines[start].strip():
        return text
    lines[start] = " " * indent + "continue"
    index = start + 1
    while index < len(lines):
        current = lines[index]
        stripped = current.strip()
        if stripped and len(current) - len(current.lstrip(" ")) <= indent:
            break
        lines[index] = ""
        index += 1
    return "\n".join(lines)
