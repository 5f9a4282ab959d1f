"""Composites of the indexing family: backwards of index_select and gather, and
take_along_dim (a gather over broadcast operands)."""

from __future__ import annotations

import numpy as np

from ..dtypes import spelling
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor
from ._common import _zeros

__all__ = ["index_select_backward", "gather_backward", "take_along_dim"]


def index_select_backward(
    grad: Tensor, self_sizes: tuple[int, ...], dim: int, index: Tensor
) -> Tensor:
    """Zeros of the input's shape with the selected slices' gradients added back."""
    return _zeros(self_sizes, grad).index_add(dim, index, grad)


def gather_backward(
    grad: Tensor, self: Tensor, dim: int, index: Tensor, sparse_grad: bool
) -> Tensor:
    """Zeros of the input's shape with the gathered elements' gradients added back."""
    if sparse_grad:
        raise RuntimeError(
            "gather(..., sparse_grad=True) needs a sparse gradient, and gradgen has no "
            "sparse tensors; use sparse_grad=False"
        )
    return _zeros(tuple(self.shape), grad).scatter_add(dim, index, grad)


def _long(indices: Tensor) -> Tensor:
    """take_along_dim's indices, which must be int64."""
    if indices.dtype.numpy != np.int64:
        raise RuntimeError(
            "torch.take_along_dim(): dtype of indices should be Long but got "
            f"{spelling(indices).scalar_type}"
        )
    return indices


def take_along_dim(self: Tensor, indices: Tensor, dim: int | None) -> Tensor:
    """self's values at `indices` along dim, the other dimensions of both broadcast
    together (numpy's take_along_axis); without dim, of self flattened."""
    if dim is None:
        return self.reshape(-1).gather(0, _long(indices).reshape(-1))
    if self.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {self.dim()} dimensions for input, and "
            f"{indices.dim()} dimensions for indices"
        )
    _long(indices)
    axis = _wrap_dim(dim, self.dim())
    sizes = list(self.shape)
    if sizes:
        sizes[axis] = indices.shape[axis]
    shape = list(np.broadcast_shapes(tuple(sizes), tuple(indices.shape)))
    indices = indices.expand(shape)
    if shape:
        shape[axis] = self.shape[axis]
    return self.expand(shape).gather(axis, indices)
