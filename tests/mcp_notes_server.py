"""A small MCP server over stdio for tests/test_mcp_tools.py (the official `mcp` SDK):
notes kept for the life of the process, and a tool that kills it."""

from __future__ import annotations

import os

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
    server.run()
