"""The tools of one run: what implements each declared tool, and running one tool call.

`Toolbox` is built before the run from the pattern's `tools:` lines and the instance's
implementations (`prose.spec.instance_tools`): a `cli:`/`mcp:` tool declared and not
provided, or provided and not declared, stops the run before any call (R030). Running a
call (`run_tool`) never raises for the model's mistakes: a bad argument, a path out of
the workspace, a command that fails or a tool that raises is the tool's result, which
the model reads (`ToolOutcome.error` says why).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prose.lang.tools import (
    BUILTIN_TOOLS,
    DEFAULT_MAX_DISK,
    DEFAULT_PARAM,
    ToolKind,
    parse_tool_name,
)
from prose.runtime.builtins import BadPattern, compile_pattern
from prose.runtime.mcp_client import McpServers, McpToolSpec, McpUnavailable
from prose.runtime.sandbox import Isolation, resolve_program, run_command
from prose.runtime.workspace import MANIFEST, MAX_FILE_BYTES, PathRefused, Workspace

MAX_RESULT = 65536  # a built-in tool's result, in characters
PYTHON_TIMEOUT_S = 30.0
_PLACEHOLDER = re.compile(r"^\{([A-Za-z_]\w*)\}$")


@dataclass(frozen=True)
class CommandSpec:
    """A declared command (from the instance): argv with `{P}` placeholders."""

    command: tuple[str, ...]
    params: Mapping[str, str]
    timeout: float = 30.0
    max_output: int = 65536
    max_disk: int = DEFAULT_MAX_DISK  # bytes the workspace may grow by while it runs


@dataclass(frozen=True)
class PythonToolSpec:
    """An external tool answered by a Python callable."""

    ref: str
    function: Callable[..., Any]
    description: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)


Provider = CommandSpec | PythonToolSpec | McpToolSpec


@dataclass(frozen=True)
class Tool:
    """One tool a slot may use: its spelling, kind, whether it writes, its implementation."""

    spelling: str
    kind: ToolKind
    writes: bool
    provider: Provider | None = None
    # What an MCP server lists for it (description, input schema), asked when the call starts.
    listed: tuple[str | None, dict[str, Any] | None] | None = None

    @property
    def function_name(self) -> str:
        """The name the model calls it by (function names allow no `:`)."""
        return self.spelling.replace(":", "__").replace(".", "_")

    def description(self) -> str:
        if self.kind == "workspace":
            return BUILTIN_TOOLS[self.spelling]
        if isinstance(self.provider, CommandSpec):
            shown = " ".join(self.provider.command)
            return f"run `{shown}` in the workspace and return its exit code and output"
        if isinstance(self.provider, PythonToolSpec) and self.provider.description:
            return self.provider.description
        if self.listed is not None and self.listed[0]:
            return self.listed[0]
        return f"the external tool {self.spelling}"

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the tool's arguments."""
        props: dict[str, Any] = {}
        required: list[str] = []
        if self.listed is not None and self.listed[1] is not None:
            return self.listed[1]
        if self.spelling == "list":
            props = {"path": {"type": "string", "description": "a folder (default: the root)"}}
        elif self.spelling == "read":
            props, required = {"path": {"type": "string"}}, ["path"]
        elif self.spelling == "write":
            props = {"path": {"type": "string", "description": "a file path in the workspace"},
                     "content": {"type": "string", "description": "the file's whole text"}}
            required = ["path", "content"]
        elif self.spelling == "grep":
            props = {"pattern": {"type": "string", "description": "a regular expression"},
                     "path": {"type": "string", "description": "a file or folder"}}
            required = ["pattern"]
        elif isinstance(self.provider, CommandSpec):
            props = {m.group(1): {"type": "string", "pattern": self.provider.params.get(
                         m.group(1), DEFAULT_PARAM)}
                     for item in self.provider.command if (m := _PLACEHOLDER.match(item))}
            required = list(props)
        elif isinstance(self.provider, PythonToolSpec):
            props = {name: {"type": _json_word(word)}
                     for name, word in self.provider.parameters.items()}
        return {"type": "object", "properties": props, "required": required}

    def openai(self) -> dict[str, Any]:
        """The `tools=` entry offered to the model."""
        return {"type": "function", "function": {
            "name": self.function_name, "description": self.description(),
            "parameters": self.parameters()}}


def _json_word(word: str) -> str:
    lowered = word.lower()
    return {"string": "string", "str": "string", "text": "string", "int": "integer",
            "integer": "integer", "number": "number", "float": "number", "bool": "boolean",
            "boolean": "boolean", "object": "object", "list": "array",
            "array": "array"}.get(lowered, "string")


@dataclass(frozen=True)
class ToolOutcome:
    """A tool call's result as the model reads it; `error` says why it did not run or
    failed; `isolation` is how a command was confined (None for the others)."""

    output: str
    error: str | None = None
    isolation: Isolation | None = None
    exit_code: int | None = None
    duration_ms: float = 0.0

    def text(self) -> str:
        return f"error: {self.error}" if self.error is not None else self.output


class ToolRefused(Exception):
    """A tool call that is not run: the message is the tool's result."""


def _clip(text: str, limit: int = MAX_RESULT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[cut: {len(text) - limit} more characters]"


def _arguments(raw: str) -> dict[str, Any]:
    try:
        data = json.loads(raw or "{}")
    except json.JSONDecodeError as error:
        raise ToolRefused(f"the arguments are not JSON: {error.msg}") from None
    if not isinstance(data, dict):
        raise ToolRefused("the arguments must be a JSON object")
    return data


def _string(args: Mapping[str, Any], name: str, default: str | None = None) -> str:
    value = args.get(name, default)
    if not isinstance(value, str):
        raise ToolRefused(f"`{name}` must be a string")
    return value


def builtin(tool: str, args: Mapping[str, Any], workspace: Workspace) -> str:
    """Run a built-in workspace tool; PathRefused/ToolRefused say why not."""
    if tool == "list":
        start = workspace.resolve(_string(args, "path", "."))
        if start.is_file():
            return workspace.relative(start)
        lines = [f"{workspace.relative(p)}\t{p.stat().st_size}" for p in workspace.files(start)]
        return _clip("\n".join(lines) or "(no files)")
    if tool == "read":
        target = workspace.resolve(_string(args, "path"))
        if not target.is_file():
            raise ToolRefused(f"`{args.get('path')}` is not a file of the workspace")
        data = target.read_bytes()[: MAX_RESULT * 4]
        if b"\0" in data[:8192]:
            raise ToolRefused(f"`{args.get('path')}` is not a text file")
        return _clip(data.decode("utf-8", errors="replace"))
    if tool == "grep":
        try:  # RE2: a model's pattern cannot make the search slow (no backtracking)
            pattern = compile_pattern(_string(args, "pattern"), "`grep`")
        except BadPattern as error:
            raise ToolRefused(error.message) from None
        start = workspace.resolve(_string(args, "path", "."))
        files = [start] if start.is_file() else list(workspace.files(start))
        hits: list[str] = []
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if pattern.search(line):
                    hits.append(f"{workspace.relative(path)}:{number}: {line}")
        return _clip("\n".join(hits) or "(no match)")
    if tool == "write":
        return _write(workspace, _string(args, "path"), _string(args, "content"))
    raise ToolRefused(f"`{tool}` is no built-in tool")


def _write(workspace: Workspace, relative: str, content: str) -> str:
    """The built-in `write`: one text file inside the workspace (never the manifest, never
    through a link out, never past the per-file size cap)."""
    if relative.strip() == MANIFEST:
        raise ToolRefused(f"`{MANIFEST}` is the workspace's record of its inputs: not written")
    target = workspace.resolve(relative)
    if target == workspace.root or target.is_dir():
        raise ToolRefused(f"`{relative}` is a folder")
    data = content.encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise ToolRefused(f"the content is {len(data)} bytes; a file holds at most "
                          f"{MAX_FILE_BYTES}")
    before = target.stat().st_size if target.is_file() else 0
    grown = workspace.size() - workspace.laid_out_size + len(data) - before
    if grown > DEFAULT_MAX_DISK:
        raise ToolRefused(f"the workspace's disk quota is {DEFAULT_MAX_DISK} bytes over what "
                          f"it was given; this write would make it {grown}: not written")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return f"wrote {workspace.relative(target)} ({len(data)} bytes)"


def command_argv(spelling: str, spec: CommandSpec, args: Mapping[str, Any]) -> list[str]:
    """The argument list of a declared command, its placeholders filled from `args`, each
    value one whole argument matching its parameter's pattern; ToolRefused else."""
    params = {m.group(1): spec.params.get(m.group(1), DEFAULT_PARAM)
              for item in spec.command if (m := _PLACEHOLDER.match(item))}
    extra = sorted(set(args) - set(params))
    if extra:
        allowed = ", ".join(f"`{p}`" for p in params) or "none"
        raise ToolRefused(f"`{extra[0]}` is not an argument of `{spelling}` (its arguments: "
                          f"{allowed}); the instance file declares what the command runs")
    argv: list[str] = []
    for item in spec.command:
        match = _PLACEHOLDER.match(item)
        if match is None:
            argv.append(item)
            continue
        name = match.group(1)
        value = args.get(name)
        if not isinstance(value, str):
            raise ToolRefused(f"`{spelling}` needs the argument `{name}` (a string)")
        if not re.fullmatch(params[name], value) or ".." in Path(value).parts \
                or "\0" in value:
            raise ToolRefused(f"`{value}` is not allowed for `{name}` of `{spelling}` (the "
                              f"instance allows `{params[name]}`, no `..`)")
        argv.append(value)
    program = resolve_program(argv[0])
    if program is None:
        raise ToolRefused(f"the program `{argv[0]}` of `{spelling}` is not found")
    return [program, *argv[1:]]


async def run_tool(tool: Tool, raw_arguments: str, workspace: Workspace,
                   isolation: Isolation, mcp: McpServers | None = None) -> ToolOutcome:
    """Run one tool call; every refusal and failure is the outcome's `error`."""
    started = time.perf_counter()

    def took() -> float:
        return round((time.perf_counter() - started) * 1000, 3)

    try:
        args = _arguments(raw_arguments)
        if tool.kind == "workspace":
            return ToolOutcome(builtin(tool.spelling, args, workspace), duration_ms=took())
        if isinstance(tool.provider, CommandSpec):
            argv = command_argv(tool.spelling, tool.provider, args)
            result = await run_command(argv, workspace.root, timeout=tool.provider.timeout,
                                       max_output=tool.provider.max_output,
                                       isolation=isolation,
                                       max_disk=tool.provider.max_disk)
            error = None
            if result.over_quota:
                error = f"`{tool.spelling}` wrote more than the workspace's disk quota " \
                        f"({tool.provider.max_disk} bytes) and was stopped\n{result.text()}"
            elif result.timed_out:
                error = f"`{tool.spelling}` ran past its timeout ({tool.provider.timeout:g} s) " \
                        f"and was killed\n{result.text()}"
            return ToolOutcome(result.text(), error, isolation, result.exit_code, took())
        if isinstance(tool.provider, McpToolSpec):
            if mcp is None:
                raise ToolRefused(f"`{tool.spelling}`: this run has no MCP client")
            text, failed = await mcp.call(tool.provider, args)
            return ToolOutcome(_clip(text) if not failed else "",
                               _clip(text) if failed else None, duration_ms=took())
        if isinstance(tool.provider, PythonToolSpec):
            value = await _call_python(tool.provider, args)
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                                   default=str)
            return ToolOutcome(_clip(text), duration_ms=took())
        raise ToolRefused(f"`{tool.spelling}` has no implementation in this run")
    except McpUnavailable as failed:
        return ToolOutcome("", f"`{tool.spelling}`: {failed}", duration_ms=took())
    except (ToolRefused, PathRefused) as refused:
        return ToolOutcome("", str(refused), duration_ms=took())
    except TimeoutError:
        return ToolOutcome("", f"`{tool.spelling}` did not answer within "
                           f"{PYTHON_TIMEOUT_S:g} s", duration_ms=took())
    except Exception as error:  # a user's tool may raise anything: the model reads it
        return ToolOutcome("", f"{type(error).__name__}: {error}", duration_ms=took())


async def _call_python(spec: PythonToolSpec, args: Mapping[str, Any]) -> Any:
    async def call() -> Any:
        result = spec.function(**args)
        if inspect.isawaitable(result):
            result = await result
        return result

    return await asyncio.wait_for(call(), PYTHON_TIMEOUT_S)


def tool_for(name: str, tools: Mapping[str, Tool]) -> Tool | None:
    """The slot's tool a model's call names: by its function name or its spelling."""
    if name in tools:
        return tools[name]
    return next((tool for tool in tools.values() if tool.function_name == name), None)


def describe_tools(tools: Mapping[str, Tool]) -> list[dict[str, Any]]:
    """The tools as plain data for the trace (no code)."""
    out = []
    for tool in tools.values():
        entry: dict[str, Any] = {"tool": tool.spelling, "kind": tool.kind, "writes": tool.writes}
        if isinstance(tool.provider, CommandSpec):
            entry["command"] = list(tool.provider.command)
        elif isinstance(tool.provider, PythonToolSpec):
            entry["python"] = tool.provider.ref
        elif isinstance(tool.provider, McpToolSpec):
            entry["mcp"] = ({"url": tool.provider.url} if tool.provider.url is not None
                            else {"server": list(tool.provider.server)})
            entry["mcp"]["tool"] = tool.provider.tool
            if tool.provider.separate:
                entry["mcp"]["separate"] = True
        out.append(entry)
    return out


def slot_tools(declared: list[tuple[str, bool]], providers: Mapping[str, Provider],
               owner: str | None = None) -> dict[str, Tool]:
    """A slot's tools from its declarations `(spelling, writes)` and the run's providers;
    a `separate` MCP tool is `owner`'s own server."""
    out: dict[str, Tool] = {}
    for spelling, writes in declared:
        found = parse_tool_name(spelling)
        if found is None:
            continue
        provider = providers.get(spelling)
        if isinstance(provider, McpToolSpec) and provider.separate:
            provider = replace(provider, owner=owner)
        out[spelling] = Tool(spelling, found.kind, writes, provider)
    return out


def separate_providers(providers: Mapping[str, Provider]) -> frozenset[str]:
    """The external tools this run serves `separate`ly: a server process per slot."""
    return frozenset(spelling for spelling, provider in providers.items()
                     if isinstance(provider, McpToolSpec) and provider.separate)
