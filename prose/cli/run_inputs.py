"""What `prose run` reads besides the pattern: values and files named on the command
line, the script and the LLM config.

Every problem names its file (and its line and column, where there is one) and
exits 1 when the content is bad, 2 when a path cannot be read or an option is
misused. YAML and JSON are read within the bounds of `prose.bounded`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from prose.bounded import MAX_INPUT_TEXT, MAX_TEXT, BoundExceeded, load_json, read_yaml
from prose.cli.inputs import EXIT_FINDINGS, EXIT_USAGE, fail
from prose.errors import InputReadError, ProseSyntaxError
from prose.files import read_text

if TYPE_CHECKING:
    from prose.cli.command_options import CommandOptions
    from prose.llm.config import LLMConfig
    from prose.llm.script import Script
    from prose.spec.model import PatternSpec

_STRING_TYPES = ("string", "str", "text")


def pairs(items: tuple[str, ...], flag: str) -> list[tuple[str, str]]:
    """`KEY=VALUE` options as pairs; anything else is a usage error (exit 2)."""
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"`{flag} {item}`: expected KEY=VALUE", EXIT_USAGE)
        out.append((key.strip(), value))
    return out


def typed(raw: str, declared: str | None, where: str) -> Any:
    """A command-line value: kept as text for a `string`, else read as JSON when it parses.

    JSON nested deeper than `prose.bounded.MAX_DEPTH` is refused (exit 1), naming
    `where` (`--config rounds`).
    """
    if declared in _STRING_TYPES:
        return raw
    try:
        return load_json(raw, where)
    except BoundExceeded as error:
        fail(str(error), EXIT_FINDINGS)
    except ProseSyntaxError:
        return raw


def read_input_file(path: str) -> Any:
    """`--input-file KEY=PATH`: parsed when it is `.json`, `.yaml` or `.yml`, else its text."""
    try:
        if path.endswith(".json"):
            return load_json(read_text(path, limit=MAX_TEXT, empty_ok=True), path)
        if path.endswith((".yaml", ".yml")):
            return read_yaml(path).value
        return read_text(path, limit=MAX_INPUT_TEXT, empty_ok=True)  # never read unbounded
    except InputReadError as error:
        fail(str(error), EXIT_USAGE)
    except ProseSyntaxError as error:
        fail(str(error), EXIT_FINDINGS)


def read_script(path: str | None) -> Script | None:
    """`--script PATH`, or None."""
    if path is None:
        return None
    from prose.llm import Script
    from prose.llm.errors import ScriptFormatError

    try:
        return Script.from_file(path)
    except InputReadError as error:
        fail(str(error), EXIT_USAGE)
    except ScriptFormatError as error:
        fail(str(error), EXIT_FINDINGS)


def read_llm_config(path: str | None, project: Path, *, check_router: bool) -> LLMConfig | None:
    """`--config-file PATH`, else `prose.yaml` or `.prose/config.yaml` of the project, or None.

    `check_router`: also build a router from its `router_settings` once, so a
    setting LiteLLM refuses is reported (file and line, exit 1) before the run.
    """
    from prose.llm import LLMConfig
    from prose.llm.errors import LLMConfigError

    candidates = (
        [Path(path)] if path else [project / "prose.yaml", project / ".prose" / "config.yaml"]
    )
    for candidate in candidates:
        if path or candidate.is_file():
            try:
                config = LLMConfig.from_yaml(candidate)
                if check_router:
                    config.check_router()
            except InputReadError as error:  # LLMConfigReadError: the file cannot be read
                fail(str(error), EXIT_USAGE)
            except LLMConfigError as error:
                fail(str(error), EXIT_FINDINGS)
            return config
    return None


def apply_options(spec: PatternSpec, options: CommandOptions, inputs: dict[str, Any],
                  config: dict[str, Any], bindings: dict[str, Any]) -> None:
    """`--input`, `--input-file`, `--config` and `--bind` on top of an instance's values (as
    `prose run` and `prose batch` read them): a value is typed by its declaration."""
    from prose.cli.command_options import RunCommandOptions
    from prose.cli.targets import declared_type
    from prose.runtime.errors import InputError
    from prose.runtime.services import parse_bind_option

    for key, raw in pairs(options.inputs, "--input"):
        inputs[key] = typed(raw, declared_type(spec, key), f"`--input {key}`")
    for key, path in pairs(options.input_files if isinstance(options, RunCommandOptions) else (), "--input-file"):
        inputs[key] = read_input_file(path)
    for key, raw in pairs(options.configs, "--config"):
        config[key] = typed(raw, declared_type(spec, key), f"`--config {key}`")
    try:
        for text in options.binds:
            slot, binding = parse_bind_option(text)
            bindings[slot] = binding
    except InputError as error:
        fail(error.message, EXIT_USAGE)
