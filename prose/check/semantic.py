"""The semantic model: one walk over the program that resolves every name.

Rules query the model instead of walking the AST themselves. It records
bindings (with their kind and uses), references (resolved or not), call
sites with what they target, assignments to read-only names, second `let`
statements, loop control outside loops, parallel-branch races and
unreachable statements. Scoping follows LANGUAGE.md 4.1: one scope per
pattern body, a child scope per parallel branch and per block. A node the
walk has no `visit_` method for is refused (`prose.syntax.visitor.UnknownNode`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from prose.check.declarations import Declarations
from prose.check.findings import (
    ArityMismatch,
    BadAssignTarget,
    BadCallTarget,
    BlindJudge,
    BranchWritesOuter,
    ConditionNotExpression,
    EmptyConditionText,
    Finding,
    LetRepeated,
    LoopControlMisplaced,
    LoopVariableShadows,
    NameUndefined,
    ReadBeforeJoin,
    ReadOnlyAssigned,
    SiblingsBindSameName,
    StrayClause,
    Unreachable,
)
from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax.visitor import Visitor
from prose.syntax.walk import bound_names, place_root, root_name, walk_statements

BindingKind = Literal["let", "const", "loop", "catch", "block", "alias", "param", "agent"]
F = TypeVar("F", bound=Finding)
READ_ONLY_KINDS = ("const", "loop", "catch", "block", "alias", "param", "agent")
# Agent properties whose value may be a bare word (docs/language.md 3.2).
AGENT_WORDS = ("model", "persist")


@dataclass
class Binding:
    """A name bound in the program, where and how."""

    name: str
    kind: BindingKind
    span: Span
    scope: Scope
    uses: int = 0
    # The slot a loop variable iterates over (`for d in delegates`), if any.
    service_of: str | None = None
    # The config key or parameter a loop variable iterates over, if any.
    iterates: str | None = None
    statements: list[Span] = field(default_factory=list)


@dataclass
class Scope:
    """Names visible in a pattern, a branch or a block."""

    kind: Literal["pattern", "branch", "block"]
    parent: Scope | None = None
    names: dict[str, Binding] = field(default_factory=dict)
    # For a branch of a `parallel:` block: names its siblings bind.
    sibling_names: dict[str, Span] = field(default_factory=dict)

    def lookup(self, name: str) -> Binding | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None


@dataclass(frozen=True)
class Reference:
    """A use of a name, where and how."""

    name: str
    span: Span
    context: Literal["read", "interpolation", "condition", "call-target", "do"]
    resolved: Literal["variable", "slot", "config", "parameter", "undefined", "pending-branch"]


@dataclass(frozen=True)
class CallSite:
    """A call and what it calls."""

    call: n.Call
    slot: str | None  # the declared slot called, directly or through a loop variable
    target: Literal["slot", "service-variable", "alias", "block", "unknown"]
    index_var: str | None = None
    bound: Span | None = None  # where a service variable was bound


@dataclass
class SemanticModel:
    """A program's bindings, references, scopes and calls."""

    decl: Declarations
    program: n.Program
    bindings: list[Binding] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    slot_uses: dict[str, int] = field(default_factory=dict)
    config_uses: dict[str, int] = field(default_factory=dict)
    list_valued_slots: set[str] = field(default_factory=set)

    def findings_of(self, kind: type[F]) -> Iterator[F]:
        """The findings of class `kind` (its subclasses too), in the order they were found."""
        return (finding for finding in self.findings if isinstance(finding, kind))


def build_model(decl: Declarations, program: n.Program) -> SemanticModel:
    """Walk `program` once and return its semantic model."""
    model = SemanticModel(decl, program)
    model.list_valued_slots = {name for name, slot in decl.slots.items() if slot.list_valued}
    _Walker(model).run()
    return model


class _Walker(Visitor[None]):
    """One `visit_<Node>(node, scope)` per node class, statements and expressions alike."""

    role = "the semantic model"

    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        self.decl = model.decl
        self.root = Scope("pattern")
        self.loop_depth = 0
        self.blocks: dict[str, n.BlockDef] = {}
        self.in_parallel_branch: list[Scope] = []
        self.in_block = 0
        # Names the program binds somewhere: a block reads its home scope when it is
        # called, so a name bound after the `block` statement is not undefined there.
        self.bound_anywhere = bound_names(model.program)
        # Names a block reads that are bound after its definition (a later `let`, one
        # published by a `parallel:` join): those bindings are read (PN105 must not fire).
        self.late_reads: set[str] = set()

    # --- entry ---------------------------------------------------------------

    def run(self) -> None:
        # Every block definition that may run, also one inside an `if` (the top-level one
        # first: it is hoisted; a nested one is bound when its statement runs).
        for statement in walk_statements(self.model.program.body):
            if isinstance(statement, n.BlockDef) and statement.name not in self.blocks:
                self.blocks[statement.name] = statement
                self._bind(self.root, statement.name, "block", statement.span)
        # `agent` definitions are declarations: a session may come before its agent.
        for statement in self.model.program.body:
            if isinstance(statement, n.AgentDef) and self.root.lookup(statement.name) is None:
                binding = self._bind(self.root, statement.name, "agent", statement.span)
                binding.uses = 0
        self._body(self.model.program.body, self.root)
        for binding in self.model.bindings:
            if binding.name in self.late_reads and binding.kind in ("let", "const"):
                binding.uses += 1

    # --- binding and lookup ----------------------------------------------------

    def _bind(self, scope: Scope, name: str, kind: BindingKind, span: Span,
              service_of: str | None = None) -> Binding:
        binding = Binding(name, kind, span, scope, service_of=service_of)
        scope.names[name] = binding
        self.model.bindings.append(binding)
        return binding

    def _reference(self, name: str, span: Span, scope: Scope,
                   context: Literal["read", "interpolation", "condition", "call-target", "do"]) -> None:
        binding = scope.lookup(name)
        if binding is not None:
            binding.uses += 1
            resolved: Literal["variable", "slot", "config", "parameter", "undefined",
                              "pending-branch"] = "variable"
        elif name in scope.sibling_names:
            resolved = "pending-branch"
            self.model.findings.append(
                ReadBeforeJoin(name=name, span=span, bound=scope.sibling_names[name])
            )
        elif name in self.decl.slots:
            resolved = "slot"  # a service value; only a call counts as using the slot
        elif name in self.decl.config:
            resolved = "config"
            self.model.config_uses[name] = self.model.config_uses.get(name, 0) + 1
        elif name in self.decl.parameters:
            resolved = "parameter"
        elif self.in_block and name in self.bound_anywhere:
            resolved = "variable"  # bound in the block's home scope by the time it is called
            self.late_reads.add(name)
        else:
            resolved = "undefined"
            self.model.findings.append(NameUndefined(name=name, span=span, context=context))
        self.model.references.append(Reference(name, span, context, resolved))

    def _declared_kind(self, name: str) -> str | None:
        if name in self.decl.slots:
            return "slot"
        if name in self.decl.config:
            return "config key"
        if name in self.decl.parameters:
            return "parameter"
        return None

    def _assign_target(self, target: n.Expr, scope: Scope, span: Span, verb: str) -> None:
        root = target
        while isinstance(root, n.Member | n.Index):
            if isinstance(root, n.Index):
                self.visit(root.index, scope)
            root = root.obj
        if not isinstance(root, n.Name):
            self.model.findings.append(BadAssignTarget(span=span))
            return
        name = root.name
        declared = self._declared_kind(name)
        if declared is not None:
            self.model.findings.append(ReadOnlyAssigned(name=name, span=root.span, what=declared))
            return
        binding = scope.lookup(name)
        if binding is None:
            self.model.findings.append(NameUndefined(name=name, span=root.span, context="assignment"))
            return
        if binding.kind in READ_ONLY_KINDS:
            self.model.findings.append(
                ReadOnlyAssigned(name=name, span=root.span, what=_kind_words(binding.kind),
                                 bound=binding.span)
            )
            return
        if self.in_parallel_branch and _outside(binding.scope, self.in_parallel_branch[-1]):
            self.model.findings.append(
                BranchWritesOuter(name=name, span=root.span, bound=binding.span, verb=verb))

    # --- statements ------------------------------------------------------------

    def _body(self, body: tuple[n.Stmt, ...], scope: Scope) -> None:
        ended: n.Stmt | None = None
        reported = False
        for statement in body:
            if ended is not None and not reported:
                self.model.findings.append(
                    Unreachable(keyword=type(ended).__name__.lower(), span=statement.span,
                                exit=ended.span)
                )
                reported = True
            self.visit(statement, scope)
            if isinstance(statement, n.Return | n.Throw | n.Break | n.Continue):
                ended = statement

    def visit_Let(self, statement: n.Let, scope: Scope) -> None:
        self.visit(statement.value, scope)
        for name in statement.names:
            self._bind_let(scope, name, _head(statement), statement.const, statement)
        service = self._service_of(statement.value, scope)
        if service is not None and not statement.destructure:
            binding = scope.lookup(statement.names[0])
            if binding is not None:
                binding.service_of = service

    def _service_of(self, value: n.Expr, scope: Scope) -> str | None:
        """The slot a value denotes as a service: `s`, `s[i]`, or a variable holding one."""
        while isinstance(value, n.Index):
            value = value.obj
        if not isinstance(value, n.Name):
            return None
        binding = scope.lookup(value.name)
        if binding is not None:
            return binding.service_of
        return value.name if value.name in self.decl.slots else None

    def visit_Assign(self, statement: n.Assign, scope: Scope) -> None:
        # Writing into a variable (`x = v`, `x.key = v`) is not reading it.
        self.visit(statement.value, scope)
        self._assign_target(statement.target, scope, statement.span, "assigns")

    def visit_ExprStmt(self, statement: n.ExprStmt, scope: Scope) -> None:
        self.visit(statement.expr, scope)

    def visit_Return(self, statement: n.Return, scope: Scope) -> None:
        if statement.value is not None:
            self.visit(statement.value, scope)

    def visit_Throw(self, statement: n.Throw, scope: Scope) -> None:
        if statement.value is not None:
            self.visit(statement.value, scope)

    def visit_Continue(self, statement: n.Continue, scope: Scope) -> None:
        if self.loop_depth == 0:
            self.model.findings.append(LoopControlMisplaced(keyword="continue", span=statement.span))

    def visit_Break(self, statement: n.Break, scope: Scope) -> None:
        if self.loop_depth == 0:
            self.model.findings.append(LoopControlMisplaced(keyword="break", span=statement.span))

    def visit_Append(self, statement: n.Append, scope: Scope) -> None:
        # Appending to a list is writing it: a list only ever appended to is unused.
        self.visit(statement.value, scope)
        self._assign_target(statement.target, scope, statement.span, statement.keyword + "s into")

    def visit_Repeat(self, statement: n.Repeat, scope: Scope) -> None:
        self.visit(statement.count, scope)
        names: list[tuple[str | None, str | None]] = [(statement.var, None)]
        self._loop_body(statement.body, scope, statement.parallel, names, statement.span)

    def visit_For(self, statement: n.For, scope: Scope) -> None:
        self.visit(statement.iterable, scope)
        if statement.max is not None:
            self.visit(statement.max, scope)
        service_of = None
        if isinstance(statement.iterable, n.Name) and statement.iterable.name in self.decl.slots:
            service_of = statement.iterable.name
            self.model.list_valued_slots.add(service_of)
        elif isinstance(statement.iterable, n.Array):  # `for s in [writer, critic]`
            services = [self._service_of(item, scope) for item in statement.iterable.items]
            if services and all(services):
                service_of = services[0]
                for other in services[1:]:  # each is called where the loop variable is
                    assert other is not None
                    self.model.slot_uses[other] = self.model.slot_uses.get(other, 0) + 1
        names: list[tuple[str | None, str | None]] = [(statement.var, service_of)]
        if statement.index_var:
            names.append((statement.index_var, None))
        root = root_name(statement.iterable)
        iterates = root if root in self.decl.config or root in self.decl.parameters else None
        self._loop_body(statement.body, scope, statement.parallel, names, statement.span,
                        iterates=iterates)

    def visit_Loop(self, statement: n.Loop, scope: Scope) -> None:
        if statement.max is not None:
            self.visit(statement.max, scope)
        names: list[tuple[str | None, str | None]] = [(statement.var, None)]
        if statement.condition is not None:
            # The condition is evaluated before every iteration, the first included.
            self._loop_body((), scope, False, names, statement.span, bind_only=True)
            self._condition(statement.condition, scope)
        self._loop_body(statement.body, scope, False, names, statement.span)

    def _loop_body(self, body: tuple[n.Stmt, ...], scope: Scope, parallel: bool,
                   names: list[tuple[str | None, str | None]], span: Span, bind_only: bool = False,
                   iterates: str | None = None) -> None:
        target = Scope("branch", scope) if parallel else scope
        for name, service_of in names:
            if name is None:
                continue
            existing = target.lookup(name)
            if existing is not None and existing.kind == "loop" and existing.scope is target:
                existing.service_of = existing.service_of or service_of
                continue
            if self._declared_kind(name) is not None or (existing is not None and existing.kind != "loop"):
                self.model.findings.append(LoopVariableShadows(
                    name=name, span=span, bound=existing.span if existing else None))
            binding = self._bind(target, name, "loop", span, service_of)
            if service_of is not None or names[0][0] == name:
                binding.iterates = iterates
        if bind_only:
            return
        self.loop_depth += 1
        if parallel:
            self.in_parallel_branch.append(target)
        try:
            self._body(body, target)
        finally:
            self.loop_depth -= 1
            if parallel:
                self.in_parallel_branch.pop()

    def visit_Parallel(self, statement: n.Parallel, scope: Scope) -> None:
        bound_by: dict[str, tuple[int, Span]] = {}
        for index, branch in enumerate(statement.branches):
            if isinstance(branch, n.Let):
                for name in branch.names:
                    if name in bound_by:
                        self.model.findings.append(
                            SiblingsBindSameName(name=name, span=_head(branch), first=bound_by[name][1])
                        )
                    else:
                        bound_by[name] = (index, _head(branch))
        published: list[tuple[str, n.Let]] = []
        for index, branch in enumerate(statement.branches):
            child = Scope("branch", scope)
            child.sibling_names = {name: span for name, (owner, span) in bound_by.items() if owner != index}
            self.in_parallel_branch.append(child)
            try:
                self.visit(branch, child)
            finally:
                self.in_parallel_branch.pop()
            for binding in child.names.values():
                if binding.kind in ("let", "const"):
                    binding.uses += 1  # read through the name it is published as
            if isinstance(branch, n.Let):
                published.extend((name, branch) for name in branch.names)
            else:  # a `let` nested in an `if`/`for`/`try` of the branch is published too
                for name, binding in child.names.items():
                    if binding.kind in ("let", "const"):
                        published.append((name, n.Let(span=binding.span, names=(name,),
                                                      value=n.Literal(span=binding.span, value=None),
                                                      head=binding.span)))
        for name, branch in published:
            self._bind_let(scope, name, _head(branch), branch.const, branch, count_use=True)
            # A service bound in a branch is still a service after the join.
            service = self._service_of(branch.value, scope) if isinstance(branch, n.Let) else None
            outer = scope.names.get(name)
            if service is not None and outer is not None:
                outer.service_of = outer.service_of or service

    def visit_If(self, statement: n.If, scope: Scope) -> None:
        for branch in statement.branches:
            self._condition(branch.condition, scope)
            self._body(branch.body, scope)
        if statement.orelse is not None:
            self._body(statement.orelse, scope)

    def visit_Orphan(self, statement: n.Orphan, scope: Scope) -> None:
        self.model.findings.append(StrayClause(keyword=statement.keyword, span=statement.span))
        if statement.condition is not None:
            self._condition(statement.condition, scope)
        self._body(statement.body, scope)

    def visit_Choice(self, statement: n.Choice, scope: Scope) -> None:
        self._condition(statement.criteria, scope)
        for option in statement.options:
            self._body(option.body, scope)

    def visit_Try(self, statement: n.Try, scope: Scope) -> None:
        self._body(statement.body, scope)
        if statement.handler is not None:
            if statement.catch_var:
                existing = scope.lookup(statement.catch_var)
                if existing is None or existing.kind != "catch":
                    self._bind(scope, statement.catch_var, "catch", statement.span)
            self._body(statement.handler, scope)
        if statement.final is not None:
            self._body(statement.final, scope)

    def visit_BlockDef(self, statement: n.BlockDef, scope: Scope) -> None:
        inner = Scope("block", scope)
        for param in statement.params:
            binding = self._bind(inner, param, "param", statement.span)
            binding.uses = max(binding.uses, 0)
        saved = self.loop_depth
        self.loop_depth = 0
        self.in_block += 1
        try:
            self._body(statement.body, inner)
        finally:
            self.loop_depth = saved
            self.in_block -= 1

    def visit_Do(self, statement: n.Do, scope: Scope) -> None:
        for arg in statement.args:
            self.visit(arg, scope)
        if statement.name is not None:
            self._reference(statement.name, statement.span, scope, "do")
            block = self.blocks.get(statement.name)
            if block is not None and len(block.params) != len(statement.args):
                self.model.findings.append(
                    ArityMismatch(name=statement.name, span=statement.span, block=block.span,
                                  wanted=len(block.params), given=len(statement.args))
                )
        else:
            self._body(statement.body, Scope("block", scope))

    def visit_Use(self, statement: n.Use, scope: Scope) -> None:
        self._bind(scope, statement.alias, "alias", statement.span)

    def visit_AgentDef(self, statement: n.AgentDef, scope: Scope) -> None:
        for prop in (*statement.properties, *statement.shape):
            if prop.name in AGENT_WORDS and isinstance(prop.value, n.Name):
                continue  # `model: sonnet`, `persist: project`: a word, not a variable
            self.visit(prop.value, scope)
        if scope.lookup(statement.name) is None:  # one nested in a block or branch
            self._bind(scope, statement.name, "agent", statement.span)

    def visit_Session(self, expr: n.Session, scope: Scope) -> None:
        if expr.prompt is not None:
            self.visit(expr.prompt, scope)
        for prop in expr.properties:
            self.visit(prop.value, scope)
        if expr.agent is None:
            return
        binding = scope.lookup(expr.agent)
        if binding is not None and binding.kind == "agent":
            binding.uses += 1
            self.model.references.append(Reference(expr.agent, expr.head, "call-target", "variable"))
            return
        self.model.findings.append(NameUndefined(name=expr.agent, span=expr.head, context="agent"))

    def visit_Pipeline(self, expr: n.Pipeline, scope: Scope) -> None:
        """Each stage's body runs in a scope of its own that binds `item` (`reduce`: its
        two names), read-only; `break` and `continue` cannot leave it."""
        self.visit(expr.source, scope)
        saved = self.loop_depth
        self.loop_depth = 0
        try:
            for stage in expr.stages:
                inner = Scope("block", scope)
                for param in stage.params:
                    binding = self._bind(inner, param, "loop", stage.span)
                    binding.uses = max(binding.uses, 0)
                self._body(stage.body, inner)
        finally:
            self.loop_depth = saved

    # --- expressions -------------------------------------------------------------

    def visit_Literal(self, expr: n.Literal, scope: Scope) -> None:
        pass

    def visit_Name(self, expr: n.Name, scope: Scope) -> None:
        self._reference(expr.name, expr.span, scope, "read")

    def visit_String(self, expr: n.String, scope: Scope) -> None:
        for part in expr.parts:
            if isinstance(part, n.Interpolation):
                self._reference(part.path[0], part.span, scope, "interpolation")

    def visit_Member(self, expr: n.Member, scope: Scope) -> None:
        self.visit(expr.obj, scope)

    def visit_Index(self, expr: n.Index, scope: Scope) -> None:
        self.visit(expr.obj, scope)
        self.visit(expr.index, scope)

    def visit_Shuffle(self, expr: n.Shuffle, scope: Scope) -> None:
        self.visit(expr.items, scope)

    def visit_Array(self, expr: n.Array, scope: Scope) -> None:
        for item in expr.items:
            self.visit(item, scope)

    def visit_Object(self, expr: n.Object, scope: Scope) -> None:
        for entry in expr.entries:
            self.visit(entry.value, scope)

    def visit_Compare(self, expr: n.Compare, scope: Scope) -> None:
        self.visit(expr.left, scope)
        self.visit(expr.right, scope)

    def visit_BoolOp(self, expr: n.BoolOp, scope: Scope) -> None:
        for operand in expr.operands:
            self.visit(operand, scope)

    def visit_Not(self, expr: n.Not | n.IsTest, scope: Scope) -> None:
        self.visit(expr.operand, scope)

    visit_IsTest = visit_Not

    def visit_BinOp(self, expr: n.BinOp, scope: Scope) -> None:
        self.visit(expr.left, scope)
        self.visit(expr.right, scope)

    def visit_Slice(self, expr: n.Slice, scope: Scope) -> None:
        for part in (expr.obj, expr.start, expr.stop):
            if part is not None:
                self.visit(part, scope)

    def visit_Builtin(self, expr: n.Builtin, scope: Scope) -> None:
        for arg in expr.args:
            self.visit(arg, scope)
        for prop in expr.keywords:
            self.visit(prop.value, scope)

    def visit_Call(self, call: n.Call, scope: Scope) -> None:
        for prop in call.properties:
            self.visit(prop.value, scope)
        target = call.target
        root = place_root(target)
        if not isinstance(root, n.Name):
            self.model.calls.append(CallSite(call, None, "unknown"))
            self.model.findings.append(BadCallTarget(name="", span=target.span))
            return
        name = root.name
        binding = scope.lookup(name)
        if binding is not None:
            binding.uses += 1
            if binding.kind == "alias":
                self.model.calls.append(CallSite(call, None, "alias"))
            elif binding.kind == "block":
                self.model.calls.append(CallSite(call, None, "block"))
            else:
                # Whether the variable holds a service is a question of data flow (a copy
                # of a list slot, a block's parameter): the flow analysis answers it (PN102).
                self.model.calls.append(CallSite(call, binding.service_of, "service-variable",
                                                 bound=binding.span))
                if binding.service_of:
                    self.model.slot_uses[binding.service_of] = self.model.slot_uses.get(binding.service_of, 0) + 1
            self.model.references.append(Reference(name, root.span, "call-target", "variable"))
            return
        # `call handlers[0]` (a list-valued slot) or `call handlers[route.category]` (a map
        # slot): a call of one of the slot's services.
        if name in self.decl.slots and (root is target or (isinstance(target, n.Index)
                                                           and target.obj is root)):
            if root is not target:
                self.visit(target, scope)
            self.model.slot_uses[name] = self.model.slot_uses.get(name, 0) + 1
            self.model.calls.append(CallSite(call, name, "slot"))
            self.model.references.append(Reference(name, root.span, "call-target", "slot"))
            return
        self.model.calls.append(CallSite(call, None, "unknown"))
        self.model.findings.append(BadCallTarget(name=name, span=target.span))

    def _condition(self, condition: n.Condition, scope: Scope) -> None:
        if not condition.text:
            self.model.findings.append(EmptyConditionText(span=condition.span))
        if condition.problem is not None:
            self.model.findings.append(ConditionNotExpression(
                span=condition.span, text=condition.text, problem=condition.problem))
        if condition.predicate is not None:
            self.visit(condition.predicate, scope)
            return
        seen: list[str] = []
        for mention in condition.mentions:
            head = mention.split(".")[0]
            binding = scope.lookup(head)
            if binding is not None:
                binding.uses += 1
                seen.append(mention)
            elif head in self.decl.config:
                self.model.config_uses[head] = self.model.config_uses.get(head, 0) + 1
                seen.append(mention)
            elif head in self.decl.parameters and head not in self.decl.slots:
                seen.append(mention)
        if condition.text and condition.is_discretion and not seen:
            self.model.findings.append(BlindJudge(span=condition.span, text=condition.text))

    # --- helpers -------------------------------------------------------------------

    def _bind_let(self, scope: Scope, name: str, span: Span, const: bool, statement: n.Stmt,
                  count_use: bool = False) -> None:
        declared = self._declared_kind(name)
        if declared is not None:
            self.model.findings.append(ReadOnlyAssigned(name=name, span=span, what=declared))
            return
        existing = scope.names.get(name) if self.in_parallel_branch else scope.lookup(name)
        if existing is None:
            binding = self._bind(scope, name, "const" if const else "let", span)
            binding.statements.append(statement.span)
            return
        if existing.kind in READ_ONLY_KINDS:
            self.model.findings.append(
                ReadOnlyAssigned(name=name, span=span, what=_kind_words(existing.kind),
                                 bound=existing.span)
            )
            return
        if statement.span not in existing.statements:
            existing.statements.append(statement.span)
            self.model.findings.append(LetRepeated(name=name, span=span, first=existing.span))


def _head(statement: n.Let) -> Span:
    return statement.head if statement.head.line else statement.span


def _outside(binding_scope: Scope, branch: Scope) -> bool:
    """True when `binding_scope` is not `branch` nor nested inside it."""
    scope: Scope | None = binding_scope
    while scope is not None:
        if scope is branch:
            return False
        scope = scope.parent
    return True


def _kind_words(kind: str) -> str:
    return {
        "const": "constant",
        "loop": "loop variable",
        "catch": "catch variable",
        "block": "block",
        "alias": "`use` alias",
        "param": "block parameter",
        "agent": "agent",
    }.get(kind, kind)
