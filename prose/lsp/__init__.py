"""`prose lsp`: a language server for pattern files, on pygls.

Everything it reports comes from the library: `prose.pattern_file` loads and parses,
`prose.check.lint_pattern` lints, `prose.check.explain` says who sees what,
`prose.syntax.format` formats. The modules here only translate: `server` (the wiring),
`documents` (open documents and their analyses), `incremental` (reusing parses),
`positions` (spans and LSP positions), `diagnostics`, `symbols` (where each name
occurs), `hover`, `navigation` (definition, references, outline), `completion` and
`actions` (formatting and code actions).

pygls is an optional dependency (`pip install 'prose-patterns[lsp]'`); nothing else in
the package imports this one.
"""
