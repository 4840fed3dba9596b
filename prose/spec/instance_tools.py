"""An instance's `tools:`: what implements the tools a pattern's slots declare.

The instance file is the trust boundary (as for `python:` services): it alone says
which commands may run (argument lists, or templates whose placeholders the model
fills with whole arguments) and which Python callables answer an external tool.
`check_tools` holds them against the pattern: a `cli:`/`mcp:` tool declared and not
provided (PS193), provided and not declared (PS194).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import yaml

from prose.diagnostics.model import Diagnostic
from prose.lang.tools import DEFAULT_MAX_DISK, DEFAULT_PARAM, needs_provider, parse_tool_name
from prose.source import Span
from prose.spec.codes import make
from prose.spec.instance import CommandTool, Instance, McpTool, PythonTool, ToolProvider
from prose.spec.model import PatternSpec
from prose.spec.yaml_nodes import key_nodes, node_span

PLACEHOLDER = re.compile(r"^\{([A-Za-z_]\w*)\}$")
_COMMAND_KEYS = frozenset({"command", "params", "timeout", "max_output", "max_disk"})
_PYTHON_KEYS = frozenset({"python", "description", "parameters"})
_PYTHON_TARGET = re.compile(
    r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$"
)


def placeholders(command: list[str]) -> list[str]:
    """The placeholder names of a command template, in order."""
    return [m.group(1) for item in command if (m := PLACEHOLDER.match(item))]


def read_tools(node: yaml.Node | None, file: str, out: list[Diagnostic]) -> dict[str, ToolProvider]:
    """The `tools:` mapping of an instance file; problems are PS195 at their node."""
    if node is None:
        return {}

    def bad(message: str, at: yaml.Node) -> None:
        out.append(make("PS195", message, node_span(at, file)))

    if not isinstance(node, yaml.MappingNode):
        bad("`tools` must map tool names (`cli:NAME`, `mcp:NAME`) to their implementation", node)
        return {}
    tools: dict[str, ToolProvider] = {}
    for name, (key, value) in key_nodes(node).items():
        found = parse_tool_name(name)
        if found is None or not needs_provider(name):
            what = "a built-in tool needs no implementation" if found else "not a tool name"
            bad(f"`{name}` in `tools`: {what} (`cli:NAME` or `mcp:NAME`)", key)
            continue
        if not isinstance(value, yaml.MappingNode):
            bad(f"the implementation of `{name}` must be a mapping", value)
            continue
        keys = key_nodes(value)
        data = _plain(value)
        span = node_span(key, file)

        def at(message: str, where: str, keys: Mapping[str, tuple[yaml.Node, yaml.Node]] = keys,
               value: yaml.Node = value) -> None:
            bad(message, keys[where][1] if where in keys else value)

        tool: ToolProvider | None
        if found.kind == "command":
            tool = _command(name, data, span, at)
        elif "server" in data or "url" in data:
            tool = _mcp(name, data, span, at)
        else:
            tool = _python(name, data, span, at)
        if tool is not None:
            tools[name] = tool
    return tools


def _plain(node: yaml.Node) -> dict[str, object]:
    loader = yaml.SafeLoader("")
    try:
        data = loader.construct_object(node, deep=True)
    except yaml.YAMLError:
        return {}
    finally:
        loader.dispose()
    return {str(k): v for k, v in data.items()} if isinstance(data, dict) else {}


def _command(name: str, data: dict[str, object], span: Span,
             bad: Callable[[str, str], None]) -> CommandTool | None:
    unknown = sorted(set(data) - _COMMAND_KEYS)
    if unknown:
        bad(f"unknown key `{unknown[0]}` in `{name}` (known: command, params, timeout, "
            "max_output, max_disk)", unknown[0])
        return None
    command = data.get("command")
    if not isinstance(command, list) or not command or not all(
            isinstance(item, str) and item for item in command):
        bad(f"`command` of `{name}` must be a list of arguments (never shell text)", "command")
        return None
    for item in command:
        if ("{" in item or "}" in item) and not PLACEHOLDER.match(item):
            bad(f"`{item}` in the command of `{name}`: a placeholder is a whole argument "
                "`{NAME}`", "command")
            return None
    if PLACEHOLDER.match(command[0]):
        bad(f"the program of `{name}` must be fixed, not a placeholder", "command")
        return None
    params = data.get("params") or {}
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        bad(f"`params` of `{name}` maps each placeholder to a regular expression", "params")
        return None
    wanted = placeholders(command)
    for param in params:
        if param not in wanted:
            bad(f"`params` of `{name}` names `{param}`, no placeholder of its command", "params")
            return None
    for param, pattern in params.items():
        try:
            re.compile(pattern)
        except re.error as error:
            bad(f"the pattern of `{param}` in `{name}` is not a regular expression: {error}",
                "params")
            return None
    timeout, cap = data.get("timeout", 30.0), data.get("max_output", 65536)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        bad(f"`timeout` of `{name}` is a number of seconds above 0", "timeout")
        return None
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 1:
        bad(f"`max_output` of `{name}` is a number of bytes of at least 1", "max_output")
        return None
    disk = data.get("max_disk", DEFAULT_MAX_DISK)
    if not isinstance(disk, int) or isinstance(disk, bool) or disk < 1:
        bad(f"`max_disk` of `{name}` is a number of bytes of at least 1", "max_disk")
        return None
    full = {param: params.get(param, DEFAULT_PARAM) for param in wanted}
    return CommandTool(tool=name, command=list(command), params=full, timeout=float(timeout),
                       max_output=cap, max_disk=disk, span=span)


_MCP_KEYS = frozenset({"server", "url", "tool", "timeout", "separate"})


def _mcp(name: str, data: dict[str, object], span: Span,
         bad: Callable[[str, str], None]) -> McpTool | None:
    unknown = sorted(set(data) - _MCP_KEYS)
    if unknown:
        bad(f"unknown key `{unknown[0]}` in `{name}` (known: server, url, tool, timeout, "
            "separate)", unknown[0])
        return None
    separate = data.get("separate", False)
    if not isinstance(separate, bool):
        bad(f"`separate` of `{name}` is true (a server per slot) or false", "separate")
        return None
    if separate and "url" in data:
        # One address is one server whatever the sessions: prose cannot make it a store
        # per slot. A process per slot it starts itself can be.
        bad(f"`separate` of `{name}` needs a `server:` command line (prose starts one "
            "process per slot); a `url:` is one server for every slot: give each slot a "
            "tool of its own instead", "separate")
        return None
    url = data.get("url")
    server = data.get("server")
    if ("url" in data) == ("server" in data):
        bad(f"`{name}` names its MCP server by exactly one of `server` (a command line, "
            "stdio) and `url` (an address, streamable HTTP)", "url" if "url" in data
            else "server")
        return None
    if url is not None and (not isinstance(url, str)
                            or not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url)):
        bad(f"`url` of `{name}` is the server's http:// or https:// address", "url")
        return None
    if url is None and (not isinstance(server, list) or not server or not all(
            isinstance(item, str) and item for item in server)):
        bad(f"`server` of `{name}` is the server's command line as a list of arguments",
            "server")
        return None
    tool = data.get("tool", name.partition(":")[2])
    timeout = data.get("timeout", 30.0)
    if not isinstance(tool, str) or not tool:
        bad(f"`tool` of `{name}` names one tool of the server", "tool")
        return None
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        bad(f"`timeout` of `{name}` is a number of seconds above 0", "timeout")
        return None
    return McpTool(tool=name, server=list(server) if isinstance(server, list) else [],
                   url=url if isinstance(url, str) else None, server_tool=tool,
                   timeout=float(timeout), separate=separate, span=span)


def _python(name: str, data: dict[str, object], span: Span,
            bad: Callable[[str, str], None]) -> PythonTool | None:
    unknown = sorted(set(data) - _PYTHON_KEYS)
    if "separate" in data and "python" in data:
        bad(f"`separate` of `{name}`: a Python tool shares the run's process, so it cannot "
            "be a store per slot; bind an MCP `server:` or give each slot a tool of its own",
            "separate")
        return None
    if unknown or "python" not in data:
        key = unknown[0] if unknown else "python"
        bad(f"the implementation of `{name}` is `{{python: pkg.mod:func}}` (with optional "
            "`description` and `parameters`)", key)
        return None
    target = str(data["python"]).strip()
    match = _PYTHON_TARGET.match(target)
    if match is None:
        bad(f"`python: {target}` of `{name}` is not `package.module:function`", "python")
        return None
    parameters = data.get("parameters") or {}
    if not isinstance(parameters, dict):
        bad(f"`parameters` of `{name}` maps argument names to type words", "parameters")
        return None
    description = data.get("description")
    return PythonTool(tool=name, python=target, module=match.group(1), function=match.group(2),
                      description=str(description) if description is not None else None,
                      parameters={str(k): str(v) for k, v in parameters.items()}, span=span)


def check_tools(instance: Instance, spec: PatternSpec) -> list[Diagnostic]:
    """PS193 for a declared `cli:`/`mcp:` tool the instance does not provide (at the
    instance's `tools:` or `pattern:`, naming the slot's line), PS194 for one provided
    and declared by no slot (at its key)."""
    out: list[Diagnostic] = []
    declared = provided_tools(spec)
    optional = optional_tools(spec)
    anchor = instance.tools_span or instance.pattern_span or instance.span
    for spelling, (slot, span) in declared.items():
        if spelling not in optional and spelling not in instance.tools:
            out.append(make(
                "PS193", f"slot `{slot}` declares the tool `{spelling}` ({span}) and the instance's `tools` does not "
                "provide it", anchor,
                help=f"add `{spelling}:` under `tools:` with its "
                + ("`command: [ARG, ...]`" if spelling.startswith("cli:")
                   else "`python: pkg.mod:func`")))
    for spelling, provided in instance.tools.items():
        if spelling not in declared:
            out.append(make("PS194", f"the instance provides the tool `{spelling}`, which no "
                            "slot of the pattern declares", provided.span))
    return out


def separate_tools(tools: Mapping[str, ToolProvider]) -> frozenset[str]:
    """The external tools an instance binds `separate` (a server per slot, no channel)."""
    return frozenset(name for name, tool in tools.items() if getattr(tool, "separate", False))


def provided_tools(spec: PatternSpec) -> dict[str, tuple[str, Span]]:
    """The tools a run is given an implementation of (`cli:`, `mcp:`; `needs_provider`), by
    spelling, each with the first slot declaring it and where: what an instance's `tools:`
    and a run's providers are checked against (optional ones included: see
    `optional_tools`)."""
    declared: dict[str, tuple[str, Span]] = {}
    for declaring in spec.slots:
        for use in declaring.tools:
            if needs_provider(use.spelling):
                declared.setdefault(use.spelling, (declaring.name, use.span))
    return declared


def optional_tools(spec: PatternSpec) -> set[str]:
    """The tools every slot declaring them marks `optional`: an instance may leave them out."""
    marked: dict[str, bool] = {}
    for declaring in spec.slots:
        for use in declaring.tools:
            marked[use.spelling] = marked.get(use.spelling, True) and use.optional
    return {spelling for spelling, optional in marked.items() if optional}
