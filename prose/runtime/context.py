"""What one run shares across every branch: the pattern, the services and the meters.

`RunContext` is built once per pattern instance (a nested pattern gets its
own, sharing the parent's client, trace, budget, concurrency cap and cache).
`SharedResources` is what several runs side by side share (the rows of
`prose batch`): one client, one cap on calls in flight, one cache, one budget
pool and the pattern files read once; each run keeps its own trace and totals.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from prose.lang.gates import GateHistory
from prose.lang.policy import Policy
from prose.runtime.budget import Budget, Limits
from prose.runtime.cache import KeyMaker
from prose.runtime.content import ContentIndex
from prose.runtime.errors import BudgetExceeded
from prose.runtime.prompts import PromptBuilder
from prose.runtime.services import SlotBinding
from prose.runtime.trace import Trace
from prose.source import Span

if TYPE_CHECKING:
    from prose.llm.types import ChatRequest, ChatResponse
    from prose.pattern_file import PatternFiles
    from prose.runtime.call_site import CallSite
    from prose.runtime.services import PatternService
    from prose.runtime.values import Value
    from prose.spec.model import PatternSpec, Slot
    from prose.syntax.nodes import Call, Program

DEFAULT_CONCURRENCY = 8


def _pattern_files() -> PatternFiles:
    from prose.pattern_file import PatternFiles

    return PatternFiles()


class Client(Protocol):
    """The LLM client protocol (`prose.llm.types.LLMClient`)."""

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


class NestedRunner(Protocol):
    """Runs a nested pattern instance as a call (`prose.runtime.runner.run_nested`)."""

    async def __call__(
        self,
        parent: RunContext,
        service: PatternService,
        slot: str,
        inputs: dict[str, Any],
        node: Call,
    ) -> Value: ...


class Cache(Protocol):
    def get(self, key: str) -> Any: ...
    def put(self, key: str, response: Any) -> None: ...


@dataclass
class Shared:
    """What every pattern instance of one run shares (a nested pattern included)."""

    client: Client
    trace: Trace
    budget: Budget
    semaphore: asyncio.Semaphore
    keys: KeyMaker
    prompts: PromptBuilder
    cache: Cache | None = None
    default_model: str = ""
    judge_model: str = ""
    # The models a pattern may ask for (`prose.lang.model_choice`): those the person running
    # it chose or allowed.
    granted_models: frozenset[str] = frozenset()
    scripted: bool = False
    backoff_base_s: float = 1.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    # Called with ("start"|"end", details) for live progress lines.
    progress: Callable[[str, Mapping[str, Any]], None] | None = None
    # Set by `--show-prompts`: every call's messages are collected here.
    shown: list[dict[str, Any]] | None = None
    # How a call of a nested pattern runs it; handed in by the runner, so the
    # call path below it never imports the runner back.
    run_nested: NestedRunner | None = None
    # Pattern files read once per run (a nested pattern's, however often it is called).
    files: PatternFiles = field(default_factory=lambda: _pattern_files())
    # Where `use` targets may be (`prose.uses.use_roots` of the pattern the run started with).
    roots: tuple[Path, ...] = ()
    # Seconds the model client took to start (LiteLLM's import, the router), before the
    # first call; None when this run did not start it (`runner._start_client`).
    client_start_s: float | None = None
    # The run's desk for slots bound to a person (`prose.runtime.people.Desk`): the answers
    # given so far, the questions waiting, the terminal to ask on.
    people: Any = None
    # Agents (docs/agents.md): what implements each declared `cli:`/`mcp:` tool
    # (`prose.runtime.toolbox.Provider` by spelling), how commands are isolated
    # (`prose.runtime.sandbox.isolation_mode`), and whether workspaces are kept.
    tools: Mapping[str, Any] = field(default_factory=dict)
    isolation: str = "context-only"
    keep_workspaces: bool = False
    # The run's MCP servers (`prose.runtime.mcp_client.McpServers`), when a tool uses one.
    mcp: Any = None


class BudgetPool(Protocol):
    """A budget several runs draw on (a batch's `--max-calls`, `--max-cost`, `--max-tokens`).

    `admit` reserves one call or raises `BudgetExceeded`; `record` adds a call's usage.
    A local `Budget` is one; `prose.batch.ray_executor` has one shared across processes.
    """

    def admit(self, what: str, span: Span | None = None) -> None: ...
    def record(self, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None: ...


class PooledBudget(Budget):
    """One run's budget (its steps, time and totals) whose calls, tokens and cost also count
    against a pool shared with other runs: a call is admitted only when both have room."""

    def __init__(self, limits: Limits, clock: Callable[[], float], pool: BudgetPool) -> None:
        super().__init__(limits, clock)
        self.pool = pool

    def admit(self, what: str, span: Span | None = None) -> None:
        super().admit(what, span)
        try:
            self.pool.admit(what, span)
        except BudgetExceeded as error:
            self.calls -= 1  # reserved above, never sent
            self.stopped = error.budget
            raise

    def record(self, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        super().record(prompt_tokens, completion_tokens, cost_usd)
        self.pool.record(prompt_tokens, completion_tokens, cost_usd)


@dataclass
class SharedResources:
    """What several runs share (`RunOptions.resources`; `prose.runtime.runner.shared_resources`
    builds it once): the client, the cap on calls in flight, the response cache, the budget
    pool, the pattern files read once, the prompt templates and each pattern's policy,
    compiled once."""

    client: Client
    semaphore: asyncio.Semaphore
    files: PatternFiles
    prompts: PromptBuilder
    cache: Cache | None = None
    pool: BudgetPool | None = None
    # (pattern path, strict) -> its compiled policy
    policies: dict[tuple[str, bool | None], Policy] = field(default_factory=dict)
    # What every run would work out again the same way (`runner.memo`): a pattern's `use`
    # roots, the trace's secrets, the models and policy that `run_start` records.
    memo: dict[tuple[Any, ...], Any] = field(default_factory=dict)


@dataclass
class RunContext:
    """One pattern instance: its program and spec, bindings, policy and the shared meters."""

    shared: Shared
    program: Program
    spec: PatternSpec | None
    source: str
    filename: str
    bindings: Mapping[str, SlotBinding]
    policy: Policy
    list_slots: frozenset[str] = frozenset()
    # Names bound anywhere in the program (let, loop and catch variables).
    declared: frozenset[str] = frozenset()
    # Prefix of trace paths and slot names for a nested pattern (`outer_slot>`).
    prefix: str = ""
    aliases: dict[str, str] = field(default_factory=dict)
    # The pattern files from the run's own down to this one (resolved), for `use` cycles.
    ancestry: tuple[Path, ...] = ()
    # What the control-flow invariants read: approvals, inputs given, who ran (`gates.py`).
    gate_history: GateHistory = field(init=False, default_factory=GateHistory)
    # `only grows` lists, from the policy (its one carrier).
    only_grows: frozenset[str] = field(init=False, default=frozenset())
    # The spec's declaration of each slot called so far (asked on every call).
    _spec_slots: dict[str, Slot | None] = field(init=False, default_factory=dict, repr=False)
    # What the slots wrote, for the content check at the message boundary.
    content: ContentIndex = field(init=False, repr=False)
    # The call sites called so far, compiled at their first call (`prose.runtime.call_site`),
    # by the identity of the `call` node and of the service it reached, and the slot.
    call_sites: dict[tuple[int, int, str], CallSite] = field(init=False, default_factory=dict,
                                                             repr=False)

    def __post_init__(self) -> None:
        self.content = ContentIndex(self.policy, self.source)
        self.only_grows = frozenset(self.policy.only_grows)

    def spec_slot(self, slot: str) -> Slot | None:
        """The spec's declaration of `slot`, if any (looked up once per run)."""
        try:
            return self._spec_slots[slot]
        except KeyError:
            found = self.spec.slot(slot) if self.spec is not None else None
            self._spec_slots[slot] = found
            return found

    def slot_ensures(self, slot: str) -> str | None:
        spec_slot = self.spec_slot(slot)
        return spec_slot.ensures if spec_slot is not None else None

    def slot_schema(self, slot: str) -> dict[str, str] | None:
        spec_slot = self.spec_slot(slot)
        return dict(spec_slot.output_schema) if spec_slot and spec_slot.output_schema else None
