"""The run's MCP servers (docs/agents.md): external tools over the official `mcp` SDK.

An instance implements `mcp:NAME` with a server started over stdio
(`{server: [PROGRAM, ARG...], tool: TOOL}`) or one already listening at an address, over
streamable HTTP (`{url: http://HOST:PORT/mcp, tool: TOOL}`). Each server is one process
(or one HTTP session) for the whole run, started on first use: the tools of one server share its state (a memory server
remembers across calls and slots, which is why such a tool is a channel,
`prose.lang.tools.shared_channels`). The SDK's contexts must be entered and left in one
task, so each server is owned by a task of its own that serves requests from a queue.
`mcp` is imported here only, when a run first uses a server (the `mcp` extra);
`prose lint` and the language server never import it.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prose.runtime.sandbox import resolve_program

START_TIMEOUT_S = 30.0


class McpUnavailable(Exception):
    """The server could not be started or stopped answering; the message says why."""


@dataclass(frozen=True)
class McpToolSpec:
    """One tool of an MCP server: `server` is its command line, run in `cwd` (stdio), or,
    when `url` is given, the server is the one listening there (streamable HTTP)."""

    server: tuple[str, ...]
    tool: str
    cwd: str | None = None
    timeout: float = 30.0
    url: str | None = None
    # `separate`: a process per slot (`owner`), so no slot reads what another stored.
    separate: bool = False
    owner: str | None = None


_Request = tuple[str, Any, "asyncio.Future[Any]"]


class _Server:
    def __init__(self, command: tuple[str, ...], cwd: str | None, url: str | None) -> None:
        self.command, self.cwd, self.url = command, cwd, url
        self.requests: asyncio.Queue[_Request | None] = asyncio.Queue()
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.failure: str | None = None
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client
            from mcp.client.streamable_http import streamable_http_client
        except ImportError:
            self._fail("the `mcp` package is not installed (pip install 'prose[mcp]')")
            return
        shown = self.url if self.url is not None else " ".join(self.command)
        try:
            if self.url is not None:
                async with streamable_http_client(self.url) as streams, \
                        ClientSession(streams[0], streams[1]) as session:
                    await self._start(session)
            else:
                # A bare program name is looked up as a command's is: the run's Python
                # first (`python` is the interpreter prose runs in), then the system.
                program = self.command[0]
                if "/" not in program:
                    program = resolve_program(program) or program
                params = StdioServerParameters(command=program,
                                               args=list(self.command[1:]), cwd=self.cwd)
                with open(os.devnull, "w", encoding="utf-8") as quiet:
                    async with stdio_client(params, errlog=quiet) as (read, write), \
                            ClientSession(read, write) as session:
                        await self._start(session)
        except asyncio.CancelledError:
            self._fail("the run ended")
            raise
        except BaseException as error:  # the SDK wraps a dead server in exception groups
            self._fail(f"the MCP server `{shown}` stopped: {_reason(error)}")

    async def _start(self, session: Any) -> None:
        await session.initialize()
        self.ready.set_result(None)
        await self._serve(session)

    async def _serve(self, session: Any) -> None:
        while True:
            item = await self.requests.get()
            if item is None:
                return
            kind, payload, future = item
            try:
                if kind == "list":
                    result: Any = await session.list_tools()
                else:
                    result = await session.call_tool(payload[0], payload[1])
            except Exception as error:
                if not future.done():
                    future.set_exception(McpUnavailable(_reason(error)))
                raise
            if not future.done():
                future.set_result(result)

    def _fail(self, message: str) -> None:
        self.failure = message
        if not self.ready.done():
            self.ready.set_exception(McpUnavailable(message))
            self.ready.exception()  # retrieved: a server nobody waits on is no warning
        while not self.requests.empty():
            item = self.requests.get_nowait()
            if item is not None and not item[2].done():
                item[2].set_exception(McpUnavailable(message))

    async def ask(self, kind: str, payload: Any, timeout: float) -> Any:
        await asyncio.wait_for(asyncio.shield(self.ready), START_TIMEOUT_S)
        if self.failure is not None or self.task.done():
            raise McpUnavailable(self.failure or "the MCP server is not running")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self.requests.put((kind, payload, future))
        done, _ = await asyncio.wait({future, self.task}, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if future in done:
            return future.result()
        if self.task in done:
            raise McpUnavailable(self.failure or "the MCP server stopped")
        future.cancel()
        raise McpUnavailable(f"no answer within {timeout:g} s")


def _reason(error: BaseException) -> str:
    inner = getattr(error, "exceptions", None)
    if inner:
        return _reason(inner[0])
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class McpServers:
    """The MCP servers of one run, by command line and folder (one process each), and by
    slot for a `separate` tool (a process per slot)."""

    def __init__(self) -> None:
        self._servers: dict[tuple[tuple[str, ...], str | None, str | None, str | None],
                            _Server] = {}

    def _server(self, spec: McpToolSpec) -> _Server:
        key = (spec.server, spec.cwd, spec.url, spec.owner if spec.separate else None)
        if key not in self._servers:
            self._servers[key] = _Server(spec.server, spec.cwd, spec.url)
        return self._servers[key]

    async def describe(self, spec: McpToolSpec) -> tuple[str | None, dict[str, Any] | None]:
        """The tool's description and input schema as the server lists them."""
        listed = await self._server(spec).ask("list", None, spec.timeout)
        for tool in getattr(listed, "tools", []):
            if tool.name == spec.tool:
                schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)
                return tool.description, dict(schema) if isinstance(schema, Mapping) else None
        raise McpUnavailable(f"the MCP server has no tool `{spec.tool}`")

    async def call(self, spec: McpToolSpec, arguments: Mapping[str, Any]) -> tuple[str, bool]:
        """The tool's result as text, and whether the server says it is an error."""
        result = await self._server(spec).ask("call", (spec.tool, dict(arguments)),
                                               spec.timeout)
        parts = []
        for item in getattr(result, "content", None) or []:
            text = getattr(item, "text", None)
            dump = getattr(item, "model_dump", None)
            parts.append(text if isinstance(text, str) else json.dumps(
                dump() if callable(dump) else str(item), default=str))
        return "\n".join(parts), bool(getattr(result, "is_error", False)
                                      or getattr(result, "isError", False))

    async def close(self) -> None:
        """Stop every server (at the end of the run)."""
        for server in self._servers.values():
            if not server.task.done():
                await server.requests.put(None)
        tasks = [server.task for server in self._servers.values()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=5)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        self._servers.clear()
