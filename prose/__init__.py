"""prose: multi-agent LLM patterns written as markdown.

Parse pattern files, lint them (names, flow, termination and information
hiding), and run them against any LiteLLM-routed model.
"""

__version__ = "0.1.0"
