"""The messages of the peer benchmark's workloads, and their LangGraph graphs.

bench/pdl_compare.py runs three workloads through prose, PDL, LangGraph and
the bare Router. The functions here build, in plain Python, the messages
prose sends for each call (the benchmark checks they are equal before
timing), and LangGraph graphs whose nodes send them with
`Router.acompletion`. The map-reduce graph is bench/langgraph_compare.py's.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from bench.runtime import MODEL

Messages = list[dict[str, str]]
CHAIN_TASK = "Answer in one word: which planet is largest?"


def chain_messages(task: str, step: int) -> Messages:
    """bench/fixtures/sequential.prose.md's call number `step` (from 1)."""
    return [
        {"role": "system", "content": "Produce: an answer"},
        {"role": "user", "content": f"## task\n{task}\n\n## step\n{step}"},
    ]


def item_messages(item: str, position: int) -> Messages:
    """bench/fixtures/parallel.prose.md's call for `item` at `position` (from 0)."""
    return [
        {"role": "system", "content": "Produce: an answer for the item"},
        {"role": "user", "content": f"## item\n{item}\n\n## position\n{position}"},
    ]


def thesis_messages(brief: str, prior_antithesis: str | None) -> Messages:
    """patterns/dialectic.prose.md's thesis call (no prior argument in the first round)."""
    user = f"Argue for the position. If a counterargument is given, answer it.\n\n## task_brief\n{brief}"
    if prior_antithesis is not None:
        user += f"\n\n## prior_antithesis\n{prior_antithesis}"
    return [
        {"role": "system", "content": "Produce: argument for the position"},
        {"role": "user", "content": user},
    ]


def antithesis_messages(brief: str, prior_thesis: str) -> Messages:
    """patterns/dialectic.prose.md's antithesis call."""
    user = (
        "Argue against the position, countering the argument you are given."
        f"\n\n## task_brief\n{brief}\n\n## prior_thesis\n{prior_thesis}"
    )
    return [
        {"role": "system", "content": "Produce: argument against the position"},
        {"role": "user", "content": user},
    ]


def _text(reply: Any) -> str:
    return str(reply.choices[0].message.content)


class ChainState(TypedDict):
    step: int
    answers: Annotated[list[str], operator.add]


def chain_graph(router: Any, timeout_s: float, task: str, calls: int) -> Any:
    """One `call` node that loops back to itself `calls` times."""
    from langgraph.graph import END, START, StateGraph

    async def call(state: ChainState) -> dict[str, Any]:
        step = state["step"] + 1
        messages = chain_messages(task, step)
        reply = await router.acompletion(model=MODEL, messages=messages, timeout=timeout_s)
        return {"step": step, "answers": [_text(reply)]}

    def again(state: ChainState) -> str:
        return "call" if state["step"] < calls else END

    graph = StateGraph(ChainState)
    graph.add_node("call", call)
    graph.add_edge(START, "call")
    graph.add_conditional_edges("call", again, ["call", END])
    return graph.compile()


class ItemsState(TypedDict, total=False):
    items: list[str]
    answers: Annotated[list[tuple[int, str]], operator.add]


class ItemState(TypedDict):
    item: str
    position: int


def items_graph(router: Any, timeout_s: float) -> Any:
    """A `Send` per item to a `work` node; the answers gathered by an `operator.add` reducer."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    async def work(state: ItemState) -> dict[str, Any]:
        messages = item_messages(state["item"], state["position"])
        reply = await router.acompletion(model=MODEL, messages=messages, timeout=timeout_s)
        return {"answers": [(state["position"], _text(reply))]}

    def fan_out(state: ItemsState) -> list[Any]:
        return [
            Send("work", ItemState(item=item, position=position))
            for position, item in enumerate(state["items"])
        ]

    graph = StateGraph(ItemsState)
    graph.add_node("work", work)
    graph.add_conditional_edges(START, fan_out, ["work"])
    graph.add_edge("work", END)
    return graph.compile()


class DialecticState(TypedDict, total=False):
    round: int
    last_thesis: str | None
    last_antithesis: str | None
    exchange: Annotated[list[dict[str, Any]], operator.add]


def dialectic_graph(router: Any, timeout_s: float, brief: str, rounds: int) -> Any:
    """`thesis` then `antithesis`, back to `thesis` until `rounds` rounds are recorded."""
    from langgraph.graph import END, START, StateGraph

    async def thesis(state: DialecticState) -> dict[str, Any]:
        messages = thesis_messages(brief, state.get("last_antithesis"))
        reply = await router.acompletion(model=MODEL, messages=messages, timeout=timeout_s)
        return {"last_thesis": _text(reply)}

    async def antithesis(state: DialecticState) -> dict[str, Any]:
        prior = str(state["last_thesis"])
        messages = antithesis_messages(brief, prior)
        reply = await router.acompletion(model=MODEL, messages=messages, timeout=timeout_s)
        number = state.get("round", 0) + 1
        record = {"round": number, "thesis": prior, "antithesis": _text(reply)}
        return {"round": number, "last_antithesis": record["antithesis"], "exchange": [record]}

    def again(state: DialecticState) -> str:
        return "thesis" if state["round"] < rounds else END

    graph = StateGraph(DialecticState)
    graph.add_node("thesis", thesis)
    graph.add_node("antithesis", antithesis)
    graph.add_edge(START, "thesis")
    graph.add_edge("thesis", "antithesis")
    graph.add_conditional_edges("antithesis", again, ["thesis", END])
    return graph.compile()
