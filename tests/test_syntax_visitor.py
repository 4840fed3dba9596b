"""The one traversal: `children`, the walks built on it, and the `Visitor` base."""

from __future__ import annotations

import asyncio
import re
import typing
from dataclasses import dataclass, fields

import pytest

from prose.source import Span
from prose.syntax import nodes as n
from prose.syntax import parse_program
from prose.syntax.visitor import UnknownNode, Visitor
from prose.syntax.walk import child_bodies, children, walk_statements

NODE_CLASSES = sorted(
    (value for value in vars(n).values()
     if isinstance(value, type) and issubclass(value, n.Node) and value is not n.Node),
    key=lambda cls: cls.__name__,
)
# What a field annotation may name that holds nodes.
NODE_WORDS = {cls.__name__ for cls in NODE_CLASSES} | {"Stmt", "Expr"}


def _holds_nodes(annotation: str) -> bool:
    return bool(NODE_WORDS & set(re.findall(r"\w+", annotation)))


def _annotations(cls: type) -> dict[str, str]:
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        out.update(getattr(klass, "__annotations__", {}))
    return out


@dataclass(frozen=True, slots=True)
class Mystery(n.Node):
    """A node class no walk knows."""

    name: str = "?"


def test_every_node_class_is_checked() -> None:
    names = {cls.__name__ for cls in NODE_CLASSES}
    assert {"Program", "Comment", "Let", "Call", "Condition", "Interpolation", "Branch"} <= names
    assert set(typing.get_args(n.Stmt)) | set(typing.get_args(n.Expr)) <= set(NODE_CLASSES)


@pytest.mark.parametrize("cls", NODE_CLASSES, ids=lambda cls: cls.__name__)
def test_children_yields_every_node_field_in_order(cls: type[n.Node]) -> None:
    annotations = _annotations(cls)
    values: dict[str, object] = {}
    expected: dict[str, list[n.Node]] = {}  # field -> the markers put in it
    for field in fields(cls):
        if field.name == "span":
            continue
        annotation = annotations[field.name]
        if not _holds_nodes(annotation):
            values[field.name] = "x"
        elif annotation.startswith("tuple["):
            markers = [n.Name(f"{field.name}0"), n.Name(f"{field.name}1")]
            values[field.name] = ("text", *markers) if "str" in annotation else tuple(markers)
            expected[field.name] = markers
        else:
            expected[field.name] = [n.Name(field.name)]
            values[field.name] = expected[field.name][0]
    assert expected or cls in (n.Literal, n.Interpolation, n.Name, n.Continue, n.Break, n.Use,
                                n.Comment)

    def ids(nodes: object) -> list[int]:
        return [id(node) for node in nodes]  # type: ignore[attr-defined]

    assert ids(children(cls(**values))) == ids(m for markers in expected.values() for m in markers)
    # An optional field left empty holds no child.
    optional = [name for name in expected if annotations[name].endswith("| None")]
    if optional:
        emptied = cls(**{**values, **dict.fromkeys(optional)})
        assert ids(children(emptied)) == ids(
            m for name, markers in expected.items() if name not in optional for m in markers)


def test_children_of_a_parsed_program() -> None:
    program = parse_program('let x = call writer\n  brief: "about {topic}"  # why\n')
    let = program.body[0]
    assert list(children(program)) == [let, *program.comments]
    assert isinstance(let, n.Let) and isinstance(let.value, n.Call)
    assert list(children(let)) == [let.value]
    assert [type(child).__name__ for child in children(let.value)] == ["Name", "Property"]
    string = let.value.properties[0].value
    assert isinstance(string, n.String)
    assert [type(child).__name__ for child in children(string)] == ["Interpolation"]
    assert list(children(n.Break())) == []


def test_child_bodies_in_source_order() -> None:
    program = parse_program(
        "if a:\n  let x = 1\nelif b:\n  let y = 2\nelse:\n  let z = 3\n"
        "let xs = for s in items:\n  call s\n"
        "try:\n  throw \"e\"\ncatch as err:\n  let w = err\nfinally:\n  let v = 1\n"
    )
    if_, let, try_ = program.body
    assert [body[0].names for body in child_bodies(if_)] == [("x",), ("y",), ("z",)]  # type: ignore[union-attr]
    assert isinstance(let, n.Let) and isinstance(let.value, n.For)
    assert list(child_bodies(let)) == [let.value.body]
    assert isinstance(try_, n.Try)
    assert list(child_bodies(try_)) == [try_.body, try_.handler, try_.final]
    walked = [type(statement).__name__ for statement in walk_statements(program.body)]
    assert walked == ["If", "Let", "Let", "Let", "Let", "For", "ExprStmt", "Try", "Throw",
                      "Let", "Let"]


def test_loop_node_is_a_type_and_an_isinstance_check() -> None:
    for loop in (n.Repeat(n.Literal(1), None, ()), n.For("x", None, n.Name("xs"), ()),
                 n.Loop(None, None, None, None, ())):
        assert isinstance(loop, n.LoopNode)
    assert not isinstance(n.Parallel((), ()), n.LoopNode)


# --- the visitor -------------------------------------------------------------------


class Counter(Visitor[int]):
    role = "the counter"

    def visit_Name(self, node: n.Name) -> int:
        return 1

    def visit_Array(self, node: n.Array) -> int:
        return sum(self.visit(item) for item in node.items)

    visit_Object = visit_Name  # several classes may share one method

    def expr_Name(self, node: n.Name, bonus: int) -> int:
        return 10 + bonus


def test_visit_dispatches_on_the_class() -> None:
    counter = Counter()
    assert counter.visit(n.Array((n.Name("a"), n.Name("b")))) == 2
    assert counter.visit(n.Object(())) == 1
    assert counter.handler(n.Name("a"), "expr_")(n.Name("a"), 5) == 15
    assert counter.handler(n.Name("a")).__self__ is counter  # type: ignore[attr-defined]


def test_an_unknown_node_is_refused_with_its_position() -> None:
    span = Span("p.prose.md", 7, 3, 7, 9)
    with pytest.raises(UnknownNode) as caught:
        Counter().visit(Mystery(span=span))
    assert str(caught.value) == (
        "p.prose.md:7:3: the counter has no rule for a `Mystery` node "
        "(`Counter` has no `visit_Mystery` method)"
    )
    assert caught.value.span == span and isinstance(caught.value.node, Mystery)
    with pytest.raises(UnknownNode, match=r"^the counter has no rule for a `Literal` node"):
        Counter().visit(n.Literal(1))  # no span: no position
    with pytest.raises(UnknownNode, match="no `expr_Array` method"):
        Counter().handler(n.Array(()), "expr_")


def test_a_subclass_of_a_node_class_needs_its_own_method() -> None:
    @dataclass(frozen=True, slots=True)
    class Alias(n.Name):
        pass

    with pytest.raises(UnknownNode):
        Counter().visit(Alias("a"))


def test_a_visitor_may_raise_its_own_error() -> None:
    class Mine(Exception):
        pass

    class Strict(Counter):
        def refuse(self, node: n.Node, prefix: str) -> None:  # type: ignore[override]
            raise Mine(prefix + type(node).__name__)

    with pytest.raises(Mine, match=r"^visit_Mystery$"):
        Strict().visit(Mystery())
    assert Strict().visit(n.Name("a")) == 1  # inherited methods, a cache of its own


def test_async_handlers() -> None:
    class Evaluator(Visitor["asyncio.Future[int] | object"]):
        async def eval_Name(self, node: n.Name, scope: dict[str, int]) -> int:
            await asyncio.sleep(0)
            return scope[node.name]

        async def eval_Array(self, node: n.Array, scope: dict[str, int]) -> int:
            total = 0
            for item in node.items:
                total += await self.handler(item, "eval_")(item, scope)
            return total

    evaluator = Evaluator()
    array = n.Array((n.Name("a"), n.Name("b")))
    assert asyncio.run(evaluator.handler(array, "eval_")(array, {"a": 1, "b": 2})) == 3
    with pytest.raises(UnknownNode):
        asyncio.run(evaluator.handler(array, "eval_")(n.Array((n.Literal(1),)), {}))


# --- the walks built on it refuse an unknown node the same way -------------------------


MYSTERY_AT = Span("p.prose.md", 4, 5, 4, 12)


def _programs() -> list[n.Program]:
    statement = Mystery(span=MYSTERY_AT)  # an unknown statement, then an unknown expression
    inside = n.Let(("x",), n.Array((n.Literal(1), Mystery(span=MYSTERY_AT))))  # type: ignore[arg-type]
    return [n.Program((statement,)), n.Program((n.Repeat(n.Literal(2), None, (inside,)),))]  # type: ignore[arg-type]


@pytest.mark.parametrize("program", _programs(), ids=["statement", "expression"])
def test_the_semantic_model_refuses_an_unknown_node(program: n.Program) -> None:
    from prose.check.declarations import Declarations
    from prose.check.semantic import build_model

    with pytest.raises(UnknownNode, match=r"^p\.prose\.md:4:5: the semantic model has no rule "
                                          r"for a `Mystery` node \(`_Walker` has no `visit_Mystery`"):
        build_model(Declarations("p.prose.md", "p"), program)


@pytest.mark.parametrize(("program", "family"), list(zip(_programs(), ["exec_", "eval_"], strict=True)),
                         ids=["statement", "expression"])
def test_the_flow_analysis_refuses_an_unknown_node(program: n.Program, family: str) -> None:
    from prose.check.declarations import Declarations
    from prose.check.flow import analyse

    with pytest.raises(UnknownNode, match=rf"^p\.prose\.md:4:5: the flow analysis has no rule for "
                                          rf"a `Mystery` node \(`_Analyser` has no `{family}Mystery`"):
        analyse(Declarations("p.prose.md", "p"), program)


def test_the_formatter_refuses_an_unknown_statement() -> None:
    from prose.syntax.format import format_program

    with pytest.raises(UnknownNode, match=r"^p\.prose\.md:4:5: the formatter has no rule for a "
                                          r"`Mystery` node$"):
        format_program(_programs()[0])


def test_the_formatter_refuses_an_unknown_expression_as_an_unknown_statement() -> None:
    """Issue 36: one refusal for both (before, an expression it had no rule for was a
    ValueError saying it "does not fit on one line")."""
    from prose.syntax.format import format_expr, format_program

    span = Span("p.prose.md", 4, 5, 4, 9)
    program = n.Program((n.Let(("x",), Mystery(span=span)),))  # type: ignore[arg-type]
    with pytest.raises(UnknownNode) as expression:
        format_program(program)
    with pytest.raises(UnknownNode) as statement:
        format_program(n.Program((Mystery(span=span),)))  # type: ignore[arg-type]
    assert str(expression.value) == str(statement.value) == (
        "p.prose.md:4:5: the formatter has no rule for a `Mystery` node")
    with pytest.raises(UnknownNode, match="no rule for a `Mystery` node"):
        format_expr(Mystery(span=span))  # type: ignore[arg-type]
