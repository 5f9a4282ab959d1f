"""The array form of a backward formula: the checked, rewritten formula (see
backward_formulas.py) translated to run over numpy arrays when no graph of the backward
is recorded.

Every tensor of the formula (grad, grads[i], the saved inputs and outputs) is an array
there; every call of a helper or an operator, every Tensor method and every Python
operator on a tensor becomes a call of its array twin, `arrays.NAME(...)` (the
`gradgen.helpers.arrays` package; `x.name(a)` and `name(x, a)` share one twin, `x * y`
is `arrays.mul(x, y)`); what computes plain values (sizes, flags, scalars) stays as it
is. A formula gets an array form only when every call that touches a tensor has a twin;
otherwise `translate` names what is missing and the node keeps its tensor form only (no
partial translation). The twins are read from the package's files with ast (their
`__all__`, and each one's return annotation: an array, a tuple or list of arrays, or a
plain value), never imported.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .formulas import SavedAttribute, SavedKind
from .load import _runtime_source
from .kernels_module import read_all

# The module name generated code reaches the twins through.
NAMESPACE = "arrays"


class Kind(enum.Enum):
    """What a (translated) subexpression is at run time in the array form."""

    ARRAY = "array"  # an ndarray (or a numpy scalar), None for an undefined gradient
    ARRAYS = "arrays"  # a list or tuple of arrays
    VALUE = "value"  # anything else: a number, a size, a dtype, a flag


@dataclass(frozen=True)
class Twins:
    """The array twins (name -> what it returns) and the value helpers."""

    returns: Mapping[str, Kind]
    value_helpers: frozenset[str]


class Untranslatable(Exception):
    """A formula uses something without an array twin (`missing` names it)."""

    def __init__(self, missing: str) -> None:
        super().__init__(missing)
        self.missing = missing


# Python's operators on a tensor, as the twins that stand for them.
_BINARY = {
    ast.Mult: "mul",
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Div: "div",
    ast.Pow: "pow",
    ast.MatMult: "matmul",
    ast.FloorDiv: "floor_divide",
    ast.Mod: "remainder",
    ast.BitAnd: "bitwise_and",
    ast.BitOr: "bitwise_or",
    ast.BitXor: "bitwise_xor",
}
_UNARY = {ast.USub: "neg", ast.Invert: "bitwise_not", ast.UAdd: "positive"}
_COMPARE = {
    ast.Eq: "eq",
    ast.NotEq: "ne",
    ast.Lt: "lt",
    ast.LtE: "le",
    ast.Gt: "gt",
    ast.GtE: "ge",
}
# `0 < x` is Python's reflected `x > 0`.
_REFLECTED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
# Builtins a formula calls on plain values (`tuple(grad.shape)` from the live sugar).
_VALUE_BUILTINS = frozenset({"tuple", "len", "list", "int", "float", "bool"})


def read_twins() -> Twins:
    """The twins of gradgen.helpers.arrays, read from its files."""
    package = _runtime_source("helpers/arrays").parent
    returns: dict[str, Kind] = {}
    for path in sorted(package.glob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exports = read_all(tree, path.name)
        if exports is None:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in exports[0]:
                returns[node.name] = _return_kind(node)
    return Twins(returns, _value_helpers(package / "__init__.py"))


def _return_kind(function: ast.FunctionDef) -> Kind:
    annotation = ast.unparse(function.returns) if function.returns else ""
    if "ndarray" not in annotation:
        return Kind.VALUE
    if annotation.startswith(("tuple[", "list[")):
        return Kind.ARRAYS
    return Kind.ARRAY


def _value_helpers(init: Path) -> frozenset[str]:
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "VALUE_HELPERS"
        ):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


def translate(expression: str, saved: tuple[SavedAttribute, ...], twins: Twins) -> str:
    """The array form of one rewritten formula; Untranslatable when it has none."""
    kinds = {a.local: _saved_kind(a) for a in saved}
    translator = _Translator(kinds, twins)
    tree, _ = translator.expr(ast.parse(expression, mode="eval").body)
    return ast.unparse(ast.fix_missing_locations(tree))


def _saved_kind(attribute: SavedAttribute) -> Kind:
    if attribute.kind in (SavedKind.TENSOR, SavedKind.OUTPUT):
        return Kind.ARRAY
    if attribute.kind is SavedKind.TENSOR_LIST:
        return Kind.ARRAYS
    return Kind.VALUE


def _twin_call(
    name: str, args: list[ast.expr], keywords: list[ast.keyword]
) -> ast.Call:
    function = ast.Attribute(
        value=ast.Name(id=NAMESPACE, ctx=ast.Load()), attr=name, ctx=ast.Load()
    )
    return ast.Call(func=function, args=args, keywords=keywords)


class _Translator:
    """Translates a formula node by node, knowing the kind of each subexpression."""

    def __init__(self, kinds: dict[str, Kind], twins: Twins) -> None:
        self.kinds = kinds
        self.twins = twins

    def expr(self, node: ast.expr) -> tuple[ast.expr, Kind]:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            raise Untranslatable(type(node).__name__)
        return handler(self, node)

    def _twin(self, name: str) -> Kind:
        kind = self.twins.returns.get(name)
        if kind is None:
            raise Untranslatable(name)
        return kind

    def _values(self, nodes: list[ast.expr]) -> list[ast.expr]:
        translated = [self.expr(n) for n in nodes]
        if any(kind is not Kind.VALUE for _, kind in translated):
            raise Untranslatable("a tensor argument of a value helper")
        return [n for n, _ in translated]

    def _keywords(self, keywords: list[ast.keyword]) -> list[ast.keyword]:
        return [ast.keyword(arg=k.arg, value=self.expr(k.value)[0]) for k in keywords]

    # -- leaves -----------------------------------------------------------------------

    def _constant(self, node: ast.Constant) -> tuple[ast.expr, Kind]:
        return node, Kind.VALUE

    def _name(self, node: ast.Name) -> tuple[ast.expr, Kind]:
        if node.id == "grad":
            return node, Kind.ARRAY
        if node.id == "grads":
            return node, Kind.ARRAYS
        if node.id in self.kinds:
            return node, self.kinds[node.id]
        if node.id in ("grad_input_mask", "retain_variables"):
            return node, Kind.VALUE
        raise Untranslatable(node.id)

    def _subscript(self, node: ast.Subscript) -> tuple[ast.expr, Kind]:
        value, kind = self.expr(node.value)
        index = self._values([node.slice])[0]
        if kind is Kind.ARRAY:
            raise Untranslatable("indexing a tensor")
        subscript = ast.Subscript(value=value, slice=index, ctx=ast.Load())
        return subscript, Kind.ARRAY if kind is Kind.ARRAYS else Kind.VALUE

    def _attribute(self, node: ast.Attribute) -> tuple[ast.expr, Kind]:
        """Only `x.shape` (the live sugar's), the same on an array."""
        value, kind = self.expr(node.value)
        if kind is Kind.ARRAY and node.attr == "shape":
            return ast.Attribute(value=value, attr="shape", ctx=ast.Load()), Kind.VALUE
        raise Untranslatable(f"the attribute .{node.attr}")

    def _tuple(self, node: ast.Tuple) -> tuple[ast.expr, Kind]:
        elements = [self.expr(e) for e in node.elts]
        kind = Kind.ARRAYS if any(k is Kind.ARRAY for _, k in elements) else Kind.VALUE
        return ast.Tuple(elts=[e for e, _ in elements], ctx=ast.Load()), kind

    def _list(self, node: ast.List) -> tuple[ast.expr, Kind]:
        elements = [self.expr(e) for e in node.elts]
        kind = Kind.ARRAYS if any(k is Kind.ARRAY for _, k in elements) else Kind.VALUE
        return ast.List(elts=[e for e, _ in elements], ctx=ast.Load()), kind

    # -- operators --------------------------------------------------------------------

    def _bin_op(self, node: ast.BinOp) -> tuple[ast.expr, Kind]:
        (left, left_kind), (right, right_kind) = self.expr(node.left), self.expr(
            node.right
        )
        if left_kind is Kind.VALUE and right_kind is Kind.VALUE:
            return ast.BinOp(left=left, op=node.op, right=right), Kind.VALUE
        name = _BINARY.get(type(node.op), type(node.op).__name__)
        return _twin_call(name, [left, right], []), self._twin(name)

    def _unary_op(self, node: ast.UnaryOp) -> tuple[ast.expr, Kind]:
        operand, kind = self.expr(node.operand)
        if kind is Kind.VALUE:
            return ast.UnaryOp(op=node.op, operand=operand), Kind.VALUE
        name = _UNARY.get(type(node.op), type(node.op).__name__)
        return _twin_call(name, [operand], []), self._twin(name)

    def _compare(self, node: ast.Compare) -> tuple[ast.expr, Kind]:
        left, left_kind = self.expr(node.left)
        rights = [self.expr(c) for c in node.comparators]
        if left_kind is Kind.VALUE and all(k is Kind.VALUE for _, k in rights):
            compare = ast.Compare(
                left=left, ops=node.ops, comparators=[r for r, _ in rights]
            )
            return compare, Kind.VALUE
        if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            # `x is None`: identity, the same of an array as of its tensor.
            compare = ast.Compare(
                left=left, ops=node.ops, comparators=[r for r, _ in rights]
            )
            return compare, Kind.VALUE
        if len(rights) != 1 or type(node.ops[0]) not in _COMPARE:
            raise Untranslatable("a chained or identity comparison of tensors")
        name = _COMPARE[type(node.ops[0])]
        right, _ = rights[0]
        if left_kind is Kind.VALUE:
            name, left, right = _REFLECTED[name], right, left
        return _twin_call(name, [left, right], []), self._twin(name)

    def _if_exp(self, node: ast.IfExp) -> tuple[ast.expr, Kind]:
        test = self._values([node.test])[0]
        (body, body_kind), (orelse, orelse_kind) = self.expr(node.body), self.expr(
            node.orelse
        )
        kind = (
            Kind.ARRAY
            if Kind.ARRAY in (body_kind, orelse_kind)
            else Kind.ARRAYS if Kind.ARRAYS in (body_kind, orelse_kind) else Kind.VALUE
        )
        return ast.IfExp(test=test, body=body, orelse=orelse), kind

    def _bool_op(self, node: ast.BoolOp) -> tuple[ast.expr, Kind]:
        return ast.BoolOp(op=node.op, values=self._values(node.values)), Kind.VALUE

    # -- calls ------------------------------------------------------------------------

    def _call(self, node: ast.Call) -> tuple[ast.expr, Kind]:
        function = node.func
        if isinstance(function, ast.Name):
            return self._function_call(node, function.id)
        if isinstance(function, ast.Attribute):
            return self._method_call(node, function)
        raise Untranslatable("a call of an expression")

    def _function_call(self, node: ast.Call, name: str) -> tuple[ast.expr, Kind]:
        if name in _VALUE_BUILTINS or name in self.twins.value_helpers:
            args = self._values(node.args)
            call = ast.Call(
                func=ast.Name(id=name, ctx=ast.Load()),
                args=args,
                keywords=self._keywords(node.keywords),
            )
            return call, Kind.VALUE
        kind = self._twin(name)
        args = [self.expr(a)[0] for a in node.args]
        return _twin_call(name, args, self._keywords(node.keywords)), kind

    def _method_call(
        self, node: ast.Call, function: ast.Attribute
    ) -> tuple[ast.expr, Kind]:
        receiver, receiver_kind = self.expr(function.value)
        if receiver_kind is Kind.VALUE and function.attr == "zeros":
            # `zeros_like(x)` of a formula, rewritten to the TypeAndSize saved for x.
            return _twin_call("type_and_size_zeros", [receiver], []), self._twin(
                "type_and_size_zeros"
            )
        if receiver_kind is not Kind.ARRAY:
            raise Untranslatable(f"the method .{function.attr} of a non-tensor")
        kind = self._twin(function.attr)
        args = [receiver, *(self.expr(a)[0] for a in node.args)]
        return _twin_call(function.attr, args, self._keywords(node.keywords)), kind


def inline_no_ops(expression: str) -> str:
    """A translated formula with the no-op cases of its `maybe_multiply` and
    `handle_r_to_c` calls decided inline (what a node's apply_arrays runs)."""
    tree = _NoOpInliner().visit(ast.parse(expression, mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))


class _NoOpInliner(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)  # (inner calls first: handle_r_to_c sees its IfExp)
        function = node.func
        if (
            isinstance(function, ast.Attribute)
            and isinstance(function.value, ast.Name)
            and function.value.id == NAMESPACE
        ):
            return _inline_no_op(node, function.attr, node.args, node.keywords)
        return node


def _argument_of(node: ast.expr, method: str) -> ast.expr:
    """x for `helpers.METHOD(x)` (a call of `method` with one argument), else node."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and len(node.args) == 1
    ):
        return node.args[0]
    return node


def _inline_no_op(
    call: ast.Call, name: str, args: list[ast.expr], keywords: list[ast.keyword]
) -> ast.expr:
    """`call` with its common no-op case decided inline, where a helper only passes
    its argument on: `maybe_multiply(x, s)` when the number s (or its conjugate) is 1,
    `handle_r_to_c(t, g)` when the array g (or -g) is not complex (or None: the
    helper's own test, and what g's negation raises is raised). The helper still
    runs in every other case, so the result is the helper's, without its call."""
    if keywords or len(args) != 2:
        return call
    first, second = args
    if name == "maybe_multiply":
        # (a number's conjugate is 1 when it is 1)
        scalar = _argument_of(second, "scalar_conj")
        if isinstance(scalar, (ast.Name, ast.Constant)):
            one = ast.Compare(left=scalar, ops=[ast.Eq()], comparators=[_constant(1)])
            return ast.IfExp(test=one, body=first, orelse=call)
    if name == "handle_r_to_c":
        if isinstance(second, ast.IfExp):
            # Into both branches of an inlined maybe_multiply.
            body = _twin_call(name, [first, second.body], [])
            orelse = _twin_call(name, [first, second.orelse], [])
            return ast.IfExp(
                test=second.test,
                body=_inline_no_op(body, name, [first, second.body], []),
                orelse=_inline_no_op(orelse, name, [first, second.orelse], []),
            )
        # (a negated array is complex when it is)
        array = _argument_of(second, "neg")
        if isinstance(array, ast.Name):
            real = ast.BoolOp(
                op=ast.Or(),
                values=[
                    ast.Compare(
                        left=array, ops=[ast.Is()], comparators=[_constant(None)]
                    ),
                    ast.Compare(
                        left=_attribute(_attribute(array, "dtype"), "kind"),
                        ops=[ast.NotEq()],
                        comparators=[_constant("c")],
                    ),
                ],
            )
            return ast.IfExp(test=real, body=second, orelse=call)
    return call


def _constant(value: Any) -> ast.Constant:
    return ast.Constant(value=value)


def _attribute(value: ast.expr, attr: str) -> ast.Attribute:
    return ast.Attribute(value=value, attr=attr, ctx=ast.Load())


# The handler of each node type a checked formula may hold.
_HANDLERS: dict[type, Callable[[_Translator, Any], tuple[ast.expr, Kind]]] = {
    ast.Constant: _Translator._constant,
    ast.Name: _Translator._name,
    ast.Subscript: _Translator._subscript,
    ast.Attribute: _Translator._attribute,
    ast.Tuple: _Translator._tuple,
    ast.List: _Translator._list,
    ast.BinOp: _Translator._bin_op,
    ast.UnaryOp: _Translator._unary_op,
    ast.Compare: _Translator._compare,
    ast.IfExp: _Translator._if_exp,
    ast.BoolOp: _Translator._bool_op,
    ast.Call: _Translator._call,
}


def bind_names(expression: str, names: Mapping[str, str]) -> str:
    """`expression` with each name of `names` replaced by its expression (a node's
    apply_arrays reads a saved value as `self.alpha`, a saved tensor's array as the
    local `saved_self`)."""
    tree = _Binder(names).visit(ast.parse(expression, mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))


class _Binder(ast.NodeTransformer):
    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        # `arrays.NAME`: the twins' module, not an argument of that name
        if isinstance(node.value, ast.Name) and node.value.id == NAMESPACE:
            return node
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.expr:
        bound = self.names.get(node.id)
        if bound is None:
            return node
        return ast.copy_location(ast.parse(bound, mode="eval").body, node)
