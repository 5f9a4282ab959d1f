"""Composites of the linalg family built from the products: kron, inner, tensordot,
einsum and chain_matmul (PyTorch's CompositeImplicitAutograd functions: autograd
records the permutes, reshapes and matrix products they are made of), cdist and pdist
(over the _cdist_forward and _pdist_forward operators), and trapezoid's integrals."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ..factories import zeros
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor
from ..generated import operators, ops  # read at call time (the generated tie)
from .linalg_decompositions import linalg_multi_dot

__all__ = [
    "kron",
    "inner",
    "tensordot",
    "einsum",
    "chain_matmul",
    "cdist",
    "pdist",
    "trapezoid_x",
    "trapezoid_dx",
    "cumulative_trapezoid_x",
    "cumulative_trapezoid_dx",
]


def _product(sizes: Sequence[int]) -> int:
    result = 1
    for size in sizes:
        result *= size
    return result


def kron(self: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every element of `self` times the whole of `other`."""
    ndim = max(self.dim(), other.dim())
    a_shape = (1,) * (ndim - self.dim()) + tuple(self.shape)
    b_shape = (1,) * (ndim - other.dim()) + tuple(other.shape)
    a = self.reshape(tuple(x for size in a_shape for x in (size, 1)))
    b = other.reshape(tuple(x for size in b_shape for x in (1, size)))
    return (a * b).reshape(tuple(p * q for p, q in zip(a_shape, b_shape)))


def tensordot(
    self: Tensor, other: Tensor, dims_self: Sequence[int], dims_other: Sequence[int]
) -> Tensor:
    """The sum over the paired dims of the product: one matrix product of the two
    tensors permuted and reshaped to (free, contracted) and (contracted, free)."""
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    left = [_wrap_dim(d, self.dim()) for d in dims_self]
    right = [_wrap_dim(d, other.dim()) for d in dims_other]
    for d1, d2 in zip(left, right):
        s1, s2 = self.shape[d1], other.shape[d2]
        if s1 == s2:
            continue
        if s1 == 1:  # a size-1 dim pairs with the sum of the other side's
            other = other.sum(d2, keepdim=True)
        elif s2 == 1:
            self = self.sum(d1, keepdim=True)
        else:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {s1} in dim "
                f"{d1} and second has size {s2} in dim {d2}"
            )
    free_left = [d for d in range(self.dim()) if d not in left]
    free_right = [d for d in range(other.dim()) if d not in right]
    contracted = _product([self.shape[d] for d in left])
    sizes_left = [self.shape[d] for d in free_left]
    sizes_right = [other.shape[d] for d in free_right]
    a = self.permute(free_left + left).reshape((_product(sizes_left), contracted))
    b = other.permute(right + free_right).reshape((contracted, _product(sizes_right)))
    return ops.mm(a, b).reshape(tuple(sizes_left + sizes_right))


def inner(self: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dims (a product when either is 0-d)."""
    if self.dim() == 0 or other.dim() == 0:
        return self * other
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got "
            f"shapes {list(self.shape)} and {list(other.shape)}"
        )
    return tensordot(self, other, [-1], [-1])


def chain_matmul(matrices: Sequence[Tensor]) -> Tensor:
    """The product of the matrices (deprecated in PyTorch for linalg.multi_dot)."""
    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch "
        "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
        "more tensors rather than multiple parameters.",
        UserWarning,
        stacklevel=3,
    )
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for matrix in matrices:
        if matrix.dim() != 2:
            raise RuntimeError(
                f"Tensor dimension is {matrix.dim()}, expected 2 instead."
            )
    if len(matrices) == 1:
        return matrices[0].clone()
    return linalg_multi_dot(list(matrices))


# -- einsum ---------------------------------------------------------------------------

_ELLIPSIS = "..."


def _labels_of(term: str, position: int, equation: str) -> list[str]:
    """The labels of one term: letters, and '...' as one label."""
    labels: list[str] = []
    i = 0
    while i < len(term):
        if term.startswith(_ELLIPSIS, i):
            if _ELLIPSIS in labels:
                raise RuntimeError(
                    "einsum(): found '.' for operand "
                    f"{position} for which an ellipsis was already found"
                )
            labels.append(_ELLIPSIS)
            i += 3
            continue
        if not term[i].isascii() or not term[i].isalpha():
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {equation.index(term) + i} "
                "in the equation string, subscripts must be in [a-zA-Z]"
            )
        labels.append(term[i])
        i += 1
    return labels


def _expand_ellipsis(labels: list[str], ndim: int, position: int) -> list[str]:
    """'...' replaced by one label per dimension it covers ('.0', '.1', ... counted
    from the right, so that ellipses broadcast like shapes)."""
    letters = len(labels) - (1 if _ELLIPSIS in labels else 0)
    if _ELLIPSIS not in labels:
        if letters != ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({letters}) does "
                f"not match the number of dimensions ({ndim}) for operand {position} "
                "and no ellipsis was given"
            )
        return labels
    covered = ndim - letters
    if covered < 0:
        raise RuntimeError(
            f"einsum(): the number of subscripts in the equation ({letters}) is more "
            f"than the number of dimensions ({ndim}) for operand {position}"
        )
    at = labels.index(_ELLIPSIS)
    dots = [f".{covered - 1 - k}" for k in range(covered)]
    return labels[:at] + dots + labels[at + 1 :]


def _parse_einsum(
    equation: str, tensors: Sequence[Tensor]
) -> tuple[list[list[str]], list[str]]:
    """Each operand's labels (one per dimension) and the output's."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(tensors):
        raise RuntimeError(
            "einsum(): fewer operands were provided than specified in the equation"
        )
    if len(terms) < len(tensors):
        raise RuntimeError(
            "einsum(): more operands were provided than specified in the equation"
        )
    inputs = [
        _expand_ellipsis(_labels_of(term, i, equation), t.dim(), i)
        for i, (term, t) in enumerate(zip(terms, tensors))
    ]
    dots = max((sum(label[0] == "." for label in ls) for ls in inputs), default=0)
    ellipsis = [f".{dots - 1 - k}" for k in range(dots)]
    if arrow:
        output: list[str] = []
        for label in _labels_of(rhs, len(terms), equation):
            if label == _ELLIPSIS:
                output += ellipsis
                continue
            if not any(label in ls for ls in inputs):
                raise RuntimeError(
                    f"einsum(): output subscript {label} does not appear in the "
                    "equation for any input operand"
                )
            if label in output:
                raise RuntimeError(
                    f"einsum(): output subscript {label} appears more than once in the "
                    "output"
                )
            output.append(label)
        return inputs, output
    counts: dict[str, int] = {}
    for ls in inputs:
        for label in ls:
            counts[label] = counts.get(label, 0) + 1
    once = sorted(label for label, n in counts.items() if n == 1 and label[0] != ".")
    return inputs, ellipsis + once


def _diagonal_labels(t: Tensor, labels: list[str]) -> tuple[Tensor, list[str]]:
    """A label repeated in one operand takes the diagonal (moved to the end)."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        label = next(x for x in labels if labels.count(x) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        t = t.diagonal(0, first, second)
        labels = [x for i, x in enumerate(labels) if i not in (first, second)]
        labels.append(label)
    return t, labels


def _aligned(t: Tensor, labels: list[str], order: list[str]) -> Tensor:
    """`t` with its dims in `order`, size 1 for the labels it lacks."""
    present = [label for label in order if label in labels]
    t = t.permute([labels.index(label) for label in present])
    for i, label in enumerate(order):
        if label not in labels:
            t = t.unsqueeze(i)
    return t


def _sumproduct_pair(left: Tensor, right: Tensor, summed: set[int]) -> Tensor:
    """left * right summed over the dims in `summed` (kept with size 1), as one
    batched matrix product: batch dims in both, dims of one side only, summed dims."""
    batch, only_left, only_right, contracted = [], [], [], []
    for i in range(left.dim()):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                contracted.append(i)
            elif sl:
                left = left.sum(i, keepdim=True)
            elif sr:
                right = right.sum(i, keepdim=True)
        elif sl and sr:
            batch.append(i)
        elif sl:
            only_left.append(i)
        else:
            only_right.append(i)  # (size 1 in both lands here too)
    rest = [i for i in range(left.dim()) if i in summed and i not in contracted]
    sizes = [max(left.shape[i], right.shape[i]) for i in range(left.dim())]

    def product(dims: list[int]) -> int:
        return _product([sizes[i] for i in dims])

    a = left.permute(batch + only_left + contracted + only_right + rest).reshape(
        (product(batch), product(only_left), product(contracted))
    )
    b = right.permute(batch + contracted + only_right + only_left + rest).reshape(
        (product(batch), product(contracted), product(only_right))
    )
    order = batch + only_left + only_right + contracted + rest
    result = ops.bmm(a, b).reshape(
        tuple(sizes[i] if i not in summed else 1 for i in order)
    )
    return result.permute([order.index(i) for i in range(left.dim())])


def _check_sizes(operands: list[Tensor], order: list[str]) -> None:
    for i, label in enumerate(order):
        seen = 1
        for k, t in enumerate(operands):
            size = t.shape[i]
            if size != 1 and seen != 1 and size != seen:
                name = "..." if label[0] == "." else label
                raise RuntimeError(
                    f"einsum(): subscript {name} has size {size} for operand {k} which "
                    f"does not broadcast with previously seen size {seen}"
                )
            seen = size if size != 1 else seen


def einsum(
    equation: str, tensors: Sequence[Tensor], path: Sequence[int] | None = None
) -> Tensor:
    """Einstein summation: products of the operands, summed over the labels the
    output does not name; contracted left to right, each pair as one batched
    matrix product (PyTorch's sumproduct_pair), repeated labels as diagonals."""
    inputs, output = _parse_einsum(equation, tensors)
    pairs = [_diagonal_labels(t, ls) for t, ls in zip(tensors, inputs)]
    order = list(output)
    for _, labels in pairs:
        order += [label for label in labels if label not in order]
    operands = [_aligned(t, labels, order) for t, labels in pairs]
    _check_sizes(operands, order)
    contracted = range(len(output), len(order))
    needed_after = [
        {i for i in contracted if any(order[i] in ls for _, ls in pairs[k + 1 :])}
        for k in range(len(pairs))
    ]
    result = operands[0]
    first_only = {i for i in contracted if i not in needed_after[0]}
    if len(operands) == 1 and first_only:
        result = result.sum(sorted(first_only), keepdim=True)
    for k in range(1, len(operands)):
        summed = {i for i in contracted if i not in needed_after[k]}
        result = _sumproduct_pair(result, operands[k], summed)
    if len(order) > len(output):
        result = result.reshape(tuple(result.shape[: len(output)]))
    return result


# -- distances ------------------------------------------------------------------------

_COMPUTE_MODES = (None, 0, 1, 2)


def cdist(
    x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: int | None = None
) -> Tensor:
    """The p-norm distance between each row of x1 and each row of x2 (batched)."""
    if compute_mode not in _COMPUTE_MODES:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {compute_mode}")
    return ops._cdist_forward(x1, x2, p, compute_mode)


def pdist(self: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distance between every pair of rows i < j, in row-major order."""
    if self.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.dim()}D")
    return ops._pdist_forward(self, p)


# -- integrals by the trapezoidal rule ------------------------------------------------


def _zeros_without(y: Tensor, dim: int) -> Tensor:
    """The integral over no samples: zeros of y's shape without `dim`, no graph."""
    shape = tuple(y.shape)
    return zeros(shape[:dim] + shape[dim + 1 :], dtype=y.dtype)


def _pairs(y: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    size = y.shape[dim]
    return y.slice(dim, 1, size), y.slice(dim, 0, size - 1)


def _spacing(x: Tensor, y: Tensor, dim: int) -> Tensor:
    """The gaps between the sample points x, shaped to broadcast against y's pairs."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(
                "trapezoid: There must be one `x` value for each sample point"
            )
        gaps = x[1:] - x[:-1]
        shape = [1] * y.dim()
        shape[dim] = gaps.shape[0]
        return gaps.view(tuple(shape))
    later, earlier = _pairs(x, _wrap_dim(dim, x.dim()))
    return later - earlier


def trapezoid_x(y: Tensor, x: Tensor, dim: int = -1) -> Tensor:
    """The integral of y over the sample points x along `dim`."""
    dim = _wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:
        return _zeros_without(y, dim)
    later, earlier = _pairs(y, dim)
    area = ((later + earlier) * _spacing(x, y, dim)).sum(dim)
    return operators.div_Scalar.call(area, 2.0)  # type: ignore[no-any-return]


def trapezoid_dx(y: Tensor, dx: float = 1, dim: int = -1) -> Tensor:
    """The integral of y along `dim` for samples `dx` apart."""
    dim = _wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:
        return _zeros_without(y, dim)
    ends = y.select(dim, 0) + y.select(dim, -1)
    return operators.mul_Scalar.call(y.sum(dim) - ends * 0.5, dx)  # type: ignore[no-any-return]


def cumulative_trapezoid_x(y: Tensor, x: Tensor, dim: int = -1) -> Tensor:
    """The running integral of y over the sample points x along `dim`."""
    dim = _wrap_dim(dim, y.dim())
    later, earlier = _pairs(y, dim)
    areas = ((later + earlier) * _spacing(x, y, dim)).cumsum(dim)
    return operators.div_Scalar.call(areas, 2.0)  # type: ignore[no-any-return]


def cumulative_trapezoid_dx(y: Tensor, dx: float = 1, dim: int = -1) -> Tensor:
    """The running integral of y along `dim` for samples `dx` apart."""
    dim = _wrap_dim(dim, y.dim())
    later, earlier = _pairs(y, dim)
    return ((later + earlier) * (dx / 2)).cumsum(dim)
