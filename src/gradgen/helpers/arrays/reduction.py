"""Array twins of the reductions, expand and the reduction helpers a formula calls."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...numpy_kernels import (
    _wrap_dim,
    cumsum as _cumsum,
    expand as _expand,
    reduce_sum,
    sum_to_size as _sum_to_size,
    unsqueeze as _unsqueeze,
)
from ._common import as_array
from .elementwise import conj, exp, mul, sub
from .shape_ops import flip

__all__ = [
    "sum",
    "expand",
    "expand_as",
    "sum_to_size",
    "sum_to",
    "sum_backward",
    "mean_backward",
    "cumsum",
    "cumsum_backward",
    "logsumexp_backward",
]


def sum(  # noqa: A001  (PyTorch's name)
    self: np.ndarray,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> np.ndarray:
    """sum / sum.dim_IntList (an int dim is the list of it, as the binding makes it)."""
    if isinstance(dim, int):
        dim = (dim,)
    return as_array(reduce_sum(as_array(self), dim, keepdim, dtype))


def expand(self: np.ndarray, size: Sequence[int], implicit: bool = False) -> np.ndarray:
    if (
        (self.__class__ is np.ndarray and self.ndim == 0)
        or self.__class__ in _NUMPY_SCALARS
    ) and min(size, default=0) >= 0:
        # A number spread over a shape (sum's and mean's backward; the engine hands a
        # 0-d gradient on as a numpy scalar): the read-only broadcast view
        # np.broadcast_to makes, built directly over its buffer (a few times faster).
        kind = self.dtype.kind
        if kind in _STRIDE_ZERO_KINDS:
            spread: np.ndarray = np.ndarray(
                tuple(size), self.dtype, self, 0, (0,) * len(size)
            )
            if self.__class__ is np.ndarray:  # (a numpy scalar lends it read-only)
                spread.flags.writeable = False
            return spread
    return as_array(_expand(as_array(self), size))


# numpy dtypes whose 0-d array (and numpy scalar) exports its one element as a buffer.
_STRIDE_ZERO_KINDS = frozenset("biufc")
# The numpy scalars of those kinds that 0-d arithmetic returns.
_NUMPY_SCALARS: frozenset[type] = frozenset(
    {
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    }
)


def expand_as(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    return expand(self, tuple(other.shape))


def sum_to_size(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    return as_array(_sum_to_size(as_array(self), size))


def sum_to(grad: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Sum `grad` down to `shape` (the reverse of broadcasting `shape` up to grad's)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    return sum_to_size(grad, shape)


def sum_backward(
    grad: np.ndarray, sizes: Sequence[int], dims: Sequence[int] | None, keepdim: bool
) -> np.ndarray:
    """Broadcast the gradient of a sum back over the summed dimensions."""
    if not keepdim and len(sizes) > 0:
        if dims is None or len(dims) == 0:
            return expand(grad, sizes)
        for dim in sorted(_wrap_dim(d, len(sizes)) for d in dims):
            grad = as_array(_unsqueeze(as_array(grad), dim))
    return expand(grad, sizes)


def mean_backward(
    grad: np.ndarray,
    sizes: Sequence[int],
    dims: Sequence[int] | None,
    numel: int,
    keepdim: bool,
) -> np.ndarray:
    """The gradient of a mean: the sum's, divided by how many were averaged."""
    if dims is None or len(dims) == 0 or len(sizes) == 0:
        count = numel
    else:
        count = int(math.prod(sizes[_wrap_dim(d, len(sizes))] for d in dims))
    return mul(
        sum_backward(grad, sizes, dims, keepdim),
        1.0 / count if count else float("nan"),
    )


def cumsum(self: np.ndarray, dim: int, *, dtype: Any = None) -> np.ndarray:
    return as_array(_cumsum(as_array(self), dim, dtype))


def cumsum_backward(grad: np.ndarray, dim: int) -> np.ndarray:
    """The gradient of cumsum: a cumsum from the other end."""
    if grad.size <= 1 or grad.shape[_wrap_dim(dim, grad.ndim)] == 1:
        return grad
    return flip(cumsum(flip(grad, [dim]), dim), [dim])


def _unsqueeze_multiple(
    array: np.ndarray, dims: Sequence[int] | None, ndim: int
) -> np.ndarray:
    if dims is not None and len(dims) == 0:
        return array
    wanted = range(ndim) if dims is None else sorted(_wrap_dim(d, ndim) for d in dims)
    for dim in wanted:
        array = as_array(_unsqueeze(as_array(array), dim))
    return array


def logsumexp_backward(
    grad: np.ndarray,
    self: np.ndarray,
    result: np.ndarray,
    dim: Sequence[int],
    keepdim: bool,
) -> np.ndarray:
    """grad * softmax(self) over the reduced dims."""
    if not keepdim and self.ndim != 0:
        grad = _unsqueeze_multiple(grad, dim, self.ndim)
        result = _unsqueeze_multiple(result, dim, self.ndim)
    return mul(grad, conj(exp(sub(self, result))))
