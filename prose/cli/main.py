"""The `prose` entry point: a click group whose commands load on first use.

Each command lives in its own module and is imported only when it runs, so
`prose lint` never pays for what `prose run` needs.
"""

from __future__ import annotations

# Before any of prose's dataclasses or regexes is made in a `prose` process: what they
# compile from text comes compiled from a disk cache (a third of a cold `prose lint`,
# docs/benchmarks.md). Only the command line installs it: a program that imports the
# library keeps `dataclasses` and `re` as they are.
from prose.compile_cache import install as _install_compile_caches

_install_compile_caches()

import importlib  # noqa: E402  (after the caches are in)
import sys  # noqa: E402
from typing import Any  # noqa: E402

import click  # noqa: E402

from prose import __version__  # noqa: E402
from prose.cli.collector import collect_from_here  # noqa: E402

# command name -> (module, attribute, one-line help shown by `prose --help`)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "parse": ("prose.cli.parse_cmd", "parse_command", "Parse pattern files and print their AST."),
    "fmt": ("prose.cli.fmt_cmd", "fmt_command", "Rewrite prose blocks in canonical form."),
    "lint": ("prose.cli.lint_cmd", "lint_command", "Check pattern files and report diagnostics."),
    "explain": ("prose.cli.explain_cmd", "explain_command", "Show who sees what, call by call."),
    "rules": ("prose.cli.rules_cmd", "rules_command", "List lint rules or explain one."),
    "run": ("prose.cli.run_cmd", "run_command", "Run a pattern against models (or a script)."),
    "batch": ("prose.cli.batch_cmd", "batch_command", "Run a pattern over every row of a JSONL or CSV file."),
    "test": ("prose.cli.test_cmd", "test_command", "Run pattern tests (*.test.yaml) with scripted models."),
    "answer": ("prose.cli.people_cmd", "answer_command", "Answer a question a waiting run asks a person."),
    "pending": ("prose.cli.people_cmd", "pending_command", "List the runs waiting for a person, and their questions."),
    "audit": ("prose.cli.audit_cmd", "audit_command", "Verify a trace's hash chain and information hiding."),
    "export": ("prose.cli.export_cmd", "export_command", "Write a readable ledger folder from a trace."),
    "stats": ("prose.cli.stats_cmd", "stats_command", "Calls, tokens, cost and critic metrics per slot."),
    "report": ("prose.cli.report_cmd", "report_command", "Write a run's trace as one HTML page."),
    "new": ("prose.cli.new_cmd", "new_command", "Scaffold a pattern file, instance and script."),
    "list": ("prose.cli.list_cmd", "list_command", "List the standard pattern library."),
    "lsp": ("prose.cli.lsp_cmd", "lsp_command", "Run the language server for editors (stdio)."),
}

# Commands that only read and print: a Ctrl-C stays a quiet exit 130 to their end
# (`prose.cli.entry`), for there is nothing to close or seal, and Python's own handler
# can raise `KeyboardInterrupt` inside a callback of the import machinery (their rules and
# analyses load as they go), where it is printed as "Exception ignored" and lost: the
# command then ran to its end and exited 0.
QUIET_TO_THE_END = frozenset({"parse", "lint", "explain", "rules", "list"})


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _available(name))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None or not _available(cmd_name):
            return None
        module_name, attribute, _ = entry
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        if cmd_name not in QUIET_TO_THE_END:
            _interrupts_are_the_commands()
        collect_from_here(read_only=cmd_name in QUIET_TO_THE_END)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an exception none of them handled is reported, never a traceback
        (unless `--debug`): out of memory exits 1, anything else is our bug and exits 70."""
        debug = "--debug" in ctx.args  # the command's own arguments
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:  # Ctrl-C in a command that does not handle it: quietly
            raise SystemExit(130) from None
        except Exception as error:
            if debug:
                raise
            from prose.cli.inputs import unexpected_error

            raise SystemExit(unexpected_error(error)) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _interrupts_are_the_commands() -> None:
    """The command's module is imported: Ctrl-C is `KeyboardInterrupt` again, for the
    command to handle (`prose.cli.entry` held it quiet until now)."""
    import signal

    handler = signal.getsignal(signal.SIGINT)
    if getattr(handler, "prose_quiet_start", False):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _available(name: str) -> bool:
    """Whether a command's module exists (commands land one by one)."""
    import importlib.util

    return importlib.util.find_spec(COMMANDS[name][0]) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="prose")
def cli() -> None:
    """prose: multi-agent LLM patterns written as markdown.

    A pattern file (`*.prose.md`) declares slots (the services that cooperate),
    config, invariants about who sees what, and a `prose` program. Parse it,
    format it, lint it, and run it.

    \b
    Exit codes (3 to 6 come from running a pattern: `prose run`, `prose batch`):
      0    success
      1    findings or errors in the input (lint errors, a bad file, a failed test)
      2    usage, or a path that cannot be read
      3    a budget stop (--max-calls, --max-tokens, --max-cost, --timeout)
      4    a model or provider failure
      5    an information-hiding violation at run time (the call was not sent)
      6    waiting for a person to answer (`prose pending`, `prose answer`, then --resume)
      70   a bug in prose (the message says how to report it)
      130  interrupted (Ctrl-C)
      141  the reader of the output went away (`... | head -1`)
      143  terminated (SIGTERM)
    """


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    return cli.main(args=argv, prog_name="prose")
