"""Exit codes, errors and path expansion for commands (reading a file is `prose.files.read_text`).

Exit 1 is bad content (a finding, a file that is not what it should be), 2 a
path that cannot be read or a misused option, 70 a bug in prose itself: its
message says how to report it. Nothing a user gives prints a traceback
(`--debug` of `prose run` shows one).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn

import click

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70  # EX_SOFTWARE: our bug, never the input's
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell shows for a reader that went away


class NumberAtLeast(click.FloatRange):
    """A number >= `minimum` for a budget option (`--max-cost`, `--timeout`). click's
    FloatRange lets `nan` through (every comparison with it is false), and a NaN budget
    never stopped anything; `inf` is no limit, as it says."""

    name = "number"

    def __init__(self, minimum: float) -> None:
        super().__init__(min=minimum)

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if isinstance(number, float) and math.isnan(number):
            self.fail(f"{value!r} is not a number.", param, ctx)
        return number


def masked_output(text: str) -> str:
    """A command's output with the environment's secrets masked (`prose.llm.redact`), as
    `shown` masks a message. `prose.llm` is imported only when some environment value is in
    the text at all, so a command that prints none (most of `prose lint`'s runs) stays fast."""
    if not any(len(value) >= 8 and value in text for value in os.environ.values()):
        return text
    from prose.llm.redact import redact, run_secrets

    masked: str = redact(text, run_secrets())
    return masked


def quiet_teardown() -> None:
    """An interrupted command is over once it has said so: an object a library left half
    made (LiteLLM's HTTP transport, when Ctrl-C came while the client started) may fail in
    its finaliser as the interpreter ends, and Python prints that as a traceback after the
    `interrupted:` line. Such errors are not reported from here on."""
    sys.unraisablehook = lambda unraisable: None


def fail(message: str, code: int, secrets: Iterable[str] = ()) -> NoReturn:
    """Print `error: message` on stderr, as `shown` shows it, and exit `code`."""
    click.echo(f"error: {shown(message, secrets)}", err=True)
    raise SystemExit(code)


def shown(message: str, secrets: Iterable[str] = ()) -> str:
    """A message as a command prints it: the environment's secrets and `secrets` masked
    (`prose.llm.redact`), control characters escaped (`prose.errors.printable`). For every
    message that may hold text from outside: a model's, a provider's, a file's, an
    argument's."""
    from prose.errors import printable
    from prose.llm.redact import redact, run_secrets

    masked: str = redact(message, run_secrets(secrets))
    return printable(masked)


def unexpected_error(error: Exception, secrets: Iterable[str] = ()) -> int:
    """Report an exception no command handled and return the exit code.

    Running out of memory is the input's size, not a bug (exit 1); anything else
    is a bug in prose (exit 70), and the message says how to report it.
    """
    if isinstance(error, BrokenPipeError):  # `prose test ... | head -1`: the reader left
        return broken_pipe()
    if isinstance(error, OSError) and error.errno in _DISK_FULL:
        # An output that no longer fits (a full disk, a file-size limit, `> /dev/full`):
        # the user's machine, not a bug. What was written before stays.
        where = f" {error.filename}" if error.filename else ""
        with contextlib.suppress(OSError):
            click.echo(f"error: cannot write{where}: {error.strerror or error} (is the disk "
                       "full?); what was written before stays", err=True)
        return EXIT_USAGE
    if isinstance(error, MemoryError):
        click.echo(
            "error: out of memory: the run needed more memory than the machine gave it "
            "(are the inputs, or the values the run built, very large?)",
            err=True,
        )
        return EXIT_FINDINGS
    from prose import __version__

    detail = shown(f"{type(error).__name__}: {error}", secrets)
    click.echo(
        f"error: internal error (a bug in prose {__version__}, not in your input): {detail}\n"
        "Please report it with the command you ran and what the same command prints "
        "with --debug (the Python traceback).",
        err=True,
    )
    return EXIT_INTERNAL


_DISK_FULL = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})


def broken_pipe() -> int:
    """What a command does when the reader of its output went away (`| head -1`): stop
    quietly, as a process killed by SIGPIPE does (exit 141), with nothing said, since
    nobody reads it, and nothing more written (a later flush would fail again)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError, AttributeError):  # a stdout with no file
        os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


def expand_paths(paths: tuple[str, ...], pattern: str = "*.prose.md") -> list[str]:
    """Files as given; folders searched recursively for `pattern`, sorted."""
    out: list[str] = []
    for path in paths:
        candidate = Path(path)
        if candidate.is_dir():
            out.extend(str(found) for found in sorted(candidate.rglob(pattern)))
        else:
            out.append(path)
    return out
