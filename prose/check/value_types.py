"""The types the linter knows: of call results with a schema, of config keys, and what
is read from them.

A conservative inference over the whole program (names are not split by scope, as
PK505 does): a variable has a type when every place that binds it gives a known type
(`let verdict = call critic`, `verdict = null`, `for task in plan.subtasks`); a name
also bound by anything else (a block parameter, a catch, a value of unknown shape) is
`any`, and nothing is checked about it. Types are those of `prose.lang.types`, the
language the run validates replies with, so what the linter says a field is, the run
enforces.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from prose.check.declarations import Declarations
from prose.lang import types as t
from prose.syntax import nodes as n
from prose.syntax.walk import binds, bound_names, find_all, walk_statements

_ROUNDS = 3  # a name's type may come from one bound later in the text (a loop's carry)


@dataclass(frozen=True, slots=True)
class TypedRead:
    """A read the linter can check: `.name` of a value of type `holder`."""

    node: n.Member
    holder: t.Type
    name: str


class ValueTypes:
    """The types of a program's names and expressions, as far as declarations say."""

    def __init__(self, decl: Declarations, program: n.Program) -> None:
        self.decl = decl
        self.program = program
        self.slot_types: dict[str, t.Type] = {}
        for slot in decl.slots.values():
            if slot.output_schema and not slot.list_valued:
                found = _record(slot.output_schema)
                if found is not None:
                    self.slot_types[slot.name] = found
        self.config_types: dict[str, t.Type] = {}
        for key in decl.config.values():
            parsed = t.try_parse(key.type) if key.type else None
            if parsed is not None:
                self.config_types[key.name] = parsed
        self.bound = bound_names(program)
        self.names: dict[str, t.Type] = {}
        self._infer()

    def _infer(self) -> None:
        sources: dict[str, list[n.Expr | tuple[str, n.Expr]]] = {}
        typed_binders: set[str] = set()
        for statement in walk_statements(self.program.body):
            if isinstance(statement, n.Let) and len(statement.names) == 1:
                sources.setdefault(statement.names[0], []).append(statement.value)
                typed_binders.add(statement.names[0])
            elif isinstance(statement, n.Assign) and isinstance(statement.target, n.Name):
                sources.setdefault(statement.target.name, []).append(statement.value)
            elif isinstance(statement, n.For) and not statement.index_var:
                sources.setdefault(statement.var, []).append(("item", statement.iterable))
                typed_binders.add(statement.var)
        poisoned = set(self.bound)
        poisoned.difference_update(typed_binders)
        for statement in walk_statements(self.program.body):  # bound again by another form
            typed = _typed_binding(statement)
            poisoned.update(name for name in binds(statement) if name != typed)
            if isinstance(statement, n.Append):
                poisoned.update(_appended_names(statement))
        for _ in range(_ROUNDS):
            found: dict[str, t.Type] = {}
            for name, exprs in sources.items():
                if name in poisoned or name not in typed_binders:
                    continue
                options = [
                    t.item_type(self.type_of(e[1])) if isinstance(e, tuple) else self.type_of(e)
                    for e in exprs
                ]
                found[name] = t.ANY if t.ANY in options else t.join(options)
            if found == self.names:
                break
            self.names = found

    def type_of(self, expr: n.Expr | None) -> t.Type:
        """The type of `expr`'s value, `any` when the declarations do not say."""
        if expr is None:
            return t.ANY
        if isinstance(expr, n.Name):
            if expr.name in self.names:
                return self.names[expr.name]
            if expr.name in self.config_types and expr.name not in self.bound:
                return self.config_types[expr.name]
            return t.ANY
        if isinstance(expr, n.Member):
            holder = self.type_of(expr.obj)
            if expr.name == "length" and isinstance(t.without_null(holder), t.ListOf):
                return t.Base("integer")
            return t.field_type(holder, expr.name) or t.ANY
        if isinstance(expr, n.Index):
            holder = t.without_null(self.type_of(expr.obj))
            key = _string_key(expr.index)
            if isinstance(holder, t.Record) and key is not None:
                return holder.get(key) or t.ANY
            return t.item_type(holder) if key is None else t.ANY
        if isinstance(expr, n.Call):
            return self._call_type(expr)
        if isinstance(expr, n.Literal):
            return t.NULL if expr.value is None else t.ANY
        return t.ANY

    def _call_type(self, call: n.Call) -> t.Type:
        schema = call.property("schema")
        if schema is not None:
            if not isinstance(schema.value, n.Object):
                return t.ANY
            texts: dict[str, str] = {}
            for entry in schema.value.entries:
                if not (isinstance(entry.value, n.String)
                        and all(isinstance(part, str) for part in entry.value.parts)):
                    return t.ANY
                texts[entry.key] = entry.value.text
            return _record(texts) or t.ANY
        if isinstance(call.target, n.Name) and call.target.name not in self.bound:
            return self.slot_types.get(call.target.name, t.ANY)
        return t.ANY

    def reads(self) -> Iterator[TypedRead]:
        """Every `.name` read whose holder's type is known (conditions included)."""
        for member in find_all(self.program, n.Member):
            holder = self.type_of(member.obj)
            if holder != t.ANY:
                yield TypedRead(member, holder, member.name)


def _record(fields: dict[str, str]) -> t.Type | None:
    parsed: dict[str, t.Type] = {}
    for name, text in fields.items():
        found = t.try_parse(text)
        if found is None:
            return None
        parsed[name] = found
    return t.record(parsed)


def _string_key(expr: n.Expr) -> str | None:
    if isinstance(expr, n.String) and len(expr.parts) == 1 and isinstance(expr.parts[0], str):
        return expr.parts[0]
    return None


def _typed_binding(statement: n.Stmt) -> str | None:
    """The one name a single-name `let` or a `for` without an index binds: the forms
    whose value gives the name its type."""
    if isinstance(statement, n.Let) and len(statement.names) == 1:
        return statement.names[0]
    if isinstance(statement, n.For) and not statement.index_var:
        return statement.var
    return None


def _appended_names(statement: n.Append) -> tuple[str, ...]:
    target = getattr(statement, "target", None)
    return (target.name,) if isinstance(target, n.Name) else ()


# The last declarations and program typed, and their types: three rules (PK520, PK521,
# PH637) ask for the same program's, one after the other.
_LAST: tuple[Declarations, n.Program, ValueTypes] | None = None


def value_types(decl: Declarations, program: n.Program) -> ValueTypes:
    """The types of `program`'s names (`ValueTypes`, read only), made once for the last
    program asked for."""
    global _LAST
    last = _LAST  # read once: another thread may replace it
    if last is not None and last[0] is decl and last[1] is program:
        return last[2]
    found = ValueTypes(decl, program)
    _LAST = (decl, program, found)
    return found
