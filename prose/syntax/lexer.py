"""The indentation post-lexer: `_NL` tokens become `_INDENT`/`_DEDENT`.

Besides what Lark's own `Indenter` does, it records every comment (they live
inside `_NL` tokens) for the formatter, rejects tabs in indentation, reports a
dedent that matches no enclosing level at its position, remembers where
each open bracket was opened so that an unclosed one is reported there, and
refuses brackets and blocks nested deeper than `MAX_NESTING` (`nesting.py`)
at the token that goes too deep, before the parser has built anything of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from prose.syntax.generate_parser import ALWAYS_ACCEPT
from prose.syntax.lark_api import PostLex, Token
from prose.syntax.nesting import MAX_NESTING, too_deep_message

OPENERS = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}
CLOSERS = {"RPAR", "RSQB", "RBRACE"}


@dataclass
class LexedComment:
    """A comment the lexer found, for the formatter."""

    text: str
    line: int
    column: int
    own_line: bool


class IndentationProblem(Exception):
    """Raised from inside the token stream; the parser turns it into a syntax error."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message


class NestingTooDeep(IndentationProblem):
    """Brackets and blocks nested deeper than `MAX_NESTING`."""

    def __init__(self, line: int, column: int) -> None:
        super().__init__(line, column, too_deep_message())


@dataclass
class IndentState:
    """The post-lexer's state of one parse (comments, open brackets)."""

    comments: list[LexedComment] = field(default_factory=list)
    open_brackets: list[Token] = field(default_factory=list)
    last_token: Token | None = None


class ProseIndenter(PostLex):
    """Turns newline tokens into indentation tokens (see module docstring)."""

    always_accept = ALWAYS_ACCEPT  # (where the tables are generated, which keeps them too)

    def __init__(self) -> None:
        self.state = IndentState()

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        self.state = state = IndentState()
        levels = [0]
        # Levels opened by a pipeline stage line (`  | map:`): they continue the
        # statement, so opening and closing them yields no token.
        silent: set[int] = set()
        brackets = state.open_brackets
        for token in stream:
            kind = token.type
            # A nested parse (conditions are parsed as predicates while the
            # block is being built) replaces self.state; take it back.
            self.state = state
            if kind in ("_NL", "_PIPE_NL"):
                self._collect_comments(state, token)
                if brackets:
                    continue
                value: str = token.value
                cut = value.rfind("\n")
                if cut < 0:
                    if kind == "_NL":
                        yield token
                    continue
                indent_text = value[cut + 1 :]
                line = token.line + value.count("\n")  # type: ignore[operator]
                if "\t" in indent_text:
                    raise IndentationProblem(line, indent_text.index("\t") + 1, "tab in indentation")
                indent = len(indent_text)
                if kind == "_PIPE_NL" and indent >= levels[-1]:
                    if indent > levels[-1]:
                        levels.append(indent)
                        silent.add(len(levels) - 1)
                    continue  # `| stage` goes on with the statement
                yield Token.new_borrow_pos("_NL", value, token)
                if indent > levels[-1]:
                    levels.append(indent)
                    if len(levels) - 1 + len(brackets) > MAX_NESTING:
                        raise NestingTooDeep(line, indent + 1)
                    yield Token.new_borrow_pos("_INDENT", indent_text, token)
                elif indent < levels[-1]:
                    while indent < levels[-1]:
                        levels.pop()
                        if len(levels) in silent:
                            silent.discard(len(levels))
                        else:
                            yield Token.new_borrow_pos("_DEDENT", indent_text, token)
                    if indent != levels[-1]:
                        if kind == "_PIPE_NL" and indent > levels[-1]:
                            levels.append(indent)
                            silent.add(len(levels) - 1)
                            continue
                        raise IndentationProblem(
                            line,
                            indent + 1,
                            f"unindent to column {indent + 1} does not match any outer "
                            "indentation level",
                        )
                continue
            if kind in OPENERS:
                brackets.append(token)
                if len(levels) - 1 + len(brackets) > MAX_NESTING:
                    raise NestingTooDeep(token.line, token.column)  # type: ignore[arg-type]
            elif kind in CLOSERS and brackets:
                brackets.pop()
            state.last_token = token
            yield token
        self.state = state
        while len(levels) > 1:
            levels.pop()
            if len(levels) in silent:
                silent.discard(len(levels))
            else:
                yield Token("_DEDENT", "")

    @staticmethod
    def _collect_comments(state: IndentState, token: Token) -> None:
        value: str = token.value
        if "#" not in value:
            return
        line: int = token.line  # type: ignore[assignment]
        column: int = token.column  # type: ignore[assignment]
        own_line = state.last_token is None
        position = 0
        length = len(value)
        while position < length:
            char = value[position]
            if char == "\n":
                line += 1
                column = 1
                own_line = True
                position += 1
            elif char == "#":
                end = value.find("\n", position)
                if end < 0:
                    end = length
                text = value[position:end].rstrip("\r")
                state.comments.append(LexedComment(text, line, column, own_line))
                column += end - position
                position = end
            else:
                column += 1
                position += 1
