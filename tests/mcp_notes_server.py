"""A small MCP server for tests/test_mcp_tools.py and tests/test_mcp_http.py (the official
`mcp` SDK): notes kept for the life of the process, and a tool that kills it. Over stdio by
default; `--http PORT` serves streamable HTTP on 127.0.0.1:PORT/mcp instead."""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")
NOTES: list[str] = []


@server.tool()
def remember(text: str) -> str:
    """Keep a note; say how many are kept."""
    NOTES.append(text)
    return f"{len(NOTES)} note(s) kept"


@server.tool()
def recall() -> list[str]:
    """Every note kept so far."""
    return list(NOTES)


@server.tool()
def crash() -> str:
    """Stop the server at once (a server that dies mid-run)."""
    os._exit(3)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
