"""prose: multi-agent LLM patterns written as markdown.

Parse pattern files, lint them (names, flow, termination and information
hiding), and run them against any LiteLLM-routed model.
"""

__version__ = "0.1.0"

# Before any of prose's dataclasses is created: their generated methods come compiled from
# a disk cache (a sixth of a cold `prose lint`, docs/benchmarks.md).
from prose.dataclass_cache import install as _install_dataclass_cache

_install_dataclass_cache()
