"""`load_instance`: an instance YAML text -> `Instance`, its pattern spec, and diagnostics.

Line numbers come from the YAML node tree (`prose.bounded.parse_yaml`), so
every problem points at the key or value it is about.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from prose.bounded import MAX_TEXT
from prose.diagnostics.model import Diagnostic
from prose.errors import InputReadError, ProseSyntaxError
from prose.files import read_text
from prose.lang.model_choice import ALLOW_MODELS_KEY
from prose.lang.schema_types import known_words
from prose.lang.services import ALL_SERVICE_KEYS, PERSON_KEYS, SERVICE_KEYS, SERVICE_KINDS
from prose.lang.types import problem as type_problem
from prose.source import Span
from prose.spec.codes import make
from prose.spec.instance import (
    Binding,
    Entry,
    Instance,
    InstanceResult,
    ModelService,
    PatternService,
    PersonService,
    PythonService,
    is_file,
    resolve_pattern,
)
from prose.spec.instance_check import validate_bindings, validate_instance, validate_rename
from prose.spec.instance_tools import check_tools, read_tools
from prose.spec.loader import load_spec_file
from prose.spec.model import PatternSpec, SpecResult
from prose.spec.yaml_nodes import YamlProblem, compose, key_nodes, node_span
from prose.spelling import closest, did_you_mean

SpecLoader = Callable[[Path], SpecResult]
MAX_REPLY_TOKENS = 10_000_000  # a slot's `max_tokens:` above this is a typo, not a cap

TOP_KEYS = frozenset({"pattern", "with", "config", "inputs", "description", ALLOW_MODELS_KEY,
                      "tools"})
# What a misspelt top-level key would have supplied: not reported missing as well.
_CONSEQUENCES = {"inputs": "PS182", "with": "PS177"}
_PYTHON_TARGET = re.compile(
    r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$"
)


def _is_service_map(node: yaml.MappingNode) -> bool:
    """A mapping of entry names to services (a `map` slot's binding), not one service: none
    of its keys is a service key (`model`, `pattern`, `python`, `person`, ...) and every
    entry is written as a mapping (`billing: { model: fast }`), so a misspelt service key
    (`{ modle: fast }`) is still reported as one."""
    words = ALL_SERVICE_KEYS
    return bool(node.value) and all(
        isinstance(key, yaml.ScalarNode) and key.value not in words
        and isinstance(value, yaml.MappingNode) for key, value in node.value)


class _Reader:
    """Builds the instance from YAML nodes, collecting diagnostics."""

    def __init__(self, filename: str, loader: SpecLoader) -> None:
        self.file = filename
        self.base = Path(filename).parent
        self.loader = loader
        self.out: list[Diagnostic] = []
        self.spec_out: list[Diagnostic] = []

    def span(self, node: yaml.Node) -> Span:
        return node_span(node, self.file)

    def unknown_keys(self, node: yaml.Node, allowed: frozenset[str], where: str) -> set[str]:
        """Report every key not in `allowed` (an error, at the key); return the keys suggested."""
        suggested: set[str] = set()
        for key, (key_node, _) in key_nodes(node).items():
            if key not in allowed:
                guess = closest(key, allowed)
                known = ", ".join(f"`{name}`" for name in sorted(allowed))
                self.out.append(
                    make(
                        "PS173",
                        f"unknown key `{key}` in {where}" + did_you_mean(key, allowed),
                        self.span(key_node),
                        help=f"known keys: {known}",
                    )
                )
                if guess is not None:
                    suggested.add(guess)
        return suggested

    def mapping(self, node: yaml.Node, what: str) -> bool:
        if isinstance(node, yaml.MappingNode):
            return True
        if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null":
            return False
        self.out.append(make("PS170", f"`{what}` must be a mapping", self.span(node)))
        return False

    def entries(self, node: yaml.Node | None, what: str) -> list[Entry]:
        if node is None or not self.mapping(node, what):
            return []
        loader = yaml.SafeLoader("")
        out: list[Entry] = []
        try:
            for key, value in key_nodes(node).values():
                try:
                    constructed = loader.construct_object(value, deep=True)
                except yaml.YAMLError as error:  # e.g. a value that contains itself
                    problem = getattr(error, "problem", None) or "cannot be read"
                    message = f"`{key.value}` in `{what}`: {problem}"
                    self.out.append(make("PS170", message, self.span(value)))
                    constructed = None  # reported; kept so it is not also "missing"
                out.append(
                    Entry(
                        name=str(key.value),
                        value=constructed,
                        span=self.span(key),
                        value_span=self.span(value),
                    )
                )
        finally:
            loader.dispose()
        return out

    def model_names(self, node: yaml.Node | None) -> list[str]:
        """`allow_models: [NAME, ...]`: the models a pattern may ask for
        (`prose.lang.model_choice`); a list of non-empty strings."""
        if node is None:
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.out.append(make("PS170", f"`{ALLOW_MODELS_KEY}` must be a list of model names",
                                 self.span(node)))
            return []
        names: list[str] = []
        for item in node.value:
            if (isinstance(item, yaml.ScalarNode) and item.tag == "tag:yaml.org,2002:str"
                    and item.value.strip()):
                names.append(str(item.value).strip())
            else:
                self.out.append(make("PS170", f"an item of `{ALLOW_MODELS_KEY}` must be a "
                                     "model name (a non-empty string)", self.span(item)))
        return names

    def bindings(self, node: yaml.Node | None) -> tuple[dict[str, Binding], list[str]]:
        """The valid bindings, and the slots whose binding is written but invalid (reported)."""
        if node is None or not self.mapping(node, "with"):
            return {}, []
        out: dict[str, Binding] = {}
        invalid: list[str] = []
        for slot, (key, value) in key_nodes(node).items():
            if isinstance(value, yaml.SequenceNode):
                services = [self.service(item, slot) for item in value.value]
                if all(service is not None for service in services):
                    out[slot] = Binding(
                        slot=slot,
                        value=[s for s in services if s is not None],
                        span=self.span(key),
                        value_span=self.span(value),
                    )
                else:
                    invalid.append(slot)
                continue
            if isinstance(value, yaml.MappingNode) and _is_service_map(value):
                entries = key_nodes(value)
                mapped = [self.service(item, f"{slot}.{name}") for name, (_, item) in entries.items()]
                if all(service is not None for service in mapped):
                    out[slot] = Binding(
                        slot=slot, value=[s for s in mapped if s is not None],
                        span=self.span(key), value_span=self.span(value), keys=list(entries),
                    )
                else:
                    invalid.append(slot)
                continue
            service = self.service(value, slot)
            if service is None:
                invalid.append(slot)
                continue
            out[slot] = Binding(
                slot=slot, value=service, span=self.span(key), value_span=self.span(value)
            )
        return out, invalid

    def service(
        self, node: yaml.Node, slot: str
    ) -> ModelService | PatternService | PythonService | PersonService | None:
        span = self.span(node)
        if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str" and node.value:
            return ModelService(model=node.value, span=span)
        if not isinstance(node, yaml.MappingNode):
            self.out.append(
                make(
                    "PS174",
                    f"the binding of `{slot}` is not a service mapping",
                    span,
                    help="write `{ model: ALIAS }`, `{ pattern: REF }`, `{ python: pkg.mod:func }` "
                    "or `{ person: NAME }`",
                )
            )
            return None
        keys = key_nodes(node)
        kinds = [kind for kind in SERVICE_KINDS if kind in keys]
        if len(kinds) != 1:
            problem = (
                "does not say what answers the slot: it has no `model:`, `pattern:`, `python:` "
                "or `person:`"
                if not kinds
                else "gives more than one of `model:`, `pattern:`, `python:` and `person:`"
            )
            self.out.append(
                make(
                    "PS174",
                    f"the binding of `{slot}` {problem}",
                    span,
                    help="give exactly one: `{ model: NAME }` (a model), `{ pattern: REF }` "
                    "(a nested pattern), `{ python: pkg.mod:func }` (a Python function) or "
                    "`{ person: NAME }` (a person)",
                )
            )
            if not kinds:  # a misspelt kind (`modle:`) is named at its key
                self.unknown_keys(node, ALL_SERVICE_KEYS,
                                  f"the binding of `{slot}`")
            return None
        kind = kinds[0]
        self.unknown_keys(node, SERVICE_KEYS[kind], f"the `{kind}` service of `{slot}`")
        if kind == "person":
            return self.person(keys["person"][1], slot, span)
        values = {
            key: self.text(value, slot, key)
            for key, (_, value) in keys.items()
            if key in ("model", "pattern", "python", "prompt", "role")
        }
        if values.get(kind) is None:
            return None
        if kind == "python":
            return self.python(values["python"] or "", keys["python"][1], slot)
        if kind == "pattern":
            return self.pattern_service(values["pattern"] or "", keys, span)
        return self.model_service(values, keys, span, slot)

    def text(self, node: yaml.Node, slot: str, key: str, code: str = "PS174") -> str | None:
        if (
            isinstance(node, yaml.ScalarNode)
            and node.tag == "tag:yaml.org,2002:str"
            and node.value.strip()
        ):
            return str(node.value)
        self.out.append(
            make(code, f"`{key}` of `{slot}` must be a non-empty string", self.span(node))
        )
        return None

    def python(self, target: str, node: yaml.Node, slot: str) -> PythonService | None:
        match = _PYTHON_TARGET.match(target.strip())
        if match is None:
            self.out.append(
                make(
                    "PS186",
                    f"`python: {target}` of `{slot}` is not `package.module:function`",
                    self.span(node),
                )
            )
            return None
        return PythonService(
            python=target.strip(),
            module=match.group(1),
            function=match.group(2),
            span=self.span(node),
        )

    def person(self, node: yaml.Node, slot: str, span: Span) -> PersonService | None:
        """`person: NAME`, or `person: {name, may_answer, prompt}` (docs/people.md)."""
        if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str":
            name = self.text(node, slot, "person")
            return PersonService(name=name.strip(), may_answer=[name.strip()], span=span) \
                if name else None
        if not isinstance(node, yaml.MappingNode):
            self.out.append(make("PS174", f"`person` of `{slot}` must be a name or a mapping "
                                 "(`name`, `may_answer`, `prompt`)", self.span(node)))
            return None
        self.unknown_keys(node, PERSON_KEYS, f"the person of `{slot}`")
        keys = key_nodes(node)
        name = self.text(keys["name"][1], slot, "name") if "name" in keys else slot
        prompt = self.text(keys["prompt"][1], slot, "prompt") if "prompt" in keys else None
        allowed: list[str] = []
        if "may_answer" in keys:
            value = keys["may_answer"][1]
            items = value.value if isinstance(value, yaml.SequenceNode) else [value]
            for item in items:
                text = self.text(item, slot, "may_answer")
                if text is not None:
                    allowed.append(text.strip())
            if not items:
                self.out.append(make("PS174", f"`may_answer` of `{slot}` names nobody: leave it "
                                     "out to let anyone answer", self.span(value)))
        if name is None or ("prompt" in keys and prompt is None):
            return None
        return PersonService(name=name.strip(), may_answer=allowed, prompt=prompt, span=span)

    def model_service(
        self, values: dict[str, str | None], keys: dict[str, Any], span: Span, slot: str
    ) -> ModelService:
        role_path: str | None = None
        role = values.get("role")
        if "prompt" in keys and "role" in keys:
            self.out.append(
                make("PS174", f"`{slot}` gives both `prompt` and `role`; give one", span)
            )
        if role:
            resolved = Path(role) if Path(role).is_absolute() else self.base / role
            role_path = str(resolved)
            if not is_file(resolved):
                self.out.append(
                    make(
                        "PS175",
                        f"role file `{role}` of `{slot}` does not exist",
                        self.span(keys["role"][1]),
                    )
                )
        return ModelService(
            model=values["model"] or "",
            prompt=values.get("prompt"),
            role=role,
            role_path=role_path,
            output_schema=self.schema(keys, slot),
            max_tokens=self.max_tokens(keys, slot),
            span=span,
        )

    def max_tokens(self, keys: dict[str, Any], slot: str) -> int | None:
        """`max_tokens: N`: the cap on each reply's tokens for this slot (a positive integer)."""
        if "max_tokens" not in keys:
            return None
        node = keys["max_tokens"][1]
        if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:int":
            try:
                value = int(node.value.replace("_", ""), 0)
            except ValueError:
                value = 0
            if 0 < value <= MAX_REPLY_TOKENS:
                return value
        self.out.append(make("PS174", f"`max_tokens` of `{slot}` must be a whole number from 1 "
                             f"to {MAX_REPLY_TOKENS:,} (the cap on each reply's tokens)",
                             self.span(node)))
        return None

    def schema(self, keys: dict[str, Any], slot: str) -> dict[str, str] | None:
        if "schema" not in keys:
            return None
        node = keys["schema"][1]
        if not isinstance(node, yaml.MappingNode):
            message = f"`schema` of `{slot}` must map field names to types"
            self.out.append(make("PS174", message, self.span(node)))
            return None
        fields: dict[str, str] = {}
        for field, (_, value) in key_nodes(node).items():
            type_text = _type_text(value)
            why = type_problem(type_text)
            if why is not None:
                message = (
                    f"schema field `{field}` of `{slot}` has no type of the type language "
                    f"({why}; use one of {known_words()}, `T[]`, `T?`, `\"a\" | \"b\"` or a "
                    "mapping of fields)"
                )
                self.out.append(make("PS174", message, self.span(value)))
                continue
            fields[field] = type_text
        return fields

    def pattern_service(self, reference: str, keys: dict[str, Any], span: Span) -> PatternService:
        path = resolve_pattern(reference, self.base)
        with_node = keys.get("with", (None, None))
        bindings, invalid = self.bindings(with_node[1])
        service = PatternService(
            pattern=reference,
            pattern_path=str(path) if path else None,
            bindings=bindings,
            invalid_slots=invalid,
            with_span=self.span(with_node[0]) if with_node[0] is not None else None,
            config=self.entries(keys.get("config", (None, None))[1], "config"),
            rename=self.entries(keys.get("rename", (None, None))[1], "rename"),
            span=span,
        )
        spec = self.load(reference, path, self.span(keys["pattern"][1]))
        if spec is not None:
            anchor = service.with_span or span
            self.out.extend(
                validate_bindings(
                    service.bindings, service.config, spec, anchor, skip=service.invalid_slots
                )
            )
            self.out.extend(validate_rename(service.rename, spec))
        return service

    def load(self, reference: str, path: Path | None, span: Span) -> PatternSpec | None:
        if path is None:
            self.out.append(
                make(
                    "PS172",
                    f"pattern `{reference}` not found",
                    span,
                    help="give a path relative to this file, or a library pattern name",
                )
            )
            return None
        try:
            result = self.loader(path)
        except InputReadError as error:
            self.out.append(make("PS172", f"pattern `{reference}` cannot be read: {error}", span))
            return None
        self.spec_out.extend(result.diagnostics)
        if not result.ok:
            self.out.append(make("PS172", f"pattern `{reference}` has errors", span))
        return result.spec


def load_instance(
    text: str, filename: str, spec_loader: SpecLoader | None = None
) -> InstanceResult:
    """Parse an instance file, load its pattern through `spec_loader`, and validate it.

    `spec_loader` maps a pattern path to a `SpecResult` (default:
    `load_spec_file`; pass a caching one to share work). Never raises for
    content problems: they are diagnostics with the YAML line.
    """
    reader = _Reader(filename, spec_loader or load_spec_file)
    parsed = compose(text)
    if isinstance(parsed, YamlProblem):
        span = Span.point(filename, parsed.line, parsed.column)
        return InstanceResult(
            instance=None, diagnostics=[make("PS170", parsed.message, span)]
        )
    if not isinstance(parsed.node, yaml.MappingNode):
        span = reader.span(parsed.node) if parsed.node is not None else Span.point(filename, 1, 1)
        return InstanceResult(
            instance=None, diagnostics=[make("PS170", "the instance is not a mapping", span)]
        )
    root = parsed.node
    suggested = reader.unknown_keys(root, TOP_KEYS, "the instance file")
    keys = key_nodes(root)
    lines = text.split("\n")
    whole = Span(filename, 1, 1, len(lines), len(lines[-1]) + 1)
    reference: str | None = None
    pattern_span: Span | None = None
    if "pattern" in keys:
        pattern_span = reader.span(keys["pattern"][1])
        reference = reader.text(keys["pattern"][1], "the instance", "pattern", "PS171")
    else:
        reader.out.append(
            make("PS171", "the instance names no `pattern`", Span.point(filename, 1, 1))
        )
    path = resolve_pattern(reference, reader.base) if reference else None
    with_key = keys.get("with", (None, None))
    config_key = keys.get("config", (None, None))
    inputs_key = keys.get("inputs", (None, None))
    bindings, invalid = reader.bindings(with_key[1])
    instance = Instance(
        path=filename,
        span=whole,
        pattern=reference,
        pattern_path=str(path) if path else None,
        pattern_span=pattern_span,
        bindings=bindings,
        invalid_slots=invalid,
        with_span=reader.span(with_key[0]) if with_key[0] is not None else None,
        config=reader.entries(config_key[1], "config"),
        config_span=reader.span(config_key[0]) if config_key[0] is not None else None,
        inputs=reader.entries(inputs_key[1], "inputs"),
        inputs_span=reader.span(inputs_key[0]) if inputs_key[0] is not None else None,
        allow_models=reader.model_names(keys.get(ALLOW_MODELS_KEY, (None, None))[1]),
        tools=read_tools(keys.get("tools", (None, None))[1], filename, reader.out),
        tools_span=reader.span(keys["tools"][0]) if "tools" in keys else None,
    )
    spec = (
        reader.load(reference, path, pattern_span or whole) if reference and pattern_span else None
    )
    if spec is not None:
        found = [*validate_instance(instance, spec), *check_tools(instance, spec)]
        # A misspelt section (`input:`, `wiht:`) is reported at its key; what it would have
        # supplied is not reported missing again at another line.
        hidden = {code for key, code in _CONSEQUENCES.items() if key in suggested}
        reader.out.extend(d for d in found if d.code not in hidden)
    reader.out.sort(key=Diagnostic.sort_key)
    return InstanceResult(
        instance=instance, spec=spec, diagnostics=reader.out, spec_diagnostics=reader.spec_out
    )


def load_instance_file(path: str | Path, spec_loader: SpecLoader | None = None) -> InstanceResult:
    """Read and load an instance file. Raises InputReadError only when it cannot be read;
    a file that is too long (`prose.bounded.MAX_TEXT`) or not UTF-8 is a diagnostic."""
    try:
        text = read_text(path, limit=MAX_TEXT, empty_ok=True)
    except ProseSyntaxError as error:
        span = Span.point(str(path), error.line, error.column)
        return InstanceResult(instance=None, diagnostics=[make("PS170", error.message, span)])
    return load_instance(text, str(path), spec_loader)


_PLAIN_KEY = re.compile(r"[A-Za-z_][\w-]*")


def _type_text(node: yaml.Node) -> str:
    """A `schema:` field's type as text: a scalar is the type itself, a mapping an object
    with those fields (`{ name: T, ... }`), a one-item sequence a list of it."""
    if isinstance(node, yaml.ScalarNode):
        return str(node.value)
    if isinstance(node, yaml.MappingNode):
        inner = ", ".join(f"{key if _PLAIN_KEY.fullmatch(key) else json.dumps(key)}: "
                          f"{_type_text(value)}" for key, (_, value) in key_nodes(node).items())
        return "{ " + inner + " }"
    if isinstance(node, yaml.SequenceNode) and len(node.value) == 1:
        return f"({_type_text(node.value[0])})[]"
    return ""
