"""`prose lsp`: run the language server over stdio."""

from __future__ import annotations

import click

from prose.cli.inputs import EXIT_USAGE


@click.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk over stdin and stdout (the default and only way).")
def lsp_command(stdio: bool) -> None:
    """Run the language server for pattern files over stdin and stdout.

    An editor starts it and talks the Language Server Protocol with it: diagnostics
    as you type (every lint and syntax finding, with the path a leak took), who sees
    what on hover, go to definition and references, completion, the outline,
    formatting and quick fixes. It needs the `lsp` extra
    (`pip install 'prose-patterns[lsp]'`); see docs/editors.md for VS Code, Neovim
    and Helix.

    \b
    Examples:
      prose lsp
      prose lsp --stdio      # what some clients pass; the same
    """
    try:
        from prose.lsp.server import serve
    except ImportError as error:  # pygls is an optional extra
        click.echo(f"error: the language server needs pygls ({error}); "
                   "install it with: pip install 'prose-patterns[lsp]'", err=True)
        raise SystemExit(EXIT_USAGE) from None
    serve()
