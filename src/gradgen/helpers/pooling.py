"""Formula helpers of the pooling family."""

from __future__ import annotations

from ..tensor import Tensor

__all__ = ["max_pool_double_backward"]


def max_pool_double_backward(grad: Tensor, indices: Tensor, dim: int) -> Tensor:
    """The gradient of a max pooling backward for its grad_output: `grad` (shaped like
    the pooled input) read at the saved flat indices of the last `dim` dimensions."""
    if indices.dim() < dim:
        raise RuntimeError(
            f"max_pool_double_backward: expected indices with at least {dim} "
            f"dimensions, but got {indices.dim()}"
        )
    flat = grad.flatten(-dim)
    picked = flat.gather(-1, indices.flatten(-dim))
    return picked.view_as(indices)
