"""Bindings to model aliases that nothing defines, resolved by the documented model order.

A scaffold's instance binds `model: fast`; with no `prose.yaml` defining
`fast`, such a binding takes the run's default model (`--model`,
`$PROSE_MODEL`, `default_model` of the LLM config, the embedded model: see
`prose.llm.resolve`), and the run says so on stderr. A binding given with
`--bind` is never replaced; a binding to an alias that the LLM config defines
stays as it is. With no default the run stops before any call, naming the
aliases (exit 2).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prose.cli.command_options import CommandOptions

# The run's modules are imported inside the functions, as every command of `prose.cli`
# does: importing this module costs nothing.


def undefined_aliases(
    bindings: Mapping[str, Any],
    config: Any,
    *,
    knows: Callable[[str], bool] | None = None,
    prefix: str = "",
) -> dict[str, list[str]]:
    """Alias -> the slots (`OUTER.INNER` inside a nested pattern) bound to it, in order.

    `knows` says whether LiteLLM knows a bare model name (default: ask LiteLLM)."""
    from prose.llm.resolve import is_undefined_alias, litellm_knows
    from prose.runtime.services import ModelService, PatternService

    knows = knows if knows is not None else litellm_knows
    found: dict[str, list[str]] = {}
    for slot, binding in bindings.items():
        items = binding if isinstance(binding, list) else [binding]
        for item in items:
            if isinstance(item, ModelService) and item.model:
                if is_undefined_alias(item.model, config, knows=knows):
                    found.setdefault(item.model, []).append(prefix + slot)
            elif isinstance(item, PatternService):
                nested = undefined_aliases(item.bindings, config, knows=knows,
                                           prefix=f"{prefix}{slot}.")
                for alias, slots in nested.items():
                    found.setdefault(alias, []).extend(slots)
    return found


def replace_aliases(bindings: Mapping[str, Any], aliases: Mapping[str, Any], model: str) -> dict[str, Any]:
    """`bindings` with every model service bound to one of `aliases` routed to `model`."""
    from prose.runtime.services import ModelService, PatternService

    def replaced(item: Any) -> Any:
        if isinstance(item, list):
            return [replaced(one) for one in item]
        if isinstance(item, ModelService) and item.model in aliases:
            return dataclasses.replace(item, model=model)
        if isinstance(item, PatternService):
            return dataclasses.replace(item, bindings=replace_aliases(item.bindings, aliases, model))
        return item

    return {slot: replaced(binding) for slot, binding in bindings.items()}


def resolve_aliases(
    bindings: Mapping[str, Any],
    config: Any,
    default_model: str | None,
    *,
    explicit: frozenset[str] = frozenset(),
    knows: Callable[[str], bool] | None = None,
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The bindings with undefined aliases routed to `default_model`, and the aliases replaced.

    `explicit` names the slots bound by `--bind`: an undefined alias there is an error
    (`UndefinedAliasError`) whatever the default, as is any undefined alias with no default.
    """
    from prose.llm.resolve import UndefinedAliasError
    given = {slot: binding for slot, binding in bindings.items() if slot in explicit}
    wrong = undefined_aliases(given, config, knows=knows)
    if wrong:
        raise UndefinedAliasError(wrong, explicit=True)
    rest = {slot: binding for slot, binding in bindings.items() if slot not in explicit}
    found = undefined_aliases(rest, config, knows=knows)
    if not found:
        return dict(bindings), {}
    if default_model is None:
        raise UndefinedAliasError(found)
    merged = {**replace_aliases(rest, found, default_model), **given}
    return {slot: merged[slot] for slot in bindings}, found


_SOURCE_WORDS = {"--model": "from --model", "PROSE_MODEL": "from $PROSE_MODEL",
                 "config": "the default_model of the LLM config", "embedded": "the embedded model"}


def resolve_command_aliases(bindings: Mapping[str, Any], llm_config: Any,
                            options: CommandOptions) -> dict[str, Any]:
    """`resolve_aliases` for `prose run` and `prose batch`: the note on stderr, or exit 2.

    `options` are the command's: `model`, `binds` (`--bind`) and `quiet`."""
    import click

    from prose.cli.inputs import EXIT_USAGE, fail
    from prose.llm.resolve import UndefinedAliasError, choose_default_model

    explicit = frozenset(text.partition("=")[0].strip() for text in options.binds)
    choice = choose_default_model(options.model, llm_config)
    try:
        resolved, replaced = resolve_aliases(
            bindings, llm_config, choice.model if choice else None, explicit=explicit
        )
    except UndefinedAliasError as error:
        fail(str(error), EXIT_USAGE)
    if replaced and choice is not None and not options.quiet:
        from prose.diagnostics.render_text import paint, wants_color

        names = ", ".join(f"`{alias}`" for alias in replaced)
        plural = "es" if len(replaced) > 1 else ""
        color = wants_color(sys.stderr)
        click.echo(
            paint("note", "note", color)
            + f": the model alias{plural} {names} {'are' if plural else 'is'} defined nowhere "
            f"(no prose.yaml entry): using {choice.model} "
            f"({_SOURCE_WORDS.get(choice.source, choice.source)})",
            err=True,
            color=color,
        )
    return resolved
