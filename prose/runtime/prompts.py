"""The messages a call sends, rendered with Jinja2 in a sandbox (LANGUAGE.md 4.4).

A slot call's messages are built only from the service's role prompt, the
slot's `ensures`, the call's `prompt` and the inputs, each labelled by its
name (objects and lists as JSON). The templates never receive the pattern's
name, description, invariants or the other slots' names, so no override can
leak them. Judges get the condition (or choice criteria), the option labels
and the values of the names the text mentions.

Templates are `ImmutableSandboxedEnvironment` + `StrictUndefined` (a typo in
an override is an error, not an empty string); a project overrides any of
them with a file of the same name in `.prose/templates/`.

A project's template is code the run executes, so its rendering is bounded
(issue 14.12): the sandbox (`_bounded_sandbox`) refuses a `range` of more
than `MAX_RANGE_ITEMS` items, a power or product of integers of more than
`MAX_INT_BITS` bits, and a string or list built by repetition,
concatenation, padding, replacing or joining past `MAX_TEXT_CHARS`
characters or `MAX_LIST_ITEMS` items, before it is built; an override's
output stops at `MAX_TEXT_CHARS`, and its rendering at `MAX_RENDER_SECONDS`
or when the run's time budget (`--timeout`) runs out, whichever is first.
The error names the template file.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from prose.errors import ProseError
from prose.llm.types import Message
from prose.runtime.errors import InputError
from prose.runtime.values import Value, plain

if TYPE_CHECKING:
    from prose.runtime.budget import Budget

TEMPLATE_DIR = Path(".prose") / "templates"

# What a template may build or print (a real prompt template needs a fraction of each).
MAX_RANGE_ITEMS = 10_000
MAX_LIST_ITEMS = 10_000
MAX_TEXT_CHARS = 1_000_000  # a string built, and a project template's whole output
MAX_INT_BITS = 14_000  # about 4,300 decimal digits: what Python agrees to print
MAX_RENDER_SECONDS = 2.0
MAX_RENDERED = 1024  # texts of our own templates kept for reuse (system messages)

DEFAULT_TEMPLATES: dict[str, str] = {
    "call_system.j2": (
        "{% if role %}{{ role }}{% endif %}"
        "{% if role and ensures %}\n\n{% endif %}"
        "{% if ensures %}Produce: {{ ensures }}{% endif %}"
    ),
    "call_user.j2": (
        "{% if prompt %}{{ prompt }}{% endif %}"
        "{% for item in inputs %}{% if prompt or not loop.first %}\n\n{% endif %}"
        "## {{ item.name }}\n{{ item.text }}{% endfor %}"
        "{% if not prompt and not inputs %}(no input){% endif %}"
    ),
    "judge_system.j2": (
        "You decide whether a condition holds, judging only from the values given. "
        'Answer with a JSON object: {"answer": true or false, "reason": "one short sentence"}.'
    ),
    "judge_user.j2": (
        "Condition: {{ text }}"
        "{% for item in values %}\n\n## {{ item.name }}\n{{ item.text }}{% endfor %}"
    ),
    "choice_system.j2": (
        "You pick the one option that best fits the criteria, judging only from the values "
        'given. Answer with a JSON object: {"label": one of the option labels, '
        '"reason": "one short sentence"}.'
    ),
    "choice_user.j2": (
        "Criteria: {{ text }}\n\nOptions:{% for label in options %}\n- {{ label }}{% endfor %}"
        "{% for item in values %}\n\n## {{ item.name }}\n{{ item.text }}{% endfor %}"
    ),
}


class TemplateProblem(InputError):
    """A project's prompt template override cannot be loaded or rendered (exit 1)."""


class TemplateBound(Exception):
    """A template went past one of the bounds above; the message says which."""


@dataclass(frozen=True, slots=True)
class LabelledInput:
    name: str
    text: str


def render_value(value: Value | Any) -> str:
    """An input as the model reads it: a string as itself, anything else as JSON."""
    data = plain(value) if isinstance(value, Value) else value
    if isinstance(data, str):
        return data
    if type(data) is int:  # as `json.dumps` writes it (`int.__repr__`), without its encoder
        return repr(data)
    if not isinstance(data, dict | list | tuple):  # a scalar other than a string: ASCII,
        return json.dumps(data)  # and the same text without the indenting encoder
    return json.dumps(data, ensure_ascii=False, indent=2)


_run_budget: ContextVar[Budget | None] = ContextVar("prose_prompt_budget", default=None)


def render_within(budget: Budget) -> None:
    """Let `budget`'s time limit (`--timeout`) stop a project template's rendering, in this
    task and the tasks it starts: a run calls it once, before its program runs (a builder
    may serve several runs, so the budget is not the builder's)."""
    _run_budget.set(budget)


def _templates_state(project_dir: str | Path | None) -> tuple[Any, ...]:
    """What a builder depends on: the override folder and each template file's content."""
    if project_dir is None:
        return (None,)
    folder = Path(project_dir) / TEMPLATE_DIR
    if not folder.is_dir():
        return (str(folder.resolve()), None)
    files = []
    inside = os.path.join(os.path.realpath(folder), "")
    for path in sorted(folder.rglob("*")):
        if not os.path.realpath(path).startswith(inside):  # refused by the loader, never read
            files.append((str(path), os.path.realpath(path)))
        elif path.is_file():
            files.append((str(path), hashlib.sha256(path.read_bytes()).hexdigest()))
    return (str(folder.resolve()), tuple(files))


_BUILDERS: dict[tuple[Any, ...], PromptBuilder] = {}


def _confined_loader(base: Any, folder: str) -> Any:
    """A `FileSystemLoader` of `folder` that reads only files inside it: a template that is
    a link out of the folder (to `/proc/self/environ`, a key file) is a template problem,
    and nothing of what it points at is read or sent."""
    from jinja2 import TemplateError
    from jinja2.loaders import split_template_path

    real_folder = os.path.join(os.path.realpath(folder), "")

    class ConfinedLoader(base):  # type: ignore[misc]
        def get_source(self, environment: Any, template: str) -> Any:
            path = os.path.join(folder, *split_template_path(template))
            if os.path.lexists(path) and not os.path.realpath(path).startswith(real_folder):
                raise TemplateError(
                    f"`{template}` is a link to a file outside {TEMPLATE_DIR}; "
                    "templates are read only from inside their folder")
            return super().get_source(environment, template)

    return ConfinedLoader(folder)


class PromptBuilder:
    """Renders the messages of calls and judgements from (possibly overridden) templates.

    A project template's rendering stops after `render_seconds` (a template
    problem), or when the run's time budget runs out (a budget stop, see
    `render_within`).
    """

    def __init__(
        self, project_dir: str | Path | None = None, *, render_seconds: float = MAX_RENDER_SECONDS
    ) -> None:
        from jinja2 import (
            ChoiceLoader,
            DictLoader,
            Environment,
            FileSystemLoader,
            StrictUndefined,
            TemplateError,
        )
        from jinja2.loaders import BaseLoader

        self._render_seconds = render_seconds
        self._override_dir: str | None = None
        loaders: list[BaseLoader] = []
        if project_dir is not None:
            overrides = Path(project_dir) / TEMPLATE_DIR
            if overrides.is_dir():
                # One spelling of the folder for the loader and for `_is_override`.
                self._override_dir = os.path.join(os.path.abspath(overrides), "")
                loaders.append(_confined_loader(FileSystemLoader, self._override_dir))
        loaders.append(DictLoader(DEFAULT_TEMPLATES))
        self.env = _bounded_sandbox()(
            loader=ChoiceLoader(loaders),
            undefined=StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
        )
        # Our own templates are not a project's code: they render without the sandbox's
        # checks on every attribute and call (the same text, compiled once).
        own = Environment(undefined=StrictUndefined, autoescape=False,
                          keep_trailing_newline=False)
        self._templates = {}
        # Our own templates' output for text-only contexts: a slot's system message is
        # the same for every call of it (a project's template renders every time).
        self._rendered: dict[tuple[str, tuple[tuple[str, Any], ...]], str] = {}
        for name in DEFAULT_TEMPLATES:
            try:
                template = self.env.get_template(name)
                if not self._is_override(template.filename):
                    template = own.from_string(DEFAULT_TEMPLATES[name])
                    # Jinja keeps a template's globals as a ChainMap over the environment's
                    # and copies it into a dict on every render (half of a render's cost);
                    # ours are fixed, so the template holds that dict once.
                    template.globals = dict(template.globals)
                self._templates[name] = template
            except TemplateError as error:
                raise TemplateProblem(
                    f"a prompt template in {TEMPLATE_DIR} is invalid: {error}"
                ) from None
            except (RecursionError, MemoryError, SyntaxError):  # nested past what Python compiles
                raise TemplateProblem(
                    f"the prompt template `{TEMPLATE_DIR / name}` is nested too deep to compile"
                ) from None

    @classmethod
    def for_project(cls, project_dir: str | Path | None) -> PromptBuilder:
        """The builder for `project_dir`, made once while its `.prose/templates/` is unchanged
        (the same files with the same content).

        Building one compiles every template (some 4 ms); runs in one process (`prose test`,
        a library user's loop) share it, and an edited template makes a new one."""
        key = _templates_state(project_dir)
        found = _BUILDERS.get(key)
        if found is None:
            found = cls(project_dir)
            _BUILDERS[key] = found
            while len(_BUILDERS) > 8:
                _BUILDERS.pop(next(iter(_BUILDERS)))
        return found

    def _render(self, name: str, **context: Any) -> str:
        from jinja2 import TemplateError

        template = self._templates[name]
        project = self._is_override(template.filename)
        where = f"`{TEMPLATE_DIR / name}`" if project else f"`{name}`"
        try:
            if not project:
                if any(not isinstance(item, str) for item in context.values()):
                    return str(template.render(**context)).strip()
                memo = (name, tuple(context.items()))
                text = self._rendered.get(memo)
                if text is None:
                    if len(self._rendered) >= MAX_RENDERED:
                        self._rendered.clear()
                    text = self._rendered[memo] = str(template.render(**context)).strip()
                return text
            return self._render_bounded(template.generate(**context), where)
        except ProseError:
            raise  # a budget stop
        except TemplateBound as error:
            raise TemplateProblem(f"the prompt template {where} {error}") from None
        except TemplateError as error:  # an override used a name it is not given, or unsafe code
            raise TemplateProblem(f"the prompt template {where} failed: {error}") from None
        except RecursionError:
            raise TemplateProblem(
                f"the prompt template {where} failed: it recursed too deep"
            ) from None
        except Exception as error:  # a project's template is code: 1/0, int("x"), ...
            raise TemplateProblem(
                f"the prompt template {where} failed: {type(error).__name__}: {error}"
            ) from None

    def _is_override(self, filename: str | None) -> bool:
        return bool(self._override_dir and filename and filename.startswith(self._override_dir))

    def _render_bounded(self, chunks: Iterator[str], where: str) -> str:
        """A project template's output, stopped at `MAX_TEXT_CHARS` or the deadline.

        The deadline is checked on every line the template's compiled code
        runs (a trace on its frames only), so a loop that prints nothing
        stops too.
        """
        budget = _run_budget.get()
        run_left = budget.remaining_time() if budget is not None else None
        by_run = run_left is not None and run_left < self._render_seconds
        deadline = time.monotonic() + (run_left if run_left is not None and by_run
                                       else self._render_seconds)
        prefix = self._override_dir or "\0"

        def on_line(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line" and time.monotonic() > deadline:
                raise self._late(where, budget if by_run else None)
            return on_line

        def on_call(frame: FrameType, event: str, arg: Any) -> Any:
            return on_line if frame.f_code.co_filename.startswith(prefix) else None

        previous = sys.gettrace()
        sys.settrace(on_call)
        try:
            out: list[str] = []
            size = 0
            for chunk in chunks:
                size += len(chunk)
                if size > MAX_TEXT_CHARS:
                    raise TemplateBound(f"printed more than {MAX_TEXT_CHARS:,} characters")
                out.append(chunk)
        finally:
            sys.settrace(previous)
        return "".join(out).strip()

    def _late(self, where: str, budget: Budget | None) -> Exception:
        if budget is not None:
            timeout = budget.limits.timeout
            return budget.stop(
                "timeout",
                f"budget stop: the time budget of {timeout:g}s ran out while the prompt"
                f" template {where} was rendering",
            )
        return TemplateBound(f"ran longer than {self._render_seconds:g}s")

    def call_messages(
        self,
        *,
        role: str | None,
        ensures: str | None,
        prompt: str | None,
        inputs: Mapping[str, Value],
    ) -> list[Message]:
        """The messages of one slot call: a system message (if any) and the user message.

        An input whose value is null is left out: a heading over the word `null` tells the
        model nothing it can use (the policy still judges it with the others).
        """
        labelled = [LabelledInput(name, render_value(value)) for name, value in inputs.items()
                    if not _is_null(value)]
        system = self._render("call_system.j2", role=role or "", ensures=ensures or "")
        user = self._render("call_user.j2", prompt=prompt or "", inputs=labelled)
        messages = [Message.system(system)] if system else []
        messages.append(Message.user(user))
        return messages

    def judge_messages(self, text: str, values: Mapping[str, Any]) -> list[Message]:
        labelled = [LabelledInput(name, render_value(value)) for name, value in values.items()]
        return [
            Message.system(self._render("judge_system.j2")),
            Message.user(self._render("judge_user.j2", text=text, values=labelled)),
        ]

    def choice_messages(
        self, text: str, options: Sequence[str], values: Mapping[str, Any]
    ) -> list[Message]:
        labelled = [LabelledInput(name, render_value(value)) for name, value in values.items()]
        return [
            Message.system(self._render("choice_system.j2")),
            Message.user(
                self._render("choice_user.j2", text=text, options=list(options), values=labelled)
            ),
        ]


def _is_null(value: Value | Any) -> bool:
    return (value.data if isinstance(value, Value) else value) is None


def messages_to_dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    from prose.llm.types import message_dict

    return [message_dict(message) for message in messages]


# The bounded sandbox ------------------------------------------------------------------

# A %-format's width or precision (`%99999999d`, `%.5f`, `%*d`), and a str.format spec's.
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?")
_NUMBER = re.compile(r"\d+")
# Filters that return their input's items or a number, never text built from them.
_STRUCTURE_FILTERS = frozenset({
    "abs", "attr", "batch", "count", "d", "default", "dictsort", "filesizeformat", "first",
    "float", "groupby", "int", "items", "last", "length", "list", "random", "reverse", "round",
    "slice",
})  # fmt: skip


def _bound(
    size: float, what: str, limit: int = MAX_TEXT_CHARS, unit: str = "characters",
    *, counted: bool = True,
) -> None:
    """Refuse `what` of `size`; `counted=False`: the size is a `text_size` (counted up to the
    limit only), so the message does not give it."""
    if size > limit:
        amount = f"{size:,.0f} {unit}, more than {limit:,}" if counted else f"more than {limit:,} {unit}"
        raise TemplateBound(f"asked for {what} of {amount}")


def text_size(value: Any) -> int:
    """About how long `value` is as text: a string's length, a container's parts summed
    (counted only up to just past `MAX_TEXT_CHARS`, so a huge one costs no more)."""
    total, stack = 0, [value]
    while stack and total <= MAX_TEXT_CHARS:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, Mapping):
            total += 4 * len(item)
            stack.extend(item.items())
        elif isinstance(item, list | tuple | set | frozenset):
            total += 2 * len(item)
            stack.extend(item)
        else:
            total += 8
    return total


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def bounded_range(*args: int) -> range:
    """`range` for templates: at most `MAX_RANGE_ITEMS` items."""
    items = range(*args)
    _bound(len(items), "range()", MAX_RANGE_ITEMS, "items")
    return items


def bounded_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse `left operator right` before it builds too large a number, string or list."""
    if operator == "%" and isinstance(left, str):
        _percent_bound(left, right)
    elif _is_int(left) and _is_int(right):
        if operator == "**" and right > 0 and abs(left) > 1:
            _bound(right * math.log2(abs(left)), "a power", MAX_INT_BITS, "bits")
        elif operator in ("*", "+"):
            bits = left.bit_length() + right.bit_length()
            _bound(bits if operator == "*" else bits / 2 + 1, "a number", MAX_INT_BITS, "bits")
    elif operator == "*":
        sequence, times = (left, right) if _is_int(right) else (right, left)
        if _is_int(times) and isinstance(sequence, str | list | tuple):
            size = text_size(sequence)
            _bound(size * times, "a repeated string or list", counted=size <= MAX_TEXT_CHARS)
            if not isinstance(sequence, str):
                _bound(len(sequence) * times, "a repeated list", MAX_LIST_ITEMS, "items")
    elif operator == "+" and isinstance(left, str | list | tuple):
        _bound(text_size(left) + text_size(right), "a joined string or list", counted=False)


def _percent_bound(text: str, arguments: Any) -> None:
    """Refuse a %-format whose widths, precisions or arguments make too long a string."""
    values = arguments if isinstance(arguments, tuple) else (arguments,)
    _bound(len(text) + text_size(values), "a %-formatted string", counted=False)
    for match in _PERCENT_SPEC.finditer(text):
        for part in match.groups():
            stars = [abs(value) for value in values if _is_int(value)] if part == "*" else []
            width = max(stars, default=0) if part == "*" else int(part or 0)
            _bound(width, "a %-format width")


def _format_bound(text: str, arguments: Any) -> None:
    """Refuse a str.format whose spec widths or arguments make too long a string."""
    import string

    _bound(len(text) + text_size(arguments), "a formatted string", counted=False)
    for _, _, spec, _ in string.Formatter().parse(text):
        for number in _NUMBER.findall(spec or ""):
            _bound(int(number), "a format width")


def _filter_bound(name: str, value: Any, *args: Any, **kwargs: Any) -> Any:
    """Refuse a filter call that would build too much text; return the value to filter
    (a `join` of a generator gets the generator's items as a list, counted once)."""
    if name in _STRUCTURE_FILTERS:
        if name == "slice" and args and _is_int(args[0]):
            _bound(args[0], "slices", MAX_LIST_ITEMS, "items")
        return value
    if name == "join" and not isinstance(value, str | list | tuple):
        value = list(value)
    size = text_size(value)
    _bound(size, f"`{name}` of a text", counted=False)
    if name == "join":
        _bound(size + len(str(args[0] if args else "")) * len(value), "a joined text", counted=False)
    elif name in ("center", "indent"):
        width = args[0] if args else kwargs.get("width", 80)
        lines = str(value).count("\n") + 1
        _bound(size + (width if _is_int(width) else len(str(width))) * lines, "a padded text")
    elif name == "replace" and len(args) >= 2:
        old, new = str(args[0]), str(args[1])
        times = str(value).count(old) if old else size + 1
        _bound(size + times * max(len(new) - len(old), 0), "a replaced text")
    elif name == "format":
        _percent_bound(str(value), tuple(args))
    elif name in ("wordwrap", "urlize"):
        extra = sum(len(str(v)) for v in (*args, *kwargs.values()) if isinstance(v, str))
        _bound(size * (2 + extra), f"`{name}` of a text")
    return value


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    first = 1 if getattr(function, "jinja_pass_arg", None) is not None else 0

    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        if len(args) > first:
            value = _filter_bound(name, args[first], *args[first + 1 :], **kwargs)
            args = (*args[:first], value, *args[first + 1 :])
        return function(*args, **kwargs)

    return bounded


# The str methods that build a long string from short arguments: the length they would make.
_STR_METHODS: dict[str, Callable[..., float]] = {
    "center": lambda text, width, *_: width,
    "ljust": lambda text, width, *_: width,
    "rjust": lambda text, width, *_: width,
    "zfill": lambda text, width: width,
    "expandtabs": lambda text, size=8: len(text) * max(size, 1),
    "join": lambda text, items: text_size(items) + len(text) * len(items),
    "replace": lambda text, old, new, count=-1: len(text)
    + (text.count(old) if old else len(text) + 1) * max(len(new) - len(old), 0),
}


@functools.lru_cache(maxsize=1)
def _bounded_sandbox() -> type:
    """The sandbox class, made once jinja2 is imported (this module imports it lazily)."""
    from jinja2.compiler import CodeGenerator, Frame
    from jinja2.nodes import Concat
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class BoundedCodeGenerator(CodeGenerator):
        """Compiles `a ~ b` to `bounded_concat`, which sizes the parts before joining."""

        def visit_Concat(self, node: Concat, frame: Frame) -> None:
            self.write("environment.bounded_concat((")
            for part in node.nodes:
                self.visit(part, frame)
                self.write(", ")
            self.write("))")

    class BoundedSandbox(ImmutableSandboxedEnvironment):
        """The sandbox with this module's bounds: Jinja's hooks for operators (`call_binop`),
        calls (`call`), `str.format` (`wrap_str_format`) and printed values (`finalize`)."""

        code_generator_class = BoundedCodeGenerator
        intercepted_binops = frozenset({"*", "**", "+", "%"})

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, finalize=self.bounded_output, **kwargs)
            self.globals["range"] = bounded_range
            self.globals.pop("lipsum", None)  # lipsum(n=10**9) writes for ever
            for name, function in list(self.filters.items()):
                self.filters[name] = _bounded_filter(name, function)

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            bounded_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            estimate = _STR_METHODS.get(getattr(__obj, "__name__", ""))
            if isinstance(getattr(__obj, "__self__", None), str) and estimate is not None:
                if __obj.__name__ == "join" and args and not isinstance(args[0], list | tuple):
                    args = (list(args[0]), *args[1:])
                try:
                    size = estimate(__obj.__self__, *args, **kwargs)
                except TypeError:
                    size = 0  # wrong arguments: the call itself says so
                _bound(size, f"str.{__obj.__name__}() of a string", counted=__obj.__name__ != "join")
            return super().call(__context, __obj, *args, **kwargs)

        def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
            wrapped = super().wrap_str_format(value)
            if wrapped is None:
                return None
            text: str = value.__self__
            run = wrapped

            def bounded(*args: Any, **kwargs: Any) -> str:
                _format_bound(text, (args, kwargs))
                return run(*args, **kwargs)

            return bounded

        @staticmethod
        def bounded_output(value: Any) -> Any:
            if not isinstance(value, str):
                _bound(text_size(value), "a printed value", counted=False)
            return value

        @staticmethod
        def bounded_concat(parts: tuple[Any, ...]) -> str:
            _bound(text_size(parts), "a joined (~) string", counted=False)
            return "".join(part if isinstance(part, str) else str(part) for part in parts)

    return BoundedSandbox
