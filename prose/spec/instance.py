"""The instance model (LANGUAGE.md 1.2): a `*.yaml` file that binds a pattern so it can run.

An instance names its pattern (a path relative to the instance file, or a
library name), binds every slot to a service under `with`, may set `config`
and may supply `inputs`. A service is a model service, a nested pattern
instance, a Python callable, or a person.

Python callables exist only here. The pattern spec model
(`prose.spec.model.PatternSpec`) has no field that can name one: a pattern
file is data and must not be able to run code, so naming code to run is left
to the instance file and the command line, which the user controls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from prose.diagnostics.model import Diagnostic, Severity
from prose.lang.tools import DEFAULT_MAX_DISK
from prose.source import Span
from prose.spec.model import PatternSpec


def resolve_pattern(reference: str, base: Path) -> Path | None:
    """The pattern file a `pattern:` reference names, or None if there is none.

    A reference with a `/` or ending in `.md` is a path relative to `base` (the
    instance file's folder); a bare name is looked up in the pattern library
    (`prose.resources.patterns_dir()`, as `NAME.prose.md`).
    """
    pathlike = "/" in reference or "\\" in reference or reference.endswith(".md")
    if pathlike:
        candidate = Path(reference) if Path(reference).is_absolute() else base / reference
        if is_file(candidate):
            return candidate
        if "/" in reference or "\\" in reference:
            return None
    from prose.resources import patterns_dir  # late: tests may replace it

    try:
        library = patterns_dir()
    except FileNotFoundError:
        return None
    name = reference if reference.endswith(".md") else f"{reference}.prose.md"
    candidate = library / name
    return candidate if is_file(candidate) else None


def is_file(path: Path) -> bool:
    """Whether `path` is a file; False for a name the system refuses (too long, a NUL byte)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Entry(_Frozen):
    """One `config` or `inputs` item with the spans of its key and its value."""

    name: str
    value: Any = None
    span: Span
    value_span: Span


class ModelService(_Frozen):
    """`{ model: ALIAS, prompt: TEXT | role: FILE, schema: {field: type}, max_tokens: N }`.

    `model` is a router alias or a LiteLLM model name; `role_path` is the role
    file resolved relative to the instance file; `output_schema` is `schema:`.
    A bare string binding (`critic: fast`) is a model service with that model.
    """

    kind: Literal["model"] = "model"
    model: str
    prompt: str | None = None
    role: str | None = None
    role_path: str | None = None
    output_schema: dict[str, str] | None = None
    max_tokens: int | None = None  # the cap on each reply's tokens (the provider's max_tokens)
    span: Span


class PythonService(_Frozen):
    """`{ python: "package.module:function" }`: a callable, allowed only in instance files."""

    kind: Literal["python"] = "python"
    python: str
    module: str
    function: str
    span: Span


class PatternService(_Frozen):
    """`{ pattern: REF, with: {...}, config: {...}, rename: {...} }`: a nested pattern instance.

    `pattern_path` is the resolved file (None when it cannot be found).
    """

    kind: Literal["pattern"] = "pattern"
    pattern: str
    pattern_path: str | None = None
    bindings: dict[str, Binding] = Field(default_factory=dict)
    invalid_slots: list[str] = Field(default_factory=list)
    with_span: Span | None = None
    config: list[Entry] = Field(default_factory=list)
    # `rename: {CALL_INPUT: NESTED_INPUT}`: a call's input goes to the nested pattern
    # under another name (the nested pattern's own parameter name).
    rename: list[Entry] = Field(default_factory=list)
    span: Span

    @property
    def config_values(self) -> dict[str, Any]:
        return {entry.name: entry.value for entry in self.config}

    @property
    def renames(self) -> dict[str, str]:
        return {entry.name: str(entry.value) for entry in self.rename if isinstance(entry.value, str)}


class PersonService(_Frozen):
    """`{ person: NAME }` or `{ person: { name: NAME, may_answer: [...], prompt: TEXT } }`.

    A person answers the slot (docs/people.md). `name` says who the person is (in
    the question, and for `--require-distinct-models`); `may_answer` lists who may
    give the answer (empty: anyone; `person: NAME` alone: NAME only); `prompt` is
    what a model service's prompt would be, shown above the question.
    """

    kind: Literal["person"] = "person"
    name: str
    may_answer: list[str] = Field(default_factory=list)
    prompt: str | None = None
    span: Span


class CommandTool(_Frozen):
    """`cli:NAME: {command: [ARG, ...], params: {P: REGEX}, timeout: S, max_output: N,
    max_disk: N}`.

    A command is an argument list, never shell text. An item `{P}` is a placeholder the
    model fills with one whole argument matching `params[P]` (default
    `prose.lang.tools`-style safe words: no leading `-`, no `..`); nothing else of the
    command is the model's. It runs inside the call's workspace (docs/agents.md).
    """

    kind: Literal["command"] = "command"
    tool: str
    command: list[str]
    params: dict[str, str] = Field(default_factory=dict)
    timeout: float = 30.0
    max_output: int = 65536
    max_disk: int = DEFAULT_MAX_DISK
    span: Span


class PythonTool(_Frozen):
    """`mcp:NAME: {python: "pkg.mod:func", description: TEXT}`: an external tool answered by a
    Python callable (keyword arguments in, a JSON-like value out)."""

    kind: Literal["python"] = "python"
    tool: str
    python: str
    module: str
    function: str
    description: str | None = None
    parameters: dict[str, str] = Field(default_factory=dict)
    span: Span


class McpTool(_Frozen):
    """`mcp:NAME: {server: [PROGRAM, ARG...], tool: TOOL, timeout: S}`: the tool `TOOL`
    (default NAME) of an MCP server started over stdio in the instance's folder; or
    `{url: http://HOST:PORT/PATH, ...}`: of the server listening there (streamable HTTP).
    `separate: true` (stdio only): each slot gets a process of its own."""

    kind: Literal["mcp"] = "mcp"
    tool: str
    server: list[str] = Field(default_factory=list)
    url: str | None = None
    server_tool: str
    timeout: float = 30.0
    # `separate: true`: a server process per slot using the tool, so that what one slot
    # stores no other reads (`prose.lang.tools.ToolUse.separate`).
    separate: bool = False
    span: Span


ToolProvider = Annotated[CommandTool | PythonTool | McpTool, Field(discriminator="kind")]


Service = Annotated[
    ModelService | PatternService | PythonService | PersonService, Field(discriminator="kind")
]


class Binding(_Frozen):
    """A `with` entry: the slot, its service (or list of services), and where they are written."""

    slot: str
    value: Service | list[Service]
    span: Span
    value_span: Span
    # A map-valued slot's entry names, in order (`value` holds one service per entry).
    keys: list[str] | None = None

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, list)

    @property
    def services(self) -> list[ModelService | PatternService | PythonService | PersonService]:
        """The bound services as a list (one item for a single binding)."""
        return list(self.value) if isinstance(self.value, list) else [self.value]


class Instance(_Frozen):
    """A parsed instance file.

    `pattern` is the reference as written, `pattern_path` the resolved pattern
    file (None when not found). `invalid_slots` lists slots whose binding is
    written but is no valid service (already reported; not reported unbound). `config` and `inputs` keep each key's spans;
    `config_values` and `input_values` give plain mappings.
    """

    path: str
    span: Span
    pattern: str | None = None
    pattern_path: str | None = None
    pattern_span: Span | None = None
    bindings: dict[str, Binding] = Field(default_factory=dict)
    invalid_slots: list[str] = Field(default_factory=list)
    with_span: Span | None = None
    config: list[Entry] = Field(default_factory=list)
    config_span: Span | None = None
    inputs: list[Entry] = Field(default_factory=list)
    inputs_span: Span | None = None
    # `allow_models:`: models the pattern may ask for (`prose.lang.model_choice`).
    allow_models: list[str] = Field(default_factory=list)
    # `tools:`: what implements the `cli:` and `mcp:` tools the pattern's slots declare.
    tools: dict[str, ToolProvider] = Field(default_factory=dict)
    tools_span: Span | None = None

    @property
    def config_values(self) -> dict[str, Any]:
        return {entry.name: entry.value for entry in self.config}

    @property
    def input_values(self) -> dict[str, Any]:
        return {entry.name: entry.value for entry in self.inputs}


class InstanceResult(_Frozen):
    """What `load_instance` returns.

    `diagnostics` are about the instance file (and its nested services);
    `spec_diagnostics` are those of the pattern file(s) it loaded.
    """

    instance: Instance | None
    spec: PatternSpec | None = None
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    spec_diagnostics: list[Diagnostic] = Field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def ok(self) -> bool:
        """True when the instance and its pattern loaded and nothing is an error."""
        spec_errors = any(d.severity is Severity.ERROR for d in self.spec_diagnostics)
        return (
            self.instance is not None
            and self.spec is not None
            and not self.errors
            and not spec_errors
        )


PatternService.model_rebuild()
Binding.model_rebuild()
