"""The one place that imports LiteLLM, lazily.

`import prose.llm` must stay cheap (the parse and lint commands never talk to
a model), so LiteLLM is imported on the first model call. Importing it
without `LITELLM_OFFLINE_MODE` and `LITELLM_LOCAL_MODEL_COST_MAP` blocks on
a price-list download, and token counting downloads tokenizers; both are set
first (unless the user set them), so prices come from the bundled map.

A command that will call a model (`prose run`, `prose test`, `prose batch`)
starts the import in a background thread (`import_in_background`) while it
reads and checks the pattern; whoever needs the module first waits for it.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import threading
import time
import warnings
from types import ModuleType

_OFFLINE_ENVIRONMENT = {"LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "true"}
_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")

_PYDANTIC_READONLY_WARNING = r"Items? .* on TypedDict class .* using the `ReadOnly` qualifier"

_module: ModuleType | None = None
_import_seconds: float | None = None
_lock = threading.RLock()  # one import and one configuration, whichever thread comes first
_background: threading.Thread | None = None


def import_in_background() -> None:
    """Start importing LiteLLM in a daemon thread, once; `load_litellm` waits for it."""
    global _background
    with _lock:
        if _module is not None or _background is not None:
            return
        _background = threading.Thread(target=_quietly_load, name="prose-litellm-import",
                                        daemon=True)
        _background.start()


def _quietly_load() -> None:
    try:
        load_litellm()
    except Exception:  # the caller's own load_litellm reports it
        pass


def load_litellm(*, debug: bool = False) -> ModuleType:
    """The `litellm` module, imported and configured on first use.

    LiteLLM's loggers are quiet unless `debug` (every failure we handle would
    otherwise be logged at ERROR by the router), and the scripted provider
    `prose-script` and the local provider `prose-local` are registered in
    `litellm.custom_provider_map`; the request counter (`sent.py`) joins
    LiteLLM's input callbacks.
    """
    with _lock:
        return _load(debug)


def _load(debug: bool) -> ModuleType:
    global _module, _import_seconds
    if _module is None:
        for name, value in _OFFLINE_ENVIRONMENT.items():
            os.environ.setdefault(name, value)
        started = time.perf_counter()
        module = importlib.import_module("litellm")
        _import_seconds = time.perf_counter() - started
        # LiteLLM leaves some 440,000 objects behind at import; move them out of
        # the collector's sight so every later full collection does not walk them
        # again (measured: about 10% of a 1,000-call parallel run).
        gc.freeze()
        module.suppress_debug_info = True  # type: ignore[attr-defined]  # no banners on errors
        _module = module
    for name in _LITELLM_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if debug else logging.CRITICAL)
    if not debug:
        # LiteLLM's own types make pydantic warn when they are first used.
        warnings.filterwarnings("ignore", message=_PYDANTIC_READONLY_WARNING, category=UserWarning)
    from prose.llm.local import register_local_provider
    from prose.llm.script_provider import register_scripted_provider
    from prose.llm.sent import register_request_counter

    register_scripted_provider(_module)
    register_local_provider(_module)
    register_request_counter(_module)
    return _module


def litellm_import_seconds() -> float | None:
    """How long importing LiteLLM took in this process (None: not imported by us yet)."""
    return _import_seconds
