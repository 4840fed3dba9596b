"""Sessions and agents (docs/language.md, "Sessions and agents").

`agent NAME:` defines a model service for one-off sub-agents: its `model` is
the model (a router alias or LiteLLM name; default: the run's), its `prompt`
the role (system) prompt. A session is a model call made the way `call`
makes one (policy, budget, retries, trace, script) under the name of its
agent, or `session` for an inline `session "prompt"`: a script gives its
replies under that name (`OUTER.name` in a nested pattern). The session's `prompt` (the inline string or the `prompt:`
property) is the call's `prompt`; every other property but the reserved
ones (`model`, `retry`, `backoff`, `schema`) is an input, `context` too.

A `persist` agent remembers, for the run, what each of its sessions was
given and answered; `resume: agent` sends that memory as its `memory` input
(a list of `{given, reply}` objects, oldest first) and adds to it. Memory
does not outlive the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prose.lang import flows
from prose.lang.channels import MEMORY_INPUT
from prose.lang.flows import CONCRETE
from prose.lang.properties import RESERVED_PROPERTIES
from prose.runtime import pc
from prose.runtime import values as v
from prose.runtime.calls import call_options
from prose.runtime.errors import NameNotDefined, ValueTypeError
from prose.runtime.gates import gated_call
from prose.runtime.scope import Scope
from prose.runtime.services import ModelService, scripted
from prose.runtime.values import Service, Value
from prose.syntax import nodes as n

if TYPE_CHECKING:
    from prose.runtime.interpreter import Interpreter



class Sessions:
    """The agents one `Interpreter` has defined, their memory, and sessions."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter
        self.agents: dict[str, n.AgentDef] = {}
        self.memory: dict[str, list[Value]] = {}

    def define(self, node: n.AgentDef) -> None:
        self.agents[node.name] = node

    def _service(self, slot: str, agent: n.AgentDef | None) -> None:
        """Bind `slot` to the agent's model service unless the instance bound it."""
        ctx = self.interpreter.ctx
        if slot in ctx.bindings:
            return
        model = _word(agent.property("model")) if agent else None
        role = agent.property("prompt") if agent else None
        role_text = role.value.text if role is not None and isinstance(role.value, n.String) else None
        service = ModelService(model=model, role=role_text, requested=model is not None)
        if ctx.shared.scripted:  # answered by the script under its name (`OUTER.name` nested)
            outer = ctx.prefix.rstrip(">").rsplit(">", 1)[-1]
            key = f"{outer}.{slot}" if ctx.prefix else slot
            ctx.bindings = {**ctx.bindings, slot: scripted(service, key, None)}
            return
        ctx.bindings = {**ctx.bindings, slot: service}

    async def run(self, node: n.Session, scope: Scope, path: str) -> Value:
        interpreter = self.interpreter
        agent = None
        if node.agent is not None:
            agent = self.agents.get(node.agent)
            if agent is None:
                raise NameNotDefined(f"there is no agent `{node.agent}`", node.head,
                                     source=interpreter.source)
            if node.resume and agent.property("persist") is None:
                raise ValueTypeError(f"`resume: {node.agent}` needs an agent with `persist:`",
                                     node.head, source=interpreter.source)
        slot = node.slot
        self._service(slot, agent)
        inputs: dict[str, Value] = {}
        reserved: dict[str, Value] = {}
        if node.prompt is not None:
            reserved["prompt"] = await interpreter.eval(node.prompt, scope, path)
        for prop in node.properties:
            value = await interpreter.eval(prop.value, scope, path)
            (reserved if prop.name in RESERVED_PROPERTIES else inputs)[prop.name] = value
        if node.resume:
            inputs[MEMORY_INPUT] = v.make_list(self.memory.get(slot, []))
        call = n.Call(n.Name(slot, span=node.head), node.properties, head=node.head,
                      span=node.span)
        output = await gated_call(interpreter, call, Service(slot), inputs,
                                  call_options(reserved), scope, path)
        persist = agent is not None and agent.property("persist") is not None
        if persist:
            given = {k: x for k, x in inputs.items() if k != MEMORY_INPUT}
            if "prompt" in reserved:
                given["prompt"] = reserved["prompt"]
            entry = v.make_object({"given": v.make_object(given), "reply": output})
            held = self.memory.setdefault(slot, [])
            # Strict mode: what a session adds also carries the pc it ran under.
            held.append(v.relabel(entry, flows.bind(CONCRETE, flows.remembered(
                CONCRETE, CONCRETE.join(item.label for item in held), entry.label, output.label),
                pc.current(), interpreter.strict)))
        return output


def _word(prop: n.Property | None) -> str | None:
    """A property written as a string or a bare word (`model: sonnet`)."""
    if prop is None:
        return None
    if isinstance(prop.value, n.String):
        return prop.value.text
    if isinstance(prop.value, n.Name):
        return prop.value.name
    return None
