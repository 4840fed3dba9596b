"""Issue 14.12: a project's prompt template cannot hang a run or exhaust its memory.

Nested `range(100000)` loops in `.prose/templates/` ran 22 minutes despite
`--timeout 20`; `{{ 10 ** 10000000 }}` and `'x' * 3000000000` (5.9 GB) were
computed. Each hostile template below is refused before it builds anything
large, or stopped at its deadline, with an error naming the template file.
"""

from __future__ import annotations

import contextvars
import time
from pathlib import Path

import pytest

from prose.runtime.budget import Budget, Limits
from prose.runtime.errors import BudgetExceeded
from prose.runtime.prompts import (
    MAX_INT_BITS,
    MAX_RANGE_ITEMS,
    MAX_TEXT_CHARS,
    PromptBuilder,
    TemplateProblem,
    render_within,
)
from prose.runtime.values import wrap
from tests.conftest import run_prose

WHERE = "the prompt template `.prose/templates/call_user.j2`"
HANG_BOUND_S = 60  # the hang was 22 minutes; a stopped render takes a fraction of a second
BIG = "{% set s = 'x' * 1000000 %}"


def builder(tmp_path: Path, template: str, **options: float) -> PromptBuilder:
    folder = tmp_path / ".prose" / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "call_user.j2").write_text(template, encoding="utf-8")
    return PromptBuilder(tmp_path, **options)


def render(prompts: PromptBuilder) -> str:
    messages = prompts.call_messages(
        role=None, ensures=None, prompt="hi", inputs={"task": wrap("the task")}
    )
    return messages[-1].content


def refusal(tmp_path: Path, template: str, **options: float) -> str:
    with pytest.raises(TemplateProblem) as caught:
        render(builder(tmp_path, template, **options))
    message = caught.value.message
    assert message.startswith(WHERE + " "), message
    return message.removeprefix(WHERE + " ")


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{% for a in range(100000) %}{% endfor %}",
         f"asked for range() of 100,000 items, more than {MAX_RANGE_ITEMS:,}"),
        ("{{ 10 ** 10000000 }}",
         f"asked for a power of 33,219,281 bits, more than {MAX_INT_BITS:,}"),
        ("{{ 'x' * 3000000000 }}",
         f"asked for a repeated string or list of 3,000,000,000 characters, more than {MAX_TEXT_CHARS:,}"),
        ("{{ ([1] * 3000000000)|length }}",
         "asked for a repeated string or list of 30,000,000,000 characters, more than 1,000,000"),
        ("{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}"
         "{% endfor %}", "asked for a joined (~) string of more than 1,000,000 characters"),
        ("{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}"
         "{% endfor %}", "asked for a joined string or list of more than 1,000,000 characters"),
        ("{{ 'x'|center(3000000000) }}",
         "asked for a padded text of 3,000,000,001 characters, more than 1,000,000"),
        ("{{ 'x'.center(3000000000) }}",
         "asked for str.center() of a string of 3,000,000,000 characters, more than 1,000,000"),
        ("{{ '%3000000000d' % 1 }}",
         "asked for a %-format width of 3,000,000,000 characters, more than 1,000,000"),
        ("{{ '%3000000000d'|format(1) }}",
         "asked for a %-format width of 3,000,000,000 characters, more than 1,000,000"),
        ("{{ '{:>3000000000}'.format(1) }}",
         "asked for a format width of 3,000,000,000 characters, more than 1,000,000"),
        (BIG + "{{ s|replace('x', s) }}",
         "asked for a replaced text of 1,000,000,000,000 characters, more than 1,000,000"),
        (BIG + "{{ [s, s]|join }}", "asked for `join` of a text of more than 1,000,000 characters"),
        (BIG + "{{ [s, s] }}", "asked for a printed value of more than 1,000,000 characters"),
        (BIG + "{{ [s, s]|map('upper')|list|length }}",
         "asked for `map` of a text of more than 1,000,000 characters"),
        ("{% for a in range(10000) %}{% for b in range(10000) %}xxxxxxxxxx{% endfor %}{% endfor %}",
         f"printed more than {MAX_TEXT_CHARS:,} characters"),
        ("{{ lipsum(1000000000) }}", "failed: 'lipsum' is undefined"),
        ("{{ 1 / 0 }}", "failed: ZeroDivisionError: division by zero"),
        ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "failed: it recursed too deep"),
    ],
    ids=[
        "range", "power", "string-repeat", "list-repeat", "doubling-concat", "doubling-plus",
        "center-filter", "center-method", "percent-width", "format-filter", "str-format-width",
        "replace", "join", "printed-list", "map", "printing-loop", "lipsum", "zero-division",
        "recursion",
    ],
)
def test_a_hostile_template_is_refused_naming_its_file(
    tmp_path: Path, template: str, why: str
) -> None:
    started = time.monotonic()
    # Each is refused by its own bound, not the render deadline: the deadline is set to the
    # hang guard, so a loaded machine (a slow render) cannot change which rule answers.
    assert refusal(tmp_path, template, render_seconds=HANG_BOUND_S) == why
    assert time.monotonic() - started < HANG_BOUND_S


@pytest.mark.parametrize(
    "template",
    [
        "{% for a in range(10000) %}{% for b in range(10000) %}{% endfor %}{% endfor %}",
        "{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
    ],
    ids=["nested-ranges", "nested-string-loops"],
)
def test_a_template_that_loops_for_ever_is_stopped_at_its_deadline(
    tmp_path: Path, template: str
) -> None:
    started = time.monotonic()
    assert refusal(tmp_path, template, render_seconds=0.2) == "ran longer than 0.2s"
    assert time.monotonic() - started < HANG_BOUND_S


@pytest.mark.parametrize(
    "template",
    ["{{ " + "(" * 20000 + "1" + ")" * 20000 + " }}", "{% if true %}" * 3000 + "{% endif %}" * 3000],
    ids=["parentheses", "blocks"],
)
def test_a_template_nested_too_deep_to_compile_is_refused(tmp_path: Path, template: str) -> None:
    with pytest.raises(TemplateProblem) as caught:
        builder(tmp_path, template)
    assert caught.value.message == (
        "the prompt template `.prose/templates/call_user.j2` is nested too deep to compile"
    )


def test_the_runs_time_budget_stops_a_render(tmp_path: Path) -> None:
    prompts = builder(tmp_path, "{% for a in range(10000) %}{% for b in range(10000) %}"
                                "{% endfor %}{% endfor %}")

    def run() -> None:
        render_within(Budget(Limits(timeout=0.2)))
        render(prompts)

    with pytest.raises(BudgetExceeded) as caught:
        contextvars.copy_context().run(run)  # the budget stays in this context
    assert caught.value.message == (
        "budget stop: the time budget of 0.2s ran out while the prompt template"
        " `.prose/templates/call_user.j2` was rendering"
    )
    assert caught.value.exit_code == 3


def test_a_template_within_the_bounds_renders_as_before(tmp_path: Path) -> None:
    template = (
        "{{ prompt }} {{ inputs|map(attribute='name')|join(', ') }} {{ range(3)|list }}"
        " {{ 2 ** 10 }} {{ 'ab' * 2 }} {{ 'a' ~ 1 }} {{ '%03d'|format(7) }} {{ '{:>3}'.format('x') }}"
        " {{ 'b'.center(3, '*') }} {{ 'a-b'|replace('-', '+') }} {{ [3, 1]|sort|first }}"
        " {{ '-'.join(['a', 'b']|map('upper')) }} {{ ['a', 'b']|map('upper')|join('/') }}"
    )
    assert render(builder(tmp_path, template)) == (
        "hi task [0, 1, 2] 1024 abab a1 007   x *b* a+b 1 A-B A/B"
    )


def test_the_built_in_templates_print_a_large_input_whole(tmp_path: Path) -> None:
    text = "word " * (MAX_TEXT_CHARS // 4)  # past the cap on what a project template prints
    messages = PromptBuilder(tmp_path).call_messages(
        role=None, ensures=None, prompt=None, inputs={"doc": wrap(text)}
    )
    assert messages[-1].content == "## doc\n" + text.strip()


def test_prose_run_with_a_hostile_template_exits_1_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "one.prose.md").write_text(PATTERN, encoding="utf-8")
    (tmp_path / "script.yaml").write_text("slots:\n  worker: [ok]\n", encoding="utf-8")
    folder = tmp_path / ".prose" / "templates"
    folder.mkdir(parents=True)
    (folder / "call_user.j2").write_text("{{ 'x' * 3000000000 }}", encoding="utf-8")
    result = run_prose("run", "one.prose.md", "--script", "script.yaml", cwd=tmp_path)
    assert result.code == 1
    assert f"R012 {WHERE} asked for a repeated string or list of 3,000,000,000" in result.output


PATTERN = """---
name: one
kind: pattern
version: 0.1.0
---

# One

One call.

### Slots

- `worker`
  - ensures: an answer

### Config

- None.

### Invariants

- none

### Parameters

- None.

### Returns

- `result`: the answer

### Delegation

```prose
let x = call worker
  prompt: "go"
return { result: x }
```
"""
