"""prose: multi-agent LLM patterns written as markdown.

Parse pattern files, lint them (names, flow, termination and information
hiding), and run them against any LiteLLM-routed model.
"""

__version__ = "0.1.0"

# Before any of prose's dataclasses or regexes is made: what they compile from text comes
# compiled from a disk cache (a third of a cold `prose lint`, docs/benchmarks.md).
from prose.compile_cache import install as _install_compile_caches

_install_compile_caches()
