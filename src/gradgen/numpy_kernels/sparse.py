"""Sparse kernels (torch.nn.functional's sparse functions): embedding and one_hot."""

from __future__ import annotations


import numpy as np

from ..dtypes import spelling

__all__ = ["embedding", "embedding_dense_backward", "one_hot"]


def _check_indices(indices: np.ndarray, argument: int, function: str) -> None:
    """PyTorch's checkScalarTypes: embedding indices are int64 or int32."""
    if indices.dtype not in (np.int64, np.int32):
        name = spelling(indices).tensor_type
        raise RuntimeError(
            f"Expected tensor for argument #{argument} 'indices' to have one of the "
            f"following scalar types: Long, Int; but got {name} instead (while checking "
            f"arguments for {function})"
        )


def embedding(
    weight: np.ndarray,
    indices: np.ndarray,
    padding_idx: int,
    scale_grad_by_freq: bool,
    sparse: bool,
) -> np.ndarray:
    """The rows of `weight` that `indices` pick: shape indices.shape + (dim,)."""
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(indices, 1, "embedding")
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return np.take(weight, indices.astype(np.int64), axis=0)


def embedding_dense_backward(
    grad_output: np.ndarray,
    indices: np.ndarray,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> np.ndarray:
    """The gradient of `embedding` for its weight: each row of grad_output added into
    the row its index names (none for padding_idx), divided by how often that index
    occurs when scale_grad_by_freq."""
    _check_indices(indices, 2, "embedding_backward")
    flat = indices.reshape(-1).astype(np.int64)
    if flat.size and (flat.min() < 0 or flat.max() >= num_weights):
        raise IndexError("index out of range in self")
    rows = grad_output.reshape((flat.size,) + grad_output.shape[indices.ndim :])
    result = np.zeros((num_weights,) + rows.shape[1:], grad_output.dtype)
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        scale = 1.0 / counts[flat]
        rows = rows * scale.reshape((-1,) + (1,) * (rows.ndim - 1)).astype(rows.dtype)
    keep = flat != padding_idx
    np.add.at(result, flat[keep], rows[keep])
    return result


def one_hot(self: np.ndarray, num_classes: int) -> np.ndarray:
    """int64 zeros of shape self.shape + (num_classes,) with a 1 at each value;
    num_classes=-1 means one more than the largest value."""
    if self.dtype != np.int64:
        raise RuntimeError(
            "one_hot is only applicable to index tensor of type LongTensor."
        )
    if self.size == 0:
        if num_classes <= 0:
            raise RuntimeError(
                "Can not infer total number of classes from empty tensor."
            )
        return np.zeros(self.shape + (num_classes,), np.int64)
    if self.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(self.max()) + 1
    elif not num_classes > self.max():
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (self[..., None] == np.arange(num_classes)).astype(np.int64)
