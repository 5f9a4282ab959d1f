"""Composites of the sparse family: embedding's backward."""

from __future__ import annotations


from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = ["embedding_backward"]


def embedding_backward(
    grad: Tensor,
    indices: Tensor,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
    sparse: bool,
) -> Tensor:
    """embedding's weight gradient: embedding_dense_backward (gradgen has no sparse
    tensors, so sparse=True is NotImplementedError)."""
    if sparse:
        raise NotImplementedError(
            "embedding(sparse=True): gradgen has no sparse tensors for the gradient"
        )
    return ops.embedding_dense_backward(
        grad, indices, num_weights, padding_idx, scale_grad_by_freq
    )
