"""The `prose` command line: thin commands over the library."""

# Before any of prose's dataclasses or regexes is made in a `prose` process: what they
# compile from text comes compiled from a disk cache (a third of a cold `prose lint`,
# docs/benchmarks.md). Only the command line installs it: a program that imports the
# library keeps `dataclasses` and `re` as they are.
from prose.compile_cache import install as _install_compile_caches

_install_compile_caches()
