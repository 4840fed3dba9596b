"""Before a run with agents: the tools' implementations, held against the declarations.

`providers_from_instance` turns an instance's `tools:` (`prose.spec.instance_tools`)
into run-time providers (a Python tool's callable is imported here, as a `python:`
service's is). `check_tools` refuses a run whose pattern declares a `cli:`/`mcp:` tool
nobody implements, or is given one nobody declares (R030, at the declaration), and one
that must not run commands without an OS sandbox and has none (R032, exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.runtime.errors import SandboxRequired, ToolsMismatch
from prose.runtime.mcp_client import McpToolSpec
from prose.runtime.sandbox import Isolation, isolation_mode
from prose.runtime.services import import_callable
from prose.runtime.toolbox import CommandSpec, Provider, PythonToolSpec
from prose.spec.instance_tools import optional_tools, provided_tools

if TYPE_CHECKING:
    from prose.spec.model import PatternSpec


def providers_from_instance(tools: Mapping[str, Any], base_dir: Path) -> dict[str, Provider]:
    """Run-time providers from an instance's `tools:` (`CommandTool`, `PythonTool`)."""
    out: dict[str, Provider] = {}
    for spelling, tool in tools.items():
        if getattr(tool, "kind", None) == "command":
            out[spelling] = CommandSpec(tuple(tool.command), dict(tool.params), tool.timeout,
                                        tool.max_output, tool.max_disk)
        elif getattr(tool, "kind", None) == "mcp":
            out[spelling] = McpToolSpec(tuple(tool.server), tool.server_tool, str(base_dir),
                                        tool.timeout, url=tool.url,
                                        separate=tool.separate)
        elif getattr(tool, "kind", None) == "python":
            out[spelling] = PythonToolSpec(tool.python, import_callable(tool.python, base_dir),
                                           tool.description, dict(tool.parameters))
    return out


def check_tools(spec: PatternSpec, providers: Mapping[str, Provider], source: str,
                *, require_sandbox: bool) -> Isolation:
    """The isolation mode of the run's commands, after refusing a mismatch (see module)."""
    declared = provided_tools(spec)
    optional = optional_tools(spec)
    for spelling, (slot, span) in declared.items():
        if spelling not in optional and spelling not in providers:
            raise ToolsMismatch(
                f"slot `{slot}` declares the tool `{spelling}` and this run does not provide "
                "it: say what implements it under `tools:` of an instance file "
                "(docs/agents.md)", span, source=source)
    for spelling in providers:
        if spelling not in declared:
            raise ToolsMismatch(f"the run provides the tool `{spelling}`, which no slot of "
                                "the pattern declares")
    if not any(spelling.startswith("cli:") for spelling in declared
               if spelling in providers or spelling not in optional):
        return "context-only"  # no command to isolate (and no need to probe for bwrap)
    mode = isolation_mode()
    if require_sandbox and mode != "bwrap":
        raise SandboxRequired(
            "`--require-sandbox`: this machine has no OS sandbox for the declared commands "
            "(bubblewrap's `bwrap` is missing, cannot create namespaces, or PROSE_NO_SANDBOX "
            "is set); nothing was run")
    return mode

