"""Generates docs/architecture.md: the layers of `prose`, drawn from its import graph.

Run: python -m prose.cli.architecture_doc [docs/architecture.md]
     python -m prose.cli.architecture_doc --cycles   (print the import cycles; exit 1 if any)

The graph is read from the source with `ast`, never by importing it. It holds
every `import` in prose/: those at module level (they run when the module is
imported), those inside a function (they run on its first call, and still
close a circle) and those under `if TYPE_CHECKING:` (they never run, so they
are kept apart and are not run-time edges). Relative imports are resolved,
and `from prose.x import y` points at `prose.x.y` when `y` is a submodule.
Importing `prose.a.b` also runs `prose/a/__init__.py` first, so that import is
an edge to `prose.a` too (unless `prose.a` is a package of the importer).
"""

from __future__ import annotations

import ast
import sys
import textwrap
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
TARGET = PACKAGE_DIR.parent / "docs" / "architecture.md"


class When(Enum):
    """When an import statement runs."""

    IMPORT = "import"  # at module level: when the module is imported
    CALL = "call"  # inside a function: on the function's first call
    TYPING = "typing"  # under `if TYPE_CHECKING:`: never (type checkers only)


@dataclass(frozen=True)
class ImportEdge:
    """`source` imports `target` at `line`; `via` is the module whose import runs `target` first."""

    source: str
    target: str
    line: int
    when: When
    via: str | None = None

    @property
    def runs(self) -> bool:
        return self.when is not When.TYPING

    def describe(self) -> str:
        via = f" (importing {self.via})" if self.via else ""
        return f"{self.source}:{self.line} -> {self.target}{via} [{self.when.value}]"


@dataclass
class ImportGraph:
    """The modules of a package (name -> file) and the imports between them."""

    modules: dict[str, Path]
    edges: list[ImportEdge]
    third_party: dict[str, set[str]] = field(default_factory=dict)  # module -> top-level names

    def run_time(self) -> dict[str, set[str]]:
        """module -> the modules it imports when it runs (TYPE_CHECKING imports left out)."""
        adjacency: dict[str, set[str]] = {name: set() for name in self.modules}
        for edge in self.edges:
            if edge.runs and edge.source != edge.target:
                adjacency[edge.source].add(edge.target)
        return adjacency

    def edge(self, source: str, target: str) -> ImportEdge:
        """The first run-time import of `target` by `source`, preferring a module-level one."""
        found = [e for e in self.edges if (e.source, e.target) == (source, target) and e.runs]
        return min(found, key=lambda e: (e.when is not When.IMPORT, e.via is not None, e.line))


def module_name(path: Path, package_dir: Path = PACKAGE_DIR) -> str:
    """`prose/runtime/calls.py` -> `prose.runtime.calls`; a package's `__init__.py` -> the package."""
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def build_graph(package_dir: Path = PACKAGE_DIR) -> ImportGraph:
    """The import graph of every module under `package_dir`."""
    files = {module_name(path, package_dir): path for path in sorted(package_dir.rglob("*.py"))}
    root = package_dir.name
    graph = ImportGraph(files, [])
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node, when in _import_statements(tree.body, When.IMPORT):
            for target in _targets(node, package, files):
                if target.split(".")[0] != root:
                    top = target.split(".")[0]
                    if when is not When.TYPING and top and top not in sys.stdlib_module_names:
                        graph.third_party.setdefault(name, set()).add(top)
                    continue
                known = _nearest_module(target, files)
                if known is None:
                    continue
                graph.edges.append(ImportEdge(name, known, node.lineno, when))
                graph.edges.extend(
                    ImportEdge(name, ancestor, node.lineno, when, via=known)
                    for ancestor in _ancestors(known)
                    if ancestor in files and ancestor != name and ancestor not in _ancestors(name)
                )
    return graph


def _ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def _nearest_module(target: str, modules: Mapping[str, Path]) -> str | None:
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_statements(
    nodes: Iterable[ast.AST], when: When
) -> Iterator[tuple[ast.Import | ast.ImportFrom, When]]:
    """Every import statement under `nodes`, with when it runs."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, when
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _import_statements(node.body, When.TYPING)
            yield from _import_statements(node.orelse, when)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            inner = When.TYPING if when is When.TYPING else When.CALL
            yield from _import_statements(ast.iter_child_nodes(node), inner)
        else:
            yield from _import_statements(ast.iter_child_nodes(node), when)


def _targets(node: ast.Import | ast.ImportFrom, package: str, modules: Mapping[str, Path]) -> list[str]:
    """The modules one statement imports, relative imports resolved against `package`."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = package
        for _ in range(node.level - 1):
            anchor = anchor.rpartition(".")[0]
        base = f"{anchor}.{base}" if base else anchor
    found = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    return list(dict.fromkeys(found))


# --- cycles -----------------------------------------------------------------------------


def strongly_connected(adjacency: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of a directed graph (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    nodes = sorted(set(adjacency) | {t for targets in adjacency.values() for t in targets})

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(adjacency.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    for node in nodes:
        if node not in index:
            visit(node)
    return sorted(components)


def find_cycles(adjacency: Mapping[str, Iterable[str]]) -> list[tuple[str, ...]]:
    """Import cycles: for every module that is on one, a shortest cycle through it.

    A cycle is given from its smallest name, without repeating it at the end;
    cycles found twice (from two of their modules) are listed once.
    """
    found: dict[tuple[str, ...], None] = {}
    for component in strongly_connected(adjacency):
        members = set(component)
        for start in component:
            cycle = _shortest_cycle(adjacency, start, members)
            if cycle is not None:
                turn = cycle.index(min(cycle))
                found[cycle[turn:] + cycle[:turn]] = None
    return sorted(found, key=lambda cycle: (len(cycle), cycle))


def _shortest_cycle(
    adjacency: Mapping[str, Iterable[str]], start: str, members: set[str]
) -> tuple[str, ...] | None:
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(adjacency.get(node, ())):
            if successor == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return tuple(reversed(path))
            if successor in members and successor not in parent:
                parent[successor] = node
                queue.append(successor)
    return None


def describe_cycle(graph: ImportGraph, cycle: tuple[str, ...]) -> str:
    """One cycle as the import statements that make it, one per line."""
    steps = zip(cycle, cycle[1:] + cycle[:1], strict=True)
    return "\n".join("  " + graph.edge(source, target).describe() for source, target in steps)


# --- packages ---------------------------------------------------------------------------


def package_of(module: str) -> str:
    """`prose.runtime.calls` -> `prose.runtime`; a module at the top stays itself."""
    return ".".join(module.split(".")[:2])


def package_edges(graph: ImportGraph) -> dict[tuple[str, str], When]:
    """(package, package) -> the earliest time one imports the other (IMPORT before CALL before TYPING)."""
    rank = {When.IMPORT: 0, When.CALL: 1, When.TYPING: 2}
    found: dict[tuple[str, str], When] = {}
    for edge in graph.edges:
        key = (package_of(edge.source), package_of(edge.target))
        if key[0] != key[1] and (key not in found or rank[edge.when] < rank[found[key]]):
            found[key] = edge.when
    return found


def layers(packages: Iterable[str], edges: Mapping[tuple[str, str], When]) -> dict[str, int]:
    """package -> layer: 0 imports no other package at run time; a circle shares one layer."""
    adjacency: dict[str, set[str]] = {name: set() for name in packages}
    for (source, target), when in edges.items():
        if when is not When.TYPING:
            adjacency[source].add(target)
    component_of = {m: tuple(c) for c in strongly_connected(adjacency) for m in c}
    level: dict[tuple[str, ...], int] = {}

    def depth(component: tuple[str, ...]) -> int:
        if component not in level:
            level[component] = 0  # a guard; components form a DAG
            below = {component_of[t] for m in component for t in adjacency[m]} - {component}
            level[component] = 1 + max(map(depth, below)) if below else 0
        return level[component]

    return {name: depth(component_of[name]) for name in adjacency}


# --- the document -----------------------------------------------------------------------

# Packages whose `__init__` docstring is too short to explain them; the text used instead.
PARAGRAPHS: dict[str, str] = {
    "prose.cli": """
        The `prose` command line: thin commands over the library. `main.py` is a
        click group that imports a command's module (`*_cmd.py`) only when that
        command runs, so `prose lint` never loads what `prose run` needs (LiteLLM
        above all). A command parses its arguments, calls the library, renders the
        result and exits with a code: 0 success, 1 findings or errors in the input,
        2 usage or I/O error; `prose run` adds 3 budget stop, 4 model failure and 5
        information-hiding violation. A user error is one line, never a traceback
        (`--debug` shows it). The generators of docs/cli.md, docs/patterns.md and
        this file live here too (`docgen.py`, `patterns_doc.py`, `architecture_doc.py`).
    """,
    "prose.diagnostics": """
        Diagnostics: what the parser, the spec loader and the linter report, and how
        it is rendered. A `Diagnostic` (`model.py`) has a stable code, a severity, a
        category, a one-line message and a span with file, line and column;
        `convert.py` turns an error that stops a stage into one. `render.py` picks a
        format by name: `full` and `concise` text with code frames (`render_text.py`,
        `frame.py`), `json`, `sarif` (for code scanning) and `github` (workflow
        annotations); `summary.py` gives the totals every format closes with.
    """,
}

# The route of `prose run`, step by step: (modules named, text). Written by hand from
# the code; `render` fails when a module named here no longer exists.
ROUTE: list[tuple[tuple[str, ...], str]] = [
    (("prose.cli.main", "prose.cli.run_cmd"), """
        `prose run` loads `prose.cli.run_cmd` on first use. `run_command` turns every
        exception into an exit code (a traceback only with `--debug`)."""),
    (("prose.cli.run_cmd", "prose.pattern_file", "prose.check"), """
        `_run` resolves the target (a pattern file, a library pattern by name, or an
        instance file) and reads the pattern once (`PatternFile`: text, spec,
        program). Unless `--no-check`, `prose.check.lint_pattern` lints it and an
        error refuses the run (exit 1). Then it reads the inputs, config, bindings,
        the script and the LLM config, picks the default model (`prose.llm.resolve`)
        and calls `run_pattern` with the `PatternFile` under `asyncio.run`."""),
    (("prose.runtime.runner", "prose.runtime.loading", "prose.lang.policy"), """
        `run_pattern` checks everything it can before a call: the slots' bindings,
        config and inputs, the information-hiding policy compiled from the spec, the
        cache and the trace file (a problem is an `InputError`, exit 1). It picks the
        client (`scripted_client` for `--script`, else `RouterClient`), writes
        `run_start`, runs the `Interpreter` under the time budget and writes `run_end`
        whatever happened."""),
    (("prose.runtime.interpreter", "prose.runtime.calls", "prose.runtime.call_site",
      "prose.lang.screen"), """
        The `Interpreter` walks the AST; a call's target and properties are evaluated
        and handed to `calls.call_service`. At the first call of a call site to a
        service, `call_site.compile_site` works out what every call there shares (the
        slot's `ensures`, the role, the schema's words, the parameters, the policy's
        screen). The policy is asked first: a call whose values carry nothing the
        slot's rules read is cleared by the screen (`prose.lang.screen`), any other is
        judged by `Policy.violations`; a violation stops the run (exit 5) before
        anything is sent. Then it makes the attempts (`retry:`)."""),
    (("prose.runtime.attempts", "prose.runtime.exchange"), """
        `attempts.attempt` traces one attempt and hands it to its kind of service (a
        model, a Python callable, a nested pattern). A model attempt, like the judge's
        decisions, goes through `exchange`: the cache, the budget's admission (a
        budget stop is exit 3), the run's cap on calls in flight, then
        `client.complete(ChatRequest)` and the usage and cost meters."""),
    (("prose.llm.router_client", "prose.llm.direct", "prose.llm.error_mapping"), """
        `RouterClient.complete` imports LiteLLM on its first call, builds a
        `litellm.Router` from the config, sends `acompletion` with the retry policy
        (through the router, or for a model group with nothing to route straight
        to `litellm.acompletion` with its deployment's parameters), turns LiteLLM's exceptions into `LLMError`s (a failure is exit 4) and returns
        a `ChatResponse` with usage and cost. A script is served by the same router
        through a provider of its own (`prose.llm.script_provider`)."""),
    (("prose.runtime.trace",), """
        Each attempt is one `call` event, written when it ends. The trace is JSON
        lines, each holding the sha256 of the line before (secrets masked);
        `prose audit` (`prose.ledger.audit`) re-checks it afterwards."""),
]


def _label(name: str) -> str:
    if name == "prose":
        return "prose/__init__"
    short = name.split(".", 1)[1]
    return f"{short}.py" if (PACKAGE_DIR / f"{short}.py").is_file() else f"{short}/"


def _node(name: str) -> str:
    return name.replace(".", "_")


def _paragraph(name: str, graph: ImportGraph) -> str:
    if name in PARAGRAPHS:
        return " ".join(textwrap.dedent(PARAGRAPHS[name]).split())
    tree = ast.parse(graph.modules[name].read_text(encoding="utf-8"))
    docstring = ast.get_docstring(tree) or "(no docstring)"
    return docstring if graph.modules[name].name == "__init__.py" else docstring.split("\n\n")[0]


def _names(names: Iterable[str]) -> str:
    return ", ".join(f"`{_label(name)}`" for name in sorted(names)) or "-"


# How to add each kind of thing: the files it touches, tests and docs included (written by
# hand; `render` checks that every file named exists).
HOW_TO_ADD: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("A statement written as sugar",
     "A new spelling of a construct the language has (as `loop for each` is `for` with a "
     "`max`, `for x in xs (max: N)` a `For` whose `max` came out of the modifiers): the "
     "builder makes the existing node, so the linter, the flow analysis and the "
     "interpreter need nothing. 4 to 8 files; measured (issue 36, on a scratch branch): "
     "`until C (max: N):` as sugar for `loop until C (max: N):` touched 5 (the grammar, "
     "the builder, the parser's list of value starters, language.md, a test); that list "
     "is now read from the grammar's parse table (`prose.syntax.parser._starts`), so 4, "
     "and the parser generated from the grammar, 5. "
     "Completion reads its keywords from the grammar (`prose.syntax.keywords`).",
     [("grammar/prose.lark", "the rule"),
      ("prose/syntax/standalone_parser.py", "generated: `python -m prose.syntax.generate_parser` "
       "(tests/test_standalone_parser.py holds it to the grammar)"),
      ("prose/syntax/build.py", "build the existing node from it"),
      ("prose/syntax/format.py", "only if `prose fmt` must keep the spelling (a flag on the node, "
       "as `For.each`); else it writes the canonical form"),
      ("prose/syntax/nodes.py", "only for that flag"),
      ("editors/vscode/syntaxes/prose.codeblock.tmLanguage.json", "a new keyword "
       "(tests/test_keywords.py holds it to the grammar)"),
      ("docs/language.md", "the statement table of section 3"),
      ("tests/test_prosescript.py", "parse, round trip and run it (or a test file of its own)")]),
    ("A loop kind",
     "A construct that runs a body more than once: besides the sugar above, its shape, which "
     "every bound question (PT301-PT304, the flow analysis, the interpreter) reads.",
     [("prose/lang/loops.py", "`loop_shape`: its variables, count, max, items, condition, bodies"),
      ("prose/syntax/walk.py", "`loops` finds it, if it is not a `LoopNode`")]),
    ("An invariant form",
     "A new checkable `### Invariants` bullet. 8 to 10 files; measured (issue 36, on a "
     "scratch branch): `` `A` runs in no loop `` (a static rule) touched 10, 5 of them "
     "code (its class, its pattern, its `case`, its rule, the list `prose explain` kept of "
     "such rules, now `judges_invariants` on the rule itself), the rest its fixture, its "
     "parse case and three pages (two generated).",
     [("prose/lang/invariants.py", "its frozen dataclass, in `InvariantForm` and `FORMS`"),
      ("prose/spec/invariants.py", "its pattern and what a match builds: a row of `_FORMS`"),
      ("prose/lang/policy.py", "its `case` in `compile_policy` (mypy fails without one: the "
       "match ends in `assert_never`); a form about calls is then judged by "
       "`Policy.violations` for lint, run and audit alike"),
      ("prose/check/rules/structure_invariants.py", "only for a static property of the program "
       "(as PT304): a rule that asks `forms(ctx, ItsClass)`, in this or a new rule module, "
       "registered with `@rule(..., judges_invariants=True)` (what `prose explain` counts as "
       "an invariant's check)"),
      ("prose/lang/gates.py", "for a form about *when* a slot runs (as `runs only if`): its "
       "compiled rule in `Gates` and its judgement in `GateHistory.violations`, which the run "
       "time asks before each call and the audit over the recorded calls"),
      ("prose/check/dominance.py", "for such a form: what holds on every path to a call (the "
       "facts its rule in prose/check/rules/gates.py is proven from)"),
      ("tests/fixtures/rules/PT304.yaml", "that rule's failing and passing cases (a file per code)"),
      ("docs/rules/PT304.md", "generated from the rule's docstring: `python -m prose.check.docgen` "
       "(which writes docs/rules/README.md's index too)"),
      ("docs/language.md", "the table of section 5"),
      ("tests/test_spec_invariants.py", "its parse cases")]),
    ("A call property",
     "A reserved property of `call` (as `prompt`, `retry`). 4 to 6 files.",
     [("prose/lang/properties.py", "`RESERVED_PROPERTIES`, and `MODEL_CHANNELS` when its value "
       "reaches the model (hiding then applies to it)"),
      ("prose/lang/channels.py", "what it sends into the model, if it does"),
      ("prose/runtime/calls.py", "read it from the call's reserved properties (`call_options`; "
       "`prose/runtime/call_site.py`'s `CallOptions` holds it)"),
      ("docs/language.md", "section 3 and 4.4"),
      ("tests/test_runtime.py", "a run that uses it")]),
    ("A lint rule",
     "A new `prose lint` finding with a stable code. 3 or 4 files.",
     [("prose/check/findings.py", "for a fact the semantic model finds while it resolves names "
       "(prose/check/semantic.py records it): its finding class, which carries its code and "
       "writes its message, labels and help (as pyflakes' messages.py); the rule is then a "
       "`FindingRule` naming it, with no `check` of its own"),
      ("prose/check/rules/unused.py", "or a module of its own: the rule class under "
       "`@rule(code=..., name=..., category=..., severity=...)` (its entry in the registry), "
       "its docstring the rule's documentation"),
      ("tests/fixtures/rules/PT304.yaml", "its failing and passing cases (a file per code)"),
      ("docs/rules/PT304.md", "generated from the docstring: `python -m prose.check.docgen`")]),
    ("A model provider of prose's own",
     "A LiteLLM provider answered in process (as `prose-script/`, `prose-local/`). 3 files.",
     [("prose/llm/local.py", "as an example, a module of its own: its answer functions (a "
       "call's keyword arguments to a `ProviderReply`) and a `register_..._provider` handing "
       "them to `prose.llm.providers.register_custom_provider`, which makes the handler class "
       "and writes the reply (text, tool calls, usage) into LiteLLM's response"),
      ("prose/llm/loader.py", "call that registration when LiteLLM is loaded"),
      ("tests/test_llm_scripted.py", "a call routed to it (or a test file of its own)")]),
    ("A lint output format",
     "A new `prose lint --format NAME`. 4 files.",
     [("prose/diagnostics/render.py", "its renderer in `RENDERERS` (the CLI's choices are "
       "that table's names)"),
      ("prose/diagnostics/render_json.py", "or a module of its own beside it, as render_sarif.py"),
      ("docs/cli.md", "regenerated: `prose lint --help` lists the format"),
      ("tests/test_diagnostics_render.py", "its output for the shared diagnostics")]),
]


def render(graph: ImportGraph | None = None) -> str:
    """docs/architecture.md as markdown."""
    graph = graph or build_graph()
    packages = sorted({package_of(name) for name in graph.modules})
    edges = package_edges(graph)
    level = layers(packages, edges)
    order = sorted(packages, key=lambda name: (-level[name], name))
    out = [
        "# Architecture",
        "",
        "Generated by `python -m prose.cli.architecture_doc` from the code: the import",
        "graph read from every module, and each package's docstring. Do not edit by hand.",
        "",
        "## Layers",
        "",
        "An arrow `A --> B`: a module of `A` imports a module of `B` when it is imported;",
        "a dotted arrow: only inside a function (a lazy import, made on first use).",
        "Imports under `if TYPE_CHECKING:` never run and are not drawn. A package imports",
        "only packages in lower layers, or in its own layer when they import each other.",
        "",
        "```mermaid",
        "flowchart TD",
    ]
    for layer in sorted(set(level.values()), reverse=True):
        out.append(f"  subgraph layer{layer} [layer {layer}]")
        out += [f'    {_node(n)}["{_label(n)}"]' for n in order if level[n] == layer]
        out.append("  end")
    for (source, target), when in sorted(edges.items()):
        if when is not When.TYPING:
            arrow = "-->" if when is When.IMPORT else "-.->"
            out.append(f"  {_node(source)} {arrow} {_node(target)}")
    out += [
        "```",
        "",
        "| layer | package | imports when imported | imports only inside functions "
        "| imports for type checkers only | third-party imports |",
        "|---|---|---|---|---|---|",
    ]
    for name in order:
        by_when = {w: {t for (s, t), e in edges.items() if s == name and e is w} for w in When}
        third = sorted({top for m, tops in graph.third_party.items() if package_of(m) == name
                        for top in tops})
        out.append(f"| {level[name]} | `{_label(name)}` | {_names(by_when[When.IMPORT])} "
                   f"| {_names(by_when[When.CALL])} | {_names(by_when[When.TYPING])} "
                   f"| {', '.join(f'`{t}`' for t in third) or '-'} |")
    out += ["", "## Packages"]
    for name in order:
        out += ["", f"### `{_label(name)}`", "", _paragraph(name, graph)]
    out += [
        "",
        "## The route of a run",
        "",
        "What `prose run PATTERN` does, module by module (written by hand from the code;",
        "the generator checks that every module named still exists).",
        "",
    ]
    for number, (modules, text) in enumerate(ROUTE, 1):
        missing = [m for m in modules if m not in graph.modules]
        if missing:
            raise ValueError(f"the route names modules that no longer exist: {missing}")
        named = ", ".join(f"`{m}`" for m in modules)
        out.append(f"{number}. {named}: {' '.join(textwrap.dedent(text).split())}")
    out += ["", "## How to add", "",
            "The files each kind of addition touches (written by hand; the generator checks",
            "that every file named exists). One definition of each rule lives in `prose/lang/`;",
            "nothing below copies one."]
    root = Path(__file__).resolve().parents[2]
    for title, text, files in HOW_TO_ADD:
        missing = [name for name, _ in files if not (root / name).exists()]
        if missing:
            raise ValueError(f"'how to add' names files that no longer exist: {missing}")
        out += ["", f"### {title}", "", text, ""]
        out += [f"- `{name}`: {why}" for name, why in files]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--cycles"]:
        graph = build_graph()
        cycles = find_cycles(graph.run_time())
        for cycle in cycles:
            print(f"{' -> '.join(cycle)} -> {cycle[0]}\n{describe_cycle(graph, cycle)}")
        print(f"{len(cycles)} import cycle(s)")
        return 1 if cycles else 0
    target = Path(args[0]) if args else TARGET
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
