"""What the sandbox tests share besides their fixtures (`mode` and `workspace`, in
conftest.py): both isolation modes, and running one tool in a workspace. The run time
is imported when a tool runs, not when conftest.py reads `MODES`."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prose.runtime.sandbox import Isolation
    from prose.runtime.toolbox import Tool, ToolOutcome
    from prose.runtime.workspace import Workspace

MODES: list[Isolation] = ["bwrap", "context-only"]


def call(tool: Tool, args: dict[str, object], workspace: Workspace,
         mode: Isolation) -> ToolOutcome:
    from prose.runtime.toolbox import run_tool

    return asyncio.run(run_tool(tool, json.dumps(args), workspace, mode))
