"""The `prose` command line: thin commands over the library.

Importing the package does nothing more: the console script (`prose.cli.entry`) turns
the cyclic garbage collector off before anything loads (`prose.cli.collector`), and
`prose.cli.main` installs the compile caches (`prose.compile_cache`) before any of
prose's classes is made.
"""
