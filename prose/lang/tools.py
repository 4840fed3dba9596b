"""Tools: what a slot may use while it answers a call, and who sees what over them.

One definition of each rule, for the linter (`prose.check`), the run time
(`prose.runtime.agent`) and the audit (`prose.ledger`):

- the spellings a pattern file declares (`tools:` under a slot): the built-in
  workspace tools (`list`, `read`, `grep`: they need no provider), `cli:NAME` (a
  command the instance file allows, run inside the call's workspace) and
  `mcp:NAME` (an external tool: an MCP server or a Python callable the instance
  names); each is read-only unless marked `(writes)`;
- the labels over a tool call: the arguments carry the call's label (the model
  that wrote them was given it); what a workspace tool or a workspace command
  returns carries the workspace's label (the call's inputs it was laid out
  from); what an external tool returns carries a new source, the tool itself;
- read-only calls: a call of a slot none of whose tools writes is an inspection (a
  review); what it was given must be the same after it as before. A workspace file
  laid out from an input and changed or removed during the call (a command that
  "repaired" the candidate) invalidates the call's answer (`altered_inputs`), seed
  002's rule that a review counts only for the unchanged candidate it read;
- written files: an agent whose `ensures:` says `written files` returns what it wrote
  under `out/` of its workspace (a map of paths to contents) as its value. They carry
  what the call's answer carries (`written_files_label`): the call itself and
  everything its workspace held, since the model that wrote them read it all; a
  later call given them (a reviewer's workspace) is judged by that label as for any
  input, so a hidden input cannot reach a reader by way of a file;
- channels: an external tool declared for two slots, one of which may write
  through it, lets the writer's text reach the reader (`shared_channels`), unless
  the instance binds it `separate`: each slot then reaches a server (a store) of its
  own, and no declaration of that tool reaches another slot's (`ToolUse.separate`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from prose.lang.flows import Label

ToolKind = Literal["workspace", "command", "external"]

# The built-in workspace tools and what each may do.
BUILTIN_TOOLS: dict[str, str] = {
    "list": "list the files of the call's workspace",
    "read": "read one file of the call's workspace",
    "grep": "search the files of the call's workspace for a regular expression",
    "write": "write one text file in the call's workspace (under `out/` to return it)",
}
# The built-in tools that write (inside the call's own workspace only): always `writes`.
WRITING_BUILTINS = frozenset({"write"})
# An agent whose `ensures:` begins with these words returns the files it wrote under
# `OUT_FOLDER` of its workspace as its value: a map of their paths to their contents.
WRITTEN_FILES = re.compile(r"^\s*`?written files`?(?=$|[\s:,.(])", re.IGNORECASE)
OUT_FOLDER = "out"
PREFIXES: dict[str, ToolKind] = {"cli": "command", "mcp": "external"}
WRITES_MARKERS = frozenset({"writes", "writing", "write"})
READ_MARKERS = frozenset({"read-only", "readonly", "reads"})
# `cli:check (optional)`: an instance may leave the tool out; the slot is then not offered it.
OPTIONAL_MARKERS = frozenset({"optional"})
# A command template's placeholder, without a pattern of its own in the instance: a word or
# a relative path, never an option (`-x`); `..` is refused besides (`toolbox.command_argv`).
DEFAULT_PARAM = r"^[A-Za-z0-9_][A-Za-z0-9_./-]*$"
# How many bytes one call's workspace may grow by (`write`, a declared command; an
# instance's `max_disk:` sets a command's): past it a write is refused, a command stopped.
DEFAULT_MAX_DISK = 64 * 1024 * 1024
# The source an external tool's result carries: `tool:mcp:memory`.
TOOL_SOURCE_PREFIX = "tool:"


@dataclass(frozen=True, slots=True)
class ToolName:
    """A declared tool name split: `cli:pytest` is kind `command`, name `pytest`."""

    spelling: str
    kind: ToolKind
    name: str


def parse_tool_name(spelling: str) -> ToolName | None:
    """The kind of a declared tool spelling, or None for one the language does not know."""
    if spelling in BUILTIN_TOOLS:
        return ToolName(spelling, "workspace", spelling)
    prefix, sep, name = spelling.partition(":")
    kind = PREFIXES.get(prefix)
    if not sep or kind is None or not name or not all(c.isalnum() or c in "_-." for c in name):
        return None
    return ToolName(spelling, kind, name)


def needs_provider(spelling: str) -> bool:
    """Whether the instance file must say what implements the tool (all but the built-ins)."""
    return spelling not in BUILTIN_TOOLS


def returns_written_files(ensures: str | None) -> bool:
    """Whether a slot's `ensures:` says it returns the files it writes (`written files`)."""
    return ensures is not None and WRITTEN_FILES.match(ensures) is not None


def written_files_label(answer_label: Label) -> Label:
    """What the files an agent returns carry: its answer's label (see the module). A file is
    text the model wrote after reading its workspace, so nothing less is sound; nothing more
    is needed, since the workspace held only the call's inputs."""
    return answer_label


def must_keep_inputs(writes: Iterable[bool]) -> bool:
    """Whether a call of a slot whose tools write as `writes` says must leave its inputs
    unchanged: true when none of its tools writes (see the module)."""
    return not any(writes)


def altered_inputs(changes: Mapping[str, Iterable[str]]) -> list[str]:
    """The laid-out files a call changed or removed (files it added are its own: a test
    run's report, a scratch file), from a workspace's `changes`."""
    return sorted({*changes.get("removed", ()), *changes.get("changed", ())})


def tool_source(spelling: str) -> str:
    """The source an external tool's result carries (a new source: the tool itself)."""
    return f"{TOOL_SOURCE_PREFIX}{spelling}"


def argument_label(call_label: Label) -> Label:
    """A tool call's arguments carry the label of the call whose model wrote them."""
    return call_label


def result_label(kind: ToolKind, spelling: str, workspace_label: Label) -> Label:
    """What a tool's result carries: the workspace's label for a workspace tool or command
    (they read only what the call was given), a new source for an external tool."""
    if kind == "external":
        source = tool_source(spelling)
        return Label(provenance=frozenset({source}), transitive=frozenset({source}))
    return workspace_label


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One slot's declaration of one tool: `writes` when it may write through it;
    `separate` when the instance gives each slot its own server or store for the tool
    (`separate: true`), so that this declaration shares the tool with no other slot."""

    slot: str
    spelling: str
    writes: bool
    separate: bool = False


def declared_uses(declarations: Iterable[tuple[str, str, bool]],
                  separate: Iterable[str] = ()) -> list[ToolUse]:
    """The uses of `(slot, spelling, writes)` declarations, given the external tools the
    instance binds `separate` (a server or store per slot)."""
    apart = frozenset(separate)
    return [ToolUse(slot, spelling, writes, spelling in apart)
            for slot, spelling, writes in declarations]


def reach_one_store(first: ToolUse, second: ToolUse) -> bool:
    """Whether two declarations of two slots reach one store: the same external tool,
    not bound `separate` by the instance."""
    return (first.spelling == second.spelling and first.slot != second.slot
            and not (first.separate or second.separate))


@dataclass(frozen=True, slots=True)
class Channel:
    """An external tool through which `writer`'s text can reach `reader`."""

    tool: str
    writer: str
    reader: str


def shared_channels(uses: Iterable[ToolUse]) -> list[Channel]:
    """Every (writer, reader) pair of distinct slots sharing an external tool, where the
    writer may write through it. Workspace tools and commands are per call: never shared;
    nor is a tool the instance binds `separate` (a server or store per slot)."""
    by_tool: dict[str, list[ToolUse]] = {}
    for use in uses:
        found = parse_tool_name(use.spelling)
        if found is not None and found.kind == "external":
            by_tool.setdefault(use.spelling, []).append(use)
    out: list[Channel] = []
    for tool, declared in by_tool.items():
        for writer in declared:
            if not writer.writes:
                continue
            for reader in declared:
                if reach_one_store(writer, reader):
                    out.append(Channel(tool, writer.slot, reader.slot))
    return out


def readers_of(tool: str, uses: Iterable[ToolUse], besides: str) -> list[str]:
    """The slots other than `besides` that declare the external tool `tool` and reach the
    same store through it (none when the instance binds the tool `separate`)."""
    return sorted({use.slot for use in uses if use.spelling == tool and use.slot != besides
                   and not use.separate})


def refused_call(
    tool: str,
    caller: str,
    writes: bool,
    argument: Label,
    uses: Iterable[ToolUse],
    hidden_from: Mapping[str, frozenset[str]],
) -> tuple[str, str] | None:
    """The (reader, hidden source) that makes a call of a shared external tool a leak, or
    None. Policy before the tool runs (CaMeL's rule): `caller` sends arguments carrying
    `argument`; another slot using the tool that must never see a source they carry (or,
    when the caller writes through the tool, the caller itself) could read them."""
    carried = argument.provenance | argument.transitive
    if writes:
        carried = carried | {caller}
    for reader in readers_of(tool, uses, caller):
        for source in sorted(carried & hidden_from.get(reader, frozenset())):
            return reader, source
    return None
