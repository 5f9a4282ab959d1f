"""Formula helpers of the indexing family."""

from __future__ import annotations

from collections.abc import Sequence

from ..tensor import Tensor

__all__ = ["index_backward", "masked_fill_backward"]


def masked_fill_backward(grad: Tensor, mask: Tensor) -> Tensor:
    """The gradient of masked_fill's value: the sum of grad where mask is set."""
    return grad.masked_fill(mask.eq(False), 0).sum()


def index_backward(
    zeros: Tensor, indices: Sequence[Tensor | None], grad: Tensor
) -> Tensor:
    """The gradient of `self[indices]`: grad added into zeros of self's shape at the
    indexed places (an element indexed twice gets both gradients)."""
    return zeros.index_put(indices, grad, True)
