"""Composites of the indexing family: backwards of index_select and gather."""

from __future__ import annotations


from ..tensor import Tensor
from ._common import _zeros

__all__ = ["index_select_backward", "gather_backward"]


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
