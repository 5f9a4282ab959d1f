"""Array twins of the reductions, expand and the reduction helpers a formula calls."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...numpy_kernels import (
    _wrap_dim,
    expand as _expand,
    reduce_sum,
    sum_to_size as _sum_to_size,
    unsqueeze as _unsqueeze,
)
from ._common import as_array
from .elementwise import mul

__all__ = [
    "sum",
    "expand",
    "expand_as",
    "sum_to_size",
    "sum_to",
    "sum_backward",
    "mean_backward",
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
    return as_array(_expand(as_array(self), size))


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
