"""Passes over the captured graph, each small: constant folding of Python scalars (on
a rendered expression), dead-code elimination and common-subexpression elimination
(on the recorded operators), dropping an `expand` that only elementwise arithmetic
reads (numpy broadcasts), reuse of dead temporaries (`out=`), and fusion of a
broadcast-reduction (`sum_to_size` of a product) into one einsum."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..generated.kernel_sources import KernelSource
from .trace import Op, Value

__all__ = [
    "eliminate_common_subexpressions",
    "eliminate_dead_code",
    "elide_expands",
    "FUSED_SUM_TO",
    "fold_constants",
    "fuse_broadcast_reductions",
    "is_random",
    "replace_values",
    "reuse_buffers",
]

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.Not: operator.not_,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
_NUMBERS = (bool, int, float)


def _constant(node: ast.expr) -> tuple[bool, Any]:
    if isinstance(node, ast.Constant) and (
        node.value is None or type(node.value) in _NUMBERS + (str,)
    ):
        return True, node.value
    return False, None


def _fold(node: ast.expr) -> ast.expr:
    """One node whose children are folded: a constant if it computes one."""
    if isinstance(node, ast.IfExp):
        known, test = _constant(node.test)
        if known:
            return node.body if test else node.orelse
        return node
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        (left_known, left), (right_known, right) = map(
            _constant, (node.left, node.comparators[0])
        )
        function = _COMPARE.get(type(node.ops[0]))
        if left_known and right_known and function is not None:
            return ast.Constant(bool(function(left, right)))
        return node
    if isinstance(node, ast.BoolOp):
        values = [_constant(v) for v in node.values]
        if all(known for known, _ in values):
            results = [v for _, v in values]
            is_and = isinstance(node.op, ast.And)
            return ast.Constant(all(results) if is_and else any(results))
        return node
    if isinstance(node, ast.UnaryOp):
        known, value = _constant(node.operand)
        unary = _UNARY.get(type(node.op))
        if known and unary is not None and type(value) in _NUMBERS:
            return ast.Constant(unary(value))
        return node
    if isinstance(node, ast.BinOp):
        (left_known, left), (right_known, right) = map(
            _constant, (node.left, node.right)
        )
        binary = _BINARY.get(type(node.op))
        numbers = type(left) in _NUMBERS and type(right) in _NUMBERS
        if left_known and right_known and binary is not None and numbers:
            try:
                return ast.Constant(binary(left, right))
            except (ArithmeticError, ValueError):
                return node
    return node


class _Folder(ast.NodeTransformer):
    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        return _fold(node) if isinstance(node, ast.expr) else node


def fold_constants(tree: ast.expr) -> ast.expr:
    """Fold what Python constants decide: `x + y if 1 == 1 else ...` -> `x + y`."""
    folded: ast.expr = _Folder().visit(tree)
    return folded


def _values_in(argument: Any) -> Iterable[Value]:
    if isinstance(argument, Value):
        yield argument
    elif isinstance(argument, (list, tuple)):
        for item in argument:
            yield from _values_in(item)


def is_random(op: Op) -> bool:
    """Whether the operator draws from a generator (its one effect: the draws that
    follow depend on it, so it is neither dropped nor merged with another)."""
    return "random_generator(" in op.source.expression


def eliminate_dead_code(ops: list[Op], live: Iterable[Value]) -> list[Op]:
    """The operators some live value depends on, in order (kernels have no effects
    but random draws, which are kept)."""
    needed = {id(v) for v in live}
    kept: list[Op] = []
    for op in reversed(ops):
        if is_random(op) or any(id(v) in needed for v in op.outputs):
            kept.append(op)
            needed.update(id(v) for a in op.args for v in _values_in(a))
    kept.reverse()
    return kept


def _key(argument: Any) -> Any:
    if isinstance(argument, Value):
        return ("value", argument.index)
    if isinstance(argument, (list, tuple)):
        return (type(argument).__name__, tuple(_key(a) for a in argument))
    if type(argument) is np.ndarray:  # a wrapped Python number
        return ("array", argument.dtype.str, argument.shape, argument.tobytes())
    return ("constant", type(argument).__name__, repr(argument))


def eliminate_common_subexpressions(ops: list[Op]) -> tuple[list[Op], dict[int, Value]]:
    """Drop an operator that repeats an earlier one on the same arguments; the map
    says which earlier value replaces each dropped output (by index)."""
    seen: dict[Any, Op] = {}
    replaced: dict[int, Value] = {}
    kept: list[Op] = []
    for op in ops:
        if replaced:
            op.args = [_replace(a, replaced) for a in op.args]
        key: Any = (op.name, tuple(_key(a) for a in op.args))
        if is_random(op):
            key = (key, id(op))  # two draws are two draws
        earlier = seen.get(key)
        if earlier is not None and len(earlier.outputs) == len(op.outputs):
            for mine, theirs in zip(op.outputs, earlier.outputs):
                replaced[mine.index] = theirs
            continue
        seen[key] = op
        kept.append(op)
    return kept, replaced


def replace_values(argument: Any, replaced: dict[int, Value]) -> Any:
    """The argument with each replaced value (by index) swapped for its replacement."""
    return _replace(argument, replaced)


def _replace(argument: Any, replaced: dict[int, Value]) -> Any:
    if isinstance(argument, Value):
        return replaced.get(argument.index, argument)
    if isinstance(argument, list):
        return [_replace(a, replaced) for a in argument]
    if isinstance(argument, tuple):
        return tuple(_replace(a, replaced) for a in argument)
    return argument


# Operators whose result at each position is computed from their operands' elements at
# that position as numpy broadcasts them: an operand that broadcasts to the expanded
# shape gives the same numbers (one correctly rounded operation per element).
ELEMENTWISE = frozenset(
    {
        "add.Tensor",
        "sub.Tensor",
        "mul.Tensor",
        "div.Tensor",
        "add.Scalar",
        "sub.Scalar",
        "mul.Scalar",
        "div.Scalar",
    }
)


def _users(ops: list[Op]) -> dict[int, list[Op]]:
    """Per value (by id), the operators that read it, each once, in order."""
    users: dict[int, list[Op]] = {}
    for op in ops:
        for argument in op.args:
            for value in _values_in(argument):
                readers = users.setdefault(id(value), [])
                if not readers or readers[-1] is not op:
                    readers.append(op)
    return users


def _operand_shapes(op: Op, small: dict[int, tuple[int, ...]]) -> list[Any]:
    shapes: list[Any] = []
    for argument in op.args:
        if isinstance(argument, Value):
            shapes.append(small.get(id(argument), argument.array.shape))
        elif type(argument) is np.ndarray:  # a wrapped Python number
            shapes.append(argument.shape)
    return shapes


def _smaller_values(
    expanded: Value, source: Value, users: dict[int, list[Op]], kept: set[int]
) -> dict[int, tuple[Value, tuple[int, ...]]] | None:
    """With `source` read in place of `expanded`: the values that come out smaller
    (each with its new shape), or None when one of them, or `expanded`, is kept or
    read by anything but elementwise arithmetic."""
    small: dict[int, tuple[int, ...]] = {id(expanded): source.array.shape}
    smaller: dict[int, tuple[Value, tuple[int, ...]]] = {}
    stack = [expanded]
    while stack:
        value = stack.pop()
        if id(value) in kept:
            return None
        for user in users.get(id(value), []):
            if user.name not in ELEMENTWISE or len(user.outputs) != 1:
                return None
            out = user.outputs[0]
            try:
                shape = tuple(np.broadcast_shapes(*_operand_shapes(user, small)))
            except ValueError:
                return None
            if shape != small.get(id(out), out.array.shape):
                small[id(out)] = shape
                smaller[id(out)] = (out, shape)
                stack.append(out)
    return smaller


def _shrunk(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The part of a broadcast result that its unbroadcast computation gives."""
    leading = array.ndim - len(shape)
    index = (0,) * leading + tuple(
        slice(None) if extent == array.shape[leading + i] else slice(0, 1)
        for i, extent in enumerate(shape)
    )
    return np.array(array[index])


def elide_expands(ops: list[Op], kept: set[int]) -> list[Op]:
    """Drop `v = expand(x, size)` when only elementwise arithmetic reads `v` (and
    what it computes from `v`, until a result has its eager shape again): those
    operators read `x` and numpy broadcasts it; `expand(g, s) / n * y` (a mean's
    backward) becomes `g / n * y`, one division of `g` instead of one per element.
    The values that come out smaller get their smaller trace values (the check
    against eager compares those)."""
    if not any(op.name == "expand" for op in ops):
        return ops  # (a long chain without one pays one pass, not the map below)
    users = _users(ops)
    dropped: set[int] = set()
    for op in ops:
        source = op.args[0] if op.name == "expand" and op.args else None
        if not isinstance(source, Value) or len(op.outputs) != 1:
            continue
        expanded = op.outputs[0]
        smaller = _smaller_values(expanded, source, users, kept)
        if smaller is None:
            continue
        readers = users.pop(id(expanded), [])
        for user in readers:
            user.args = [_replace(a, {expanded.index: source}) for a in user.args]
        users.setdefault(id(source), []).extend(readers)
        for value, shape in smaller.values():
            value.array = _shrunk(value.array, shape)
        dropped.add(id(op))
    return [op for op in ops if id(op) not in dropped]


def reuse_buffers(
    ops: list[Op],
    binary: dict[int, tuple[str, Value, Value]],
    kept: set[int],
) -> dict[int, Value]:
    """Per operator (by id) computing one ufunc of two values, the operand whose memory
    it may write its result into (`out=`): a temporary made by an earlier operator of
    the same function, used for the last time here, not kept (returned or saved), that
    owns its memory (no other value is a view of it) and has the result's shape and
    dtype. The check against eager runs the code with these writes."""
    made = {id(v) for op in ops for v in op.outputs}
    last_use: dict[int, int] = {}
    for position, op in enumerate(ops):
        for argument in op.args:
            for value in _values_in(argument):
                last_use[id(value)] = position
    viewed = {
        id(v.array.base) for op in ops for v in op.outputs if v.array.base is not None
    }
    reuse: dict[int, Value] = {}
    for position, op in enumerate(ops):
        operands = binary.get(id(op))
        if operands is None or len(op.outputs) != 1:
            continue
        result = op.outputs[0].array
        _, left, right = operands
        for candidate in (left, right):
            array = candidate.array
            if (
                left is not right
                and id(candidate) in made
                and id(candidate) not in kept
                and last_use.get(id(candidate)) == position
                and type(array) is np.ndarray
                and array.ndim > 0
                and array.flags.owndata
                and array.flags.writeable
                and id(array) not in viewed
                and array.shape == result.shape
                and array.dtype == result.dtype
            ):
                reuse[id(op)] = candidate
                break
    return reuse


# `sum_to_size(self * other, size)` as one reduction: the product is never made.
FUSED_SUM_TO = KernelSource(
    expression="np.asarray(np.einsum(subscripts, self, other)).reshape(size)",
    arguments=("subscripts", "self", "other", "size"),
    kinds=("value", "Tensor", "Tensor", "value"),
    promoted=(),
    integer_to_float=False,
    returns=("Tensor",),
)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _reduction_subscripts(shape: tuple[int, ...], size: tuple[int, ...]) -> str:
    """einsum's subscripts for summing two operands of `shape`'s product to `size`
    (the dimensions of size 1 come back with the reshape)."""
    letters = _LETTERS[: len(shape)]
    leading = len(shape) - len(size)
    kept = "".join(
        letters[leading + i]
        for i, extent in enumerate(size)
        if extent == shape[leading + i]
    )
    return f"{letters},{letters}->{kept}"


def _fusable_product(op: Op, made: dict[int, Op], uses: dict[int, int]) -> Op | None:
    """The `mul` whose product this `sum_to_size` reduces, when only it uses it and
    both factors have the product's shape and (floating) dtype."""
    if op.name != "sum_to_size" or not isinstance(op.args[0], Value):
        return None
    product = op.args[0]
    mul = made.get(id(product))
    if mul is None or mul.name != "mul.Tensor" or uses.get(id(product)) != 1:
        return None
    left, right = mul.args
    if not (isinstance(left, Value) and isinstance(right, Value)):
        return None
    array = product.array
    return (
        mul
        if type(array) is np.ndarray
        and array.dtype.kind == "f"
        and len(_LETTERS) >= array.ndim > 0
        and all(
            v.array.shape == array.shape and v.array.dtype == array.dtype
            for v in (left, right)
        )
        else None
    )


def _within_reassociation(op: Op, left: Value, right: Value, subscripts: str) -> bool:
    """Whether the einsum, on the trace's values, is within the bound of a
    reassociated sum of the eager result: n * eps * sum(|terms|)."""
    size = tuple(op.args[1])
    fused = np.einsum(subscripts, left.array, right.array).reshape(size)
    exact = op.outputs[0].array
    terms = left.array.size // max(exact.size, 1)
    bound = np.einsum(subscripts, np.abs(left.array), np.abs(right.array))
    bound = bound.reshape(size) * (terms * np.finfo(exact.dtype).eps)
    return bool(np.all(np.abs(fused - exact) <= bound))


def fuse_broadcast_reductions(ops: list[Op], kept: set[int]) -> list[Op]:
    """`v = a * b; r = sum_to_size(v, size)` (the backward of a broadcast factor: a
    scalar's or a per-channel scale's gradient) becomes one einsum over `a` and `b`
    when nothing else uses (or keeps) `v`. The sum is reassociated: each fusion is
    checked on the trace's values against the rounding bound of a reordered sum.
    Run after the check against eager (which is to the last bit), on the final code."""
    made = {id(v): op for op in ops for v in op.outputs}
    uses: dict[int, int] = {}
    for op in ops:
        for argument in op.args:
            for value in _values_in(argument):
                uses[id(value)] = uses.get(id(value), 0) + 1
    dropped: set[int] = set()
    fused_ops: dict[int, Op] = {}  # by the mul's id: the fusion takes its place
    for op in ops:
        mul = _fusable_product(op, made, uses)
        if mul is None or id(op.args[0]) in kept:
            continue
        left, right = mul.args
        subscripts = _reduction_subscripts(op.args[0].array.shape, tuple(op.args[1]))
        if not _within_reassociation(op, left, right, subscripts):
            continue
        fused_ops[id(mul)] = Op(
            "fused_sum_to_size",
            FUSED_SUM_TO,
            [subscripts, left, right, tuple(op.args[1])],
            (),
            op.outputs,
            op.line,
            op.phase,
        )
        dropped.add(id(op))
    # At the product's place, its factors are read where they were (so the reuse of
    # dead temporaries decided for the unfused operators stays right).
    return [fused_ops.get(id(op), op) for op in ops if id(op) not in dropped]
