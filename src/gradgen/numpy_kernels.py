"""numpy functions that native_functions.yaml kernel expressions may call.

A kernel expression is one Python expression over numpy arrays; where one numpy call
does not say it (negative sizes in `expand`, summing to a shape), the helper is here.
`__all__` is the list the generator allows in kernel expressions (it reads it without
importing this module).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["permute", "expand", "sum_to_size", "to_copy"]


def permute(self: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """A view with the dimensions reordered (PyTorch's checks and messages)."""
    if len(dims) != self.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match "
            "the length of the desired ordering of dimensions i.e. input.dim() = "
            f"{self.ndim} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = [d + self.ndim if d < 0 else d for d in dims]
    if sorted(wrapped) != list(range(self.ndim)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(self, wrapped)


def expand(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """A read-only broadcast view of `self` at `size`; -1 keeps a dimension's size."""
    if len(size) < self.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(self.shape)}}}, size={list(size)}): the "
            "number of sizes provided "
            f"({len(size)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({self.ndim})"
        )
    leading = len(size) - self.ndim
    target = [
        self.shape[i - leading] if extent == -1 and i >= leading else extent
        for i, extent in enumerate(size)
    ]
    return np.broadcast_to(self, target)


def sum_to_size(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """Sum `self` down to `size`, which must broadcast to `self`'s shape."""
    size = tuple(size)
    leading = self.ndim - len(size)
    if leading < 0 or any(
        s != 1 and s != self.shape[leading + i] for i, s in enumerate(size)
    ):
        raise RuntimeError(
            f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}."
        )
    axes = tuple(range(leading)) + tuple(
        leading + i for i, s in enumerate(size) if s == 1 and self.shape[leading + i] != 1
    )
    if not axes:
        return self
    return np.sum(self, axis=axes, keepdims=True).reshape(size)


def to_copy(self: np.ndarray, dtype: Any) -> np.ndarray:
    """A copy, converted to `dtype` (a gradgen dtype) when one is given."""
    if dtype is None:
        return self.copy()
    return self.astype(dtype.numpy)
