"""One way to dispatch on AST nodes: the `Visitor` base.

A subclass names one method per node class it handles, `<prefix><ClassName>`
(`visit_Let`, `visit_Name`, ...); `visit(node, *args)` calls the method for
the node's class with the node and the extra arguments, and returns what the
method returns. A node with no method is refused: `refuse` raises
`UnknownNode`, which names the node's class and its position. Nothing is
skipped silently, so a new node class breaks loudly in every walk that has no
rule for it.

Dispatch is on the node's exact class (a subclass of a node class needs a
method of its own); the method found for a (prefix, class) pair is cached per
visitor class. Several classes may share one method (`visit_For = visit_Repeat`).

A visitor with two families of methods, say statements and expressions, gives
the prefix explicitly::

    class Interpreter(Visitor[Awaitable[Value]]):
        async def exec_stmt(self, stmt, scope):
            return await self.handler(stmt, "exec_")(stmt, scope)

        async def eval(self, expr, scope):
            return await self.handler(expr, "eval_")(expr, scope)

`handler(node, prefix)` returns the bound method and never calls it, so the
same base serves synchronous and asynchronous handlers: for async ones,
`await self.visit(node, ...)` or `await self.handler(node, prefix)(node, ...)`.
A subclass that must raise its own error class overrides `refuse` (it must
raise). The type parameter is what the handlers return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, NoReturn, TypeVar, cast

from prose.errors import ProseError
from prose.syntax.nodes import Node

R = TypeVar("R")


class UnknownNode(ProseError):
    """A walk met a node it has no rule for (a node class without a handler)."""

    def __init__(self, node: Node, message: str) -> None:
        self.node = node
        self.span = node.span
        self.message = message
        where = f"{node.span}: " if node.span.line > 0 else ""
        super().__init__(where + message)


class Visitor(Generic[R]):
    """Dispatches a node to the method named `prefix + type(node).__name__` (see the module)."""

    prefix: ClassVar[str] = "visit_"
    # How a refusal names the walk ("the flow analysis has no rule for ...").
    role: ClassVar[str] = "this visitor"
    # (prefix, node class) -> the method as the class holds it (None: there is none).
    _handlers: ClassVar[dict[tuple[str, type[Node]], Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handlers = {}

    def handler(self, node: Node, prefix: str | None = None) -> Callable[..., R]:
        """The bound method for `node` in the family `prefix` (default: the class's `prefix`).

        Calls `refuse` when there is none."""
        family = self.prefix if prefix is None else prefix
        cls = type(self)
        key = (family, type(node))
        try:
            found = cls._handlers[key]
        except KeyError:
            found = cls._handlers[key] = _lookup(cls, family + type(node).__name__)
        if found is None:
            self.refuse(node, family)
        return cast("Callable[..., R]", found.__get__(self, cls))

    def visit(self, node: Node, *args: Any, **kwargs: Any) -> R:
        """Call the method for `node` (in the default family) with `node` and the arguments."""
        return self.handler(node)(node, *args, **kwargs)

    def refuse(self, node: Node, prefix: str) -> NoReturn:
        """Called for a node with no method: raise `UnknownNode` (a subclass may raise its own)."""
        name = type(node).__name__
        raise UnknownNode(node, f"{self.role} has no rule for a `{name}` node "
                                f"(`{type(self).__name__}` has no `{prefix}{name}` method)")


def _lookup(cls: type, name: str) -> Any:
    """The attribute `name` as the first class in `cls`'s MRO that defines it holds it."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return None
