"""Formula helpers of the sparse family: embedding."""

from __future__ import annotations


import numpy as np

from ..tensor import Tensor

__all__ = ["embedding_dense_double_backward"]


def embedding_dense_double_backward(
    grad: Tensor, indices: Tensor, padding_idx: int, scale_grad_by_freq: bool = False
) -> Tensor:
    """The derivative of embedding_dense_backward with respect to grad_output: the rows
    of grad that the indices name (zero for padding_idx), scaled by 1 / count when
    scale_grad_by_freq, as the kernel scales them."""
    flat = indices.reshape(-1)
    rows = grad.index_select(0, flat)
    if scale_grad_by_freq:
        values = flat._data.astype(np.int64)
        counts = np.bincount(values, minlength=grad.shape[0])
        scale = (1.0 / counts[values]).astype(grad._data.dtype).reshape(-1, 1)
        rows = rows * Tensor(scale)
    if padding_idx >= 0:
        rows = rows.masked_fill((flat == padding_idx).reshape(-1, 1), 0)
    return rows.view(tuple(indices.shape) + (-1,))
