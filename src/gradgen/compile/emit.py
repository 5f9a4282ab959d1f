"""Render recorded operators as straight-line numpy: one assignment per operator.

Each operator's kernel expression (generated/kernel_sources.py) is parsed once; its
parameters are replaced in the syntax tree by the graph's locals (`v3`), by literals
for Python constants (ints, finite floats, bools, strings, None, tuples of them), or by
names bound in the function's namespace (`k0`: dtypes, other objects). The type
promotion kernels.py does per call is decided here once: an argument whose dtype is
not the common dtype gets `.astype(...)`. The rendered line is cached per operator and
argument pattern, so a chain of the same operator parses its expression once.

Code is built from data: expressions are `ast.unparse` of trees built from the checked
kernel expressions; the only text from the user's program is the source line in each
comment, printed as a repr() literal.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..dtypes import Reduction, integer_to_float, result_type
from ..numpy_kernels.activation import _SAME_SIZE_INTS, _SELECT_MIN_SIZE
from .passes import fold_constants
from .trace import Op, Value

__all__ = ["Renderer", "constant_key"]

_LITERAL_TYPES = (bool, int, str)


def _is_literal(value: Any) -> bool:
    if value is None or type(value) in _LITERAL_TYPES:
        return True
    if type(value) is float:
        return math.isfinite(value)
    if type(value) in (tuple, list):
        return all(_is_literal(v) for v in value)
    return False


def _literal_node(value: Any) -> ast.expr:
    if type(value) is tuple:
        return ast.Tuple([_literal_node(v) for v in value], ast.Load())
    if type(value) is list:
        return ast.List([_literal_node(v) for v in value], ast.Load())
    return ast.Constant(value)


class _Substitute(ast.NodeTransformer):
    def __init__(self, replacements: dict[str, ast.expr]) -> None:
        self.replacements = replacements

    def visit_Name(self, node: ast.Name) -> ast.expr:
        replacement = self.replacements.get(node.id)
        return node if replacement is None else replacement


def _slot(index: int) -> str:
    return f"__slot{index}__"


class Renderer:
    """Renders operators; collects the constants their lines refer to."""

    def __init__(self) -> None:
        self.constants: dict[str, Any] = {}
        self.values: dict[str, Any] = {}  # constant graph values (`v3`), by name
        self._constant_names: dict[Any, str] = {}
        self._rendered: dict[int, str] = {}
        # Operators whose expression is one arithmetic ufunc of two graph values: the
        # ufunc's name and the operands; `reuse` names the operand to compute into.
        self.binary: dict[int, tuple[str, Value, Value]] = {}
        self.reuse: dict[int, Value] = {}
        self._templates: dict[tuple[Any, ...], str] = {}
        self._ufuncs: dict[tuple[Any, ...], tuple[str, int, int] | None] = {}
        self._trees: dict[str, ast.expr] = {}

    def constant(self, value: Any) -> str:
        """The namespace name bound to a non-literal constant (equal small arrays,
        the wrapped Python numbers, share one)."""
        key = constant_key(value)
        name = self._constant_names.get(key)
        if name is None:
            name = self._constant_names[key] = f"k{len(self._constant_names)}"
            self.constants[name] = value
        return name

    def _argument(
        self, value: Any, cast: Any, slots: list[Value]
    ) -> tuple[ast.expr, Any]:
        """The expression for one argument and its part of the template key."""
        if isinstance(value, Value):
            node: ast.expr = ast.Name(_slot(len(slots)), ast.Load())
            slots.append(value)
            if cast is not None and value.array.dtype != cast:
                node = ast.Call(
                    ast.Attribute(node, "astype", ast.Load()),
                    [ast.Name(self.constant(cast), ast.Load())],
                    [],
                )
                return node, ("t", value.array.shape, value.array.dtype.str, str(cast))
            # The specialising rules look at the shape and dtype (fixed by the guard).
            return node, ("t", value.array.shape, value.array.dtype.str)
        if isinstance(value, list) and any(isinstance(v, Value) for v in value):
            parts = [self._argument(v, cast, slots) for v in value]
            return ast.List([p[0] for p in parts], ast.Load()), tuple(
                p[1] for p in parts
            )
        if type(value) is np.ndarray and cast is not None and value.dtype != cast:
            value = value.astype(cast)  # a wrapped Python number, promoted here
        if _is_literal(value):
            return _literal_node(value), ("c", type(value).__name__, repr(value))
        name = self.constant(value)
        return ast.Name(name, ast.Load()), ("k", name)

    def expression(self, op: Op) -> str:
        """The operator's kernel expression over its arguments (into a dead operand's
        memory where `reuse` says so)."""
        rendered = self._rendered.get(id(op))
        if rendered is None:
            rendered = self._rendered[id(op)] = self._expression(op)
        target = self.reuse.get(id(op))
        if target is not None:
            ufunc, left, right = self.binary[id(op)]
            return f"np.{ufunc}({left.name}, {right.name}, out={target.name})"
        return rendered

    def _expression(self, op: Op) -> str:
        source = op.source
        common = None
        if source.promoted:
            operands: list[Any] = []
            for name in source.promoted:
                raw = op.raw_args[source.arguments.index(name)]
                operands.extend(raw if isinstance(raw, (list, tuple)) else [raw])
            dtype = result_type(*operands)
            if source.integer_to_float:
                dtype = integer_to_float(dtype)
            common = np.dtype(dtype.numpy)
        slots: list[Value] = []
        replacements: dict[str, ast.expr] = {}
        key: list[Any] = [op.name]
        for name, value in zip(source.arguments, op.args):
            cast = common if name in source.promoted else None
            replacements[name], part = self._argument(value, cast, slots)
            key.append(part)
        template = self._templates.get(tuple(key))
        if template is None:
            tree = self._trees.get(op.name)
            if tree is None:
                tree = self._trees[op.name] = ast.parse(
                    source.expression, mode="eval"
                ).body
            substituted = _Substitute(replacements).visit(_copy(tree))
            folded = _Specialise(slots, self.constant).visit(
                fold_constants(substituted)
            )
            template = ast.unparse(folded)
            self._templates[tuple(key)] = template
            self._ufuncs[tuple(key)] = _binary_ufunc(folded)
        ufunc = self._ufuncs[tuple(key)]
        if ufunc is not None:
            name, left, right = ufunc
            self.binary[id(op)] = (name, slots[left], slots[right])
        for index, value in enumerate(slots):
            template = template.replace(_slot(index), value.name)
        return template

    def lines(self, op: Op, fixes: dict[int, Any]) -> list[str]:
        """`# comment`, the assignment, and the fixes of outputs that need them."""
        comment = f"# {op.name} <- {op.line!r}" if op.line else f"# {op.name}"
        targets = ", ".join(v.name for v in op.outputs)
        if len(op.outputs) == 1 and op.source.returns == ("Tensor[]",):
            targets += ","
        lines = [comment, f"{targets} = {self.expression(op)}"]
        for value in op.outputs:
            if value.index in fixes:
                lines.append(self.fix(value, fixes[value.index]))
        return lines

    def fix(self, value: Value, fix: Any) -> str:
        """wrap_result's normalisation: an ndarray, in the dtype eager gave."""
        if fix is None:
            return f"{value.name} = np.asarray({value.name})"
        return f"{value.name} = np.asarray({value.name}).astype({self.constant(fix)})"


# -- helpers whose checks the signature decides ---------------------------------------
#
# Some numpy_kernels helpers are a numpy operation behind checks of their arguments'
# dtype and shape (PyTorch's errors). The shapes and dtypes are fixed by the guard, so
# where the checks pass for the traced values the call is rendered as the operation
# itself (the check against eager runs the rendered line). Each rule takes the call's
# argument nodes and the graph values of its slots; it returns the replacement or None.


def _slot_value(node: ast.expr, slots: list[Value]) -> Value | None:
    if isinstance(node, ast.Name) and node.id.startswith("__slot"):
        return slots[int(node.id[len("__slot") : -2])]
    return None


def _call(function: str, args: list[ast.expr], **keywords: ast.expr) -> ast.Call:
    """`np.<function>(*args, **keywords)` (`function` may be dotted: `add.reduce`)."""
    target: ast.expr = ast.Name("np", ast.Load())
    for part in function.split("."):
        target = ast.Attribute(target, part, ast.Load())
    return ast.Call(target, args, [ast.keyword(k, v) for k, v in keywords.items()])


class _Specialise(ast.NodeTransformer):
    """Replaces helper calls by the numpy operation they come to for the traced
    shapes and dtypes (`_RULES`); `constant` binds a value in the namespace."""

    def __init__(self, slots: list[Value], constant: Callable[[Any], str]) -> None:
        self.slots = slots
        self.constant = constant

    def value(self, node: ast.expr) -> Value | None:
        """The graph value an argument node is (None for anything else)."""
        return _slot_value(node, self.slots)

    def bound(self, value: Any) -> ast.expr:
        return ast.Name(self.constant(value), ast.Load())

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        rule = _RULES.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if rule is None or node.keywords:
            return node
        return rule(list(node.args), self) or node


_Rule = Callable[[list[ast.expr], _Specialise], "ast.expr | None"]


def _power(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    base = at.value(args[0])
    if len(args) != 2 or base is None or base.array.dtype.kind not in "fc":
        return None  # an integer base has its own rules
    return ast.BinOp(args[0], ast.Pow(), args[1])


def _subtract(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    left = at.value(args[0])
    if len(args) != 3 or left is None or left.array.dtype.kind == "b":
        return None
    alpha = args[2]
    if isinstance(alpha, ast.Constant) and alpha.value == 1:
        return ast.BinOp(args[0], ast.Sub(), args[1])
    return ast.BinOp(args[0], ast.Sub(), ast.BinOp(alpha, ast.Mult(), args[1]))


def _add_scaled(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    """`self + other` for the int alpha 1 (any other alpha: the kernel's checks)."""
    alpha = args[2] if len(args) == 3 else None
    if isinstance(alpha, ast.Constant) and alpha.value.__class__ is int:
        if alpha.value == 1:
            return ast.BinOp(args[0], ast.Add(), args[1])
    return None


def _negative(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    value = at.value(args[0])
    if len(args) != 1 or value is None or value.array.dtype.kind == "b":
        return None
    return ast.UnaryOp(ast.USub(), args[0])


def _mm(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    left, right = (at.value(a) for a in args[:2])
    if len(args) != 2 or left is None or right is None:
        return None
    a, b = left.array, right.array
    if (
        a.ndim != 2
        or b.ndim != 2
        or a.shape[1] != b.shape[0]
        or a.dtype != b.dtype
        or a.dtype.kind == "b"
    ):
        return None
    return ast.BinOp(args[0], ast.MatMult(), args[1])


def _t(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    value = at.value(args[0])
    if len(args) != 1 or value is None or value.array.ndim > 2:
        return None
    return ast.Attribute(args[0], "T", ast.Load())


def _constant(node: ast.expr) -> tuple[bool, Any]:
    """(True, the value) for a literal None or bool; (False, None) otherwise."""
    if isinstance(node, ast.Constant) and (
        node.value is None or node.value is False or node.value is True
    ):
        return True, node.value
    return False, None


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _sum_to_size(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    """A bias's gradient (only leading dimensions summed away): the helper's own
    reduction, `np.add.reduce(x, axis=...)`."""
    value = at.value(args[0])
    size = _literal(args[1]) if len(args) == 2 else None
    if value is None or not isinstance(size, (tuple, list)):
        return None
    shape = value.array.shape
    leading = len(shape) - len(size)
    if leading <= 0 or tuple(size) != shape[leading:]:
        return None
    axis = ast.Constant(0) if leading == 1 else _literal_node(tuple(range(leading)))
    return _call("add.reduce", [args[0]], axis=axis)


def _reduce_mean(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    """The mean of all elements of a float32/float64 array, as the helper computes it:
    a sum in the array's dtype divided by the count."""
    value = at.value(args[0])
    if len(args) != 4 or value is None or value.array.size == 0:
        return None
    if value.array.dtype.char not in "fd" or [_constant(a) for a in args[1:]] != [
        (True, None),
        (True, False),
        (True, None),
    ]:
        return None
    total = _call("add.reduce", [args[0]], axis=ast.Constant(None))
    return _call("true_divide", [total, ast.Constant(value.array.size)])


def _zero_of(value: Value, at: _Specialise) -> ast.expr:
    """The helpers' `np.zeros((), dtype)`, made once and bound."""
    zero = np.zeros((), value.array.dtype)
    zero.flags.writeable = False
    return at.bound(zero)


def _zeroed(
    drop: ast.expr, values: ast.expr, value: Value, at: _Specialise
) -> ast.expr:
    """The kernels' `_zeroed_where(drop, values)` for traced `values`: `np.where(drop,
    0, values)` when small, else values' bits AND (0 where dropped, all ones where
    kept) in the integer of its size, computed into the mask (no branch per element)."""
    ints = _SAME_SIZE_INTS.get(value.array.dtype)
    if ints is None or value.array.size < _SELECT_MIN_SIZE:
        return _call("where", [drop, _zero_of(value, at), values])
    int_type, float_type = (_call(t.name, []).func for t in (ints, value.array.dtype))
    view = ast.Call(ast.Attribute(values, "view", ast.Load()), [int_type], [])
    mask = _scratch(_call("subtract", [drop, ast.Constant(1)], dtype=int_type))
    selected = _call("bitwise_and", [view, mask], out=_scratch_name())
    return ast.Call(ast.Attribute(selected, "view", ast.Load()), [float_type], [])


def _relu(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    """relu's own `np.where(x < 0, 0, x)`, without the helper's dtype checks."""
    value = at.value(args[0])
    if len(args) != 1 or value is None or value.array.dtype.kind != "f":
        return None
    below = ast.Compare(args[0], [ast.Lt()], [ast.Constant(0)])
    return _zeroed(below, args[0], value, at)


def _threshold_backward(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    """threshold_backward's own `np.where(x <= threshold, 0, grad)`, no checks."""
    grad, value = (at.value(a) for a in args[:2])
    if len(args) != 3 or grad is None or value is None:
        return None
    if value.array.dtype.kind != "f" or grad.array.dtype != value.array.dtype:
        return None
    if type(_literal(args[2])) not in (int, float):
        return None
    below = ast.Compare(args[1], [ast.LtE()], [args[2]])
    if grad.array.shape != value.array.shape:
        return _call("where", [below, _zero_of(grad, at), args[0]])
    return _zeroed(below, args[0], grad, at)


def _div_true(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    """`np.true_divide(a, b)` of floating operands is numpy's `a / b`."""
    left = at.value(args[0])
    if len(args) != 2 or left is None or left.array.dtype.kind not in "fc":
        return None
    return ast.BinOp(args[0], ast.Div(), args[1])


def _floats(*values: Value | None) -> bool:
    """Graph values all of one floating dtype."""
    arrays = [v.array for v in values if v is not None]
    return (
        len(arrays) == len(values)
        and arrays[0].dtype.kind == "f"
        and all(a.dtype == arrays[0].dtype for a in arrays)
    )


# The name a rendered expression gives its own fresh temporary, to compute into it
# (`np.add(b, (_w := x @ w), out=_w)`); each line's is dead by the next line.
_SCRATCH = "_w"


def _scratch(value: ast.expr) -> ast.expr:
    return ast.NamedExpr(ast.Name(_SCRATCH, ast.Store()), value)


def _scratch_name() -> ast.expr:
    return ast.Name(_SCRATCH, ast.Load())


def _addmm(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    """`bias + mat1 @ mat2` (beta = alpha = 1: nn.Linear), added into the product."""
    if len(args) != 5 or _literal(args[3]) != 1 or _literal(args[4]) != 1:
        return None
    bias, mat1, mat2 = (at.value(a) for a in args[:3])
    if not _floats(bias, mat1, mat2):
        return None
    assert bias is not None and mat1 is not None and mat2 is not None
    a, b = mat1.array, mat2.array
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        return None
    shape = (a.shape[0], b.shape[1])
    try:
        if tuple(np.broadcast_shapes(bias.array.shape, shape)) != shape:
            return None
    except ValueError:
        return None
    product = _scratch(ast.BinOp(args[1], ast.MatMult(), args[2]))
    return _call("add", [args[0], product], out=_scratch_name())


def _mse_operands(
    at: _Specialise, self_: ast.expr, target: ast.expr
) -> tuple[Value, ast.expr] | None:
    """`(_w := self - target)` for two arrays of one shape and floating dtype."""
    value, other = at.value(self_), at.value(target)
    if not _floats(value, other):
        return None
    assert value is not None and other is not None
    if value.array.shape != other.array.shape:
        return None
    return value, _scratch(ast.BinOp(self_, ast.Sub(), target))


def _mse_loss(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    """The mean or sum of `(self - target) ** 2` as the helper computes it: the
    difference squared in place, summed, divided by the count for the mean."""
    reduction = _literal(args[2]) if len(args) == 3 else None
    if reduction not in (Reduction.MEAN, Reduction.SUM):
        return None
    operands = _mse_operands(at, args[0], args[1])
    if operands is None or operands[0].array.size == 0:
        return None
    value, difference = operands
    square = _call("multiply", [difference, _scratch_name()], out=_scratch_name())
    total = _call("add.reduce", [square], axis=ast.Constant(None))
    if reduction == Reduction.SUM:
        return total
    return _call("true_divide", [total, ast.Constant(value.array.size)])


def _mse_loss_backward(args: list[ast.expr], at: _Specialise) -> ast.expr | None:
    """`norm * (self - target) * grad_output`, both products into the difference."""
    reduction = _literal(args[3]) if len(args) == 4 else None
    grad = at.value(args[0])
    operands = _mse_operands(at, args[1], args[2])
    if reduction not in (Reduction.NONE, Reduction.MEAN, Reduction.SUM):
        return None
    if operands is None or grad is None or not _floats(grad, operands[0]):
        return None
    value, difference = operands
    if grad.array.shape not in ((), value.array.shape):
        return None
    size = value.array.size
    norm = 2.0 / size if reduction == Reduction.MEAN and size else 2.0
    scaled = _call("multiply", [ast.Constant(norm), difference], out=_scratch_name())
    return _call("multiply", [scaled, args[0]], out=_scratch_name())


_RULES: dict[str, _Rule] = {
    "power": _power,
    "subtract": _subtract,
    "add_scaled": _add_scaled,
    "negative": _negative,
    "mm": _mm,
    "t": _t,
    "sum_to_size": _sum_to_size,
    "reduce_mean": _reduce_mean,
    "relu": _relu,
    "threshold_backward": _threshold_backward,
    "div_true": _div_true,
    "addmm": _addmm,
    "mse_loss": _mse_loss,
    "mse_loss_backward": _mse_loss_backward,
}


_UFUNCS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide"}


def _binary_ufunc(tree: ast.expr) -> tuple[str, int, int] | None:
    """(ufunc, left slot, right slot) when the expression is `slot OP slot`."""
    if not (
        isinstance(tree, ast.BinOp)
        and type(tree.op) in _UFUNCS
        and isinstance(tree.left, ast.Name)
        and isinstance(tree.right, ast.Name)
    ):
        return None
    slots = [
        int(name[len("__slot") : -2])
        for name in (tree.left.id, tree.right.id)
        if name.startswith("__slot") and name.endswith("__")
    ]
    if len(slots) != 2:
        return None
    return _UFUNCS[type(tree.op)], slots[0], slots[1]


def constant_key(value: Any) -> Any:
    """A hashable key equal for equal constants: a small array by its bytes, a dtype by
    its name, anything else by identity."""
    if type(value) is np.ndarray and value.size <= 16:
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.dtype):
        return ("dtype", value.str)
    return ("object", id(value))


def _copy(tree: ast.expr) -> ast.expr:
    copied: ast.expr = ast.parse(ast.unparse(tree), mode="eval").body
    return copied
